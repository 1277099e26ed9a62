/**
 * Numbers from one arm: token totals and their cost, the fold events (the session's fold records
 * placed at the request that first carried them), and the two arms lined up turn by turn.
 */
import type { SessionEntry } from "../e2e/harness/index.ts";
import type { ArmResult, RequestRecord } from "./arm.ts";

/** US dollars per million tokens, Anthropic Sonnet-class list prices. */
export const PRICES = { input: 3, cacheWrite: 3.75, cacheRead: 0.3, output: 15 } as const;

export interface Totals {
	requests: number;
	/** Prompt tokens sent: uncached input + cache read + cache write, summed over requests. */
	prompt: number;
	input: number;
	cacheRead: number;
	cacheWrite: number;
	output: number;
	peak: number;
	cost: { input: number; cacheRead: number; cacheWrite: number; output: number; total: number };
}

export function promptOf(r: RequestRecord): number {
	return r.usage.input + r.usage.cacheRead + r.usage.cacheWrite;
}

export function totals(requests: readonly RequestRecord[]): Totals {
	const t = { requests: requests.length, prompt: 0, input: 0, cacheRead: 0, cacheWrite: 0, output: 0, peak: 0 };
	for (const r of requests) {
		t.prompt += promptOf(r);
		t.input += r.usage.input;
		t.cacheRead += r.usage.cacheRead;
		t.cacheWrite += r.usage.cacheWrite;
		t.output += r.usage.output;
		t.peak = Math.max(t.peak, promptOf(r));
	}
	const usd = (tokens: number, price: number) => (tokens * price) / 1_000_000;
	const cost = {
		input: usd(t.input, PRICES.input),
		cacheRead: usd(t.cacheRead, PRICES.cacheRead),
		cacheWrite: usd(t.cacheWrite, PRICES.cacheWrite),
		output: usd(t.output, PRICES.output),
		total: 0,
	};
	cost.total = cost.input + cost.cacheRead + cost.cacheWrite + cost.output;
	return { ...t, cost };
}

interface LayerBlock {
	code: string;
	toolCallId?: string;
	toolName?: string;
	tokens: number;
}

export interface Layer {
	seq: number;
	reason: string;
	usageBefore: number;
	usageAfter: number;
	blocks: LayerBlock[];
}

/** The fold records context-fold appended to the session file, in order. */
export function layersOf(entries: readonly SessionEntry[]): Layer[] {
	return entries
		.filter((e) => e.type === "custom" && e.customType === "context-fold")
		.map((e) => e.data as Layer & { type?: string })
		.filter((d) => d.type === "layer");
}

export interface FoldEvent extends Layer {
	/** 1-based position of the first request that carried this layer's digests, or 0 if none did. */
	request: number;
	turn: string;
	/** Prompt tokens of the request before it and of the request itself, as reported. */
	promptBefore: number;
	promptAfter: number;
	/** Cache write reported for that request: the re-prefill the fold caused. */
	cacheWrite: number;
}

export function foldEvents(arm: ArmResult): FoldEvent[] {
	return layersOf(arm.entries).map((layer) => {
		const codes = new Set(layer.blocks.map((b) => b.code));
		const at = arm.requests.findIndex((r) => r.codes.some((c) => codes.has(c)));
		const req = arm.requests[at];
		const prev = arm.requests[at - 1];
		return {
			...layer,
			request: at + 1,
			turn: req?.turn ?? "?",
			promptBefore: prev ? promptOf(prev) : 0,
			promptAfter: req ? promptOf(req) : 0,
			cacheWrite: req?.usage.cacheWrite ?? 0,
		};
	});
}

export interface Column {
	turn: string;
	with?: number;
	without?: number;
	/** Sequence number of the fold event this request carried first. */
	fold?: number;
}

/** Requests of both arms side by side, matched by the turn that answered them. */
export function alignArms(withArm: ArmResult, withoutArm: ArmResult, events: readonly FoldEvent[]): Column[] {
	const without = new Map(withoutArm.requests.map((r) => [r.turn, promptOf(r)]));
	const columns: Column[] = withArm.requests.map((r, i) => {
		const fold = events.find((e) => e.request === i + 1)?.seq;
		return { turn: r.turn, with: promptOf(r), without: without.get(r.turn), ...(fold !== undefined && { fold }) };
	});
	const seen = new Set(withArm.requests.map((r) => r.turn));
	for (const r of withoutArm.requests) if (!seen.has(r.turn)) columns.push({ turn: r.turn, without: promptOf(r) });
	return columns;
}
