// Shared pieces for end-to-end tests of context-fold itself: the built bundle, big deterministic
// tool outputs, and readers for what the fake model received.
import { afterEach } from "bun:test";
import { join } from "node:path";
import {
	type ChatMessage,
	DEFAULT_SUMMARY,
	httpError,
	type RecordedRequest,
	type Reply,
	type Scenario,
	type ScenarioOptions,
	type Script,
	startScenario,
	text,
} from "./harness/index.ts";

/** Tests load the shipped bundle, rebuilt when the source is newer (npm test builds first anyway). */
export { ensureBundle } from "../helpers/build.ts";

export const REPO = join(import.meta.dir, "../..");

/**
 * A bash command printing about `tokens` tokens (4 chars each) of distinct lines, with a unique
 * marker line and one error line, so a test can find every byte of it later.
 */
export function bigOutputCommand(tag: string, tokens: number): string {
	const lines = Math.max(1, Math.round((tokens * 4) / 44));
	return `awk 'BEGIN{for(i=1;i<=${lines};i++) printf "%s line %05d lorem ipsum dolor sit amet\\n", "${tag}", i; print "error: unique failure in ${tag}"; print "marker-${tag}-END"}'`;
}

const MARKER = /^\{#([0-9a-f]{6,64}) FOLDED\}/;

export function contentText(content: ChatMessage["content"]): string {
	if (typeof content === "string") return content;
	if (!Array.isArray(content)) return "";
	return content.map((b) => (b.type === "text" ? (b.text ?? "") : "")).join("");
}

/** Codes of every folded tool result in a request, in message order. */
export function foldedCodes(req: RecordedRequest): string[] {
	const codes: string[] = [];
	for (const m of req.body.messages) {
		if (m.role !== "tool") continue;
		const hit = MARKER.exec(contentText(m.content));
		if (hit) codes.push(hit[1] as string);
	}
	return codes;
}

/** Indices (among turn requests) at which a new fold code first appeared. */
export function foldEvents(requests: readonly RecordedRequest[]): number[] {
	const seen = new Set<string>();
	const events: number[] = [];
	requests.forEach((req, i) => {
		const codes = foldedCodes(req);
		if (codes.some((c) => !seen.has(c))) events.push(i);
		for (const c of codes) seen.add(c);
	});
	return events;
}

/** Rough prompt tokens of a request (characters / 4 of its JSON messages). */
export function promptTokens(req: RecordedRequest): number {
	return Math.ceil(JSON.stringify(req.body.messages).length / 4);
}

/** A request's messages as JSON strings, for byte comparisons. */
export function messageBytes(req: RecordedRequest): string[] {
	return req.body.messages.map((m) => JSON.stringify(m));
}

/** Like the harness's replySequence, but a step may compute its reply from the request it answers. */
export function dynamicSequence(steps: Array<Reply | ((req: RecordedRequest) => Reply)>): Script {
	let next = 0;
	return (req) => {
		if (req.isSummaryRequest) return text(DEFAULT_SUMMARY);
		const step = steps[next++];
		if (step === undefined) return httpError(500, "script exhausted");
		return typeof step === "function" ? step(req) : step;
	};
}

/** Text of the newest tool result in a request (what a tool just answered). */
export function lastToolText(req: RecordedRequest): string {
	const tools = req.body.messages.filter((m) => m.role === "tool");
	return contentText(tools.at(-1)?.content);
}

/** The first `{#code}` a recall/search answer names. */
export function firstCodeIn(textValue: string): string {
	const m = /\{#([0-9a-f]{6,64})\}/.exec(textValue);
	if (!m) throw new Error(`no code in: ${textValue.slice(0, 300)}`);
	return m[1] as string;
}

/**
 * Scenarios (fake model + sandbox) created through the returned function are disposed after each
 * test. Call once at the top of a test file.
 */
export function scenarioPool(): (options?: ScenarioOptions) => Promise<Scenario> {
	const live: Scenario[] = [];
	afterEach(async () => {
		for (const s of live.splice(0)) await s.dispose();
	});
	return async (options = {}) => {
		const s = await startScenario(options);
		live.push(s);
		return s;
	};
}
