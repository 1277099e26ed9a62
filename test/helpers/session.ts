/**
 * Synthetic sessions for core tests: deterministic text, fixed timestamps, and a tiny provider model
 * that reports the prompt it received as usage, so the ladder runs the way it does inside Pi.
 */
import { createHash } from "node:crypto";
import type { ViewMessage } from "../../src/core/blocks.ts";
import type { Hash } from "../../src/core/digest.ts";
import { addRecord, emptyIndex, type MaskIndex } from "../../src/core/layers.ts";
import { type FoldPlan, planFold } from "../../src/core/plan.ts";
import { DEFAULT_SETTINGS, type Settings } from "../../src/core/settings.ts";
import { estimateTokens } from "../../src/core/tokens.ts";

export const sha256: Hash = (text) => createHash("sha256").update(text, "utf8").digest("hex");

export const T0 = Date.UTC(2025, 0, 1);

/** Fold at the first chance: a tiny threshold and step, no protected tail. */
/**
 * The fold points 0.1.0 shipped with, pinned by hand (the fixed ladder, policy/fixed.ts). Tests of
 * fold mechanics (what a fold does, recall, restarts) pin them so that folds come at known requests;
 * the priced rule that decides by default has its own tests (test/core/price.test.ts and the e2e
 * priced-rule tests).
 */
export const FIXED_SETTINGS: Settings = {
	...DEFAULT_SETTINGS,
	providerCacheIdleMinutes: {},
	foldAt: 0.3,
	foldStep: 0.06,
	coldFoldAt: 0.25,
	fixedFolds: true,
};

export const EAGER_SETTINGS: Settings = {
	...FIXED_SETTINGS,
	foldAt: 0.01,
	coldFoldAt: 0.01,
	foldStep: 0.001,
	tail: 0,
};

/** Deterministic filler of about `tokens` tokens, with a line structure like real tool output. */
export function filler(tokens: number, seed: string, opts: { error?: string } = {}): string {
	const lines: string[] = [];
	let chars = 0;
	let i = 0;
	while (chars < tokens * 4) {
		const line = `${seed} line ${i} lorem ipsum dolor sit amet ${(i * 7919) % 1000}`;
		lines.push(line);
		chars += line.length + 1;
		i++;
		if (opts.error && i === 3) lines.push(opts.error);
	}
	return lines.join("\n");
}

export function user(id: string, text: string, ts: number): ViewMessage {
	return { role: "user", entryId: id, timestamp: ts, blocks: [{ kind: "text", text }] };
}

export function assistantCall(id: string, ts: number, usage?: ViewMessage["usage"], thinking?: string): ViewMessage {
	const blocks: ViewMessage["blocks"] = [];
	if (thinking !== undefined) blocks.push({ kind: "thinking", text: thinking });
	blocks.push({ kind: "toolCall", text: '{"command":"make"}bash' });
	return { role: "assistant", entryId: id, timestamp: ts, blocks, ...(usage && { usage }), stopReason: "toolUse" };
}

export function toolResult(id: string, ts: number, text: string, callId = `call-${id}`): ViewMessage {
	return {
		role: "toolResult",
		entryId: id,
		timestamp: ts,
		toolName: "bash",
		toolCallId: callId,
		callSummary: "make test",
		blocks: [{ kind: "text", text }],
	};
}

/** Apply a plan's substitutions to a copy of the view: what the provider would receive. */
export function outgoing(view: readonly ViewMessage[], plan: FoldPlan): ViewMessage[] {
	const out = view.map((m) => ({ ...m, blocks: m.blocks.map((b) => ({ ...b })) }));
	for (const s of plan.substitutions) {
		const b = out[s.messageIndex]?.blocks[s.blockIndex];
		if (b) {
			b.text = s.text;
			if (s.dropSignature) delete b.signed;
		}
	}
	return out;
}

export function viewTokens(view: readonly ViewMessage[]): number {
	let t = 0;
	for (const m of view) {
		t += 4;
		for (const b of m.blocks) t += b.kind === "image" ? 1600 : estimateTokens(b.text.length);
	}
	return t;
}

export interface GrowthRun {
	plans: FoldPlan[];
	prompts: number[];
	index: MaskIndex;
	view: ViewMessage[];
	requests: ViewMessage[][];
}

/**
 * Drive a tool chain: each turn adds an assistant tool call and a result of `resultTokens`.
 * The "provider" reports the outgoing prompt size (plus a fixed system prompt) as usage, with a
 * cache read whenever `cache` is set.
 */
export function runGrowth(opts: {
	turns: number;
	resultTokens: number | ((turn: number) => number);
	window: number;
	settings?: Partial<Settings>;
	cache?: boolean;
	systemTokens?: number;
	errorEvery?: number;
}): GrowthRun {
	const settings: Settings = { ...FIXED_SETTINGS, ...opts.settings };
	const index = emptyIndex();
	const view: ViewMessage[] = [user("u0", "please fix the build", T0)];
	const plans: FoldPlan[] = [];
	const prompts: number[] = [];
	const requests: ViewMessage[][] = [];
	const system = opts.systemTokens ?? 1000;
	for (let turn = 0; turn <= opts.turns; turn++) {
		const plan = planFold({
			messages: view,
			index,
			settings,
			window: opts.window,
			everCacheRead: opts.cache ?? true,
			hash: sha256,
		});
		if (plan.layer) addRecord(index, plan.layer);
		plans.push(plan);
		const sent = outgoing(view, plan);
		requests.push(sent);
		const prompt = viewTokens(sent) + system;
		prompts.push(prompt);
		if (turn === opts.turns) break;
		const ts = T0 + (turn + 1) * 1000;
		const cacheRead = opts.cache === false ? 0 : Math.floor(prompt * 0.8);
		view.push(assistantCall(`a${turn}`, ts, { input: prompt - cacheRead, cacheRead, cacheWrite: 0, output: 20 }));
		const size = typeof opts.resultTokens === "function" ? opts.resultTokens(turn) : opts.resultTokens;
		const err = opts.errorEvery && turn % opts.errorEvery === 0 ? `error: unique failure ${turn}` : undefined;
		view.push(toolResult(`r${turn}`, ts + 1, filler(size, `t${turn}`, err ? { error: err } : {})));
	}
	return { plans, prompts, index, view, requests };
}
