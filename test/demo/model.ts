/**
 * The scripted "model" behind the fake OpenAI endpoint: it plays the session's turns in order. It
 * reads what Pi actually sent where a real model would: recall turns happen only when recall_folded
 * is on offer, the code to recall is parsed from the search result, and a quoted line is copied
 * from whatever tool output holds it (the recall answer when folded, the original log when not).
 */
import {
	DEFAULT_SUMMARY,
	httpError,
	type RecordedRequest,
	type Reply,
	type Script,
	text,
	toolCalls,
	toolResultsOf,
} from "../e2e/harness/index.ts";
import { type Phase, QUOTE, type Turn } from "./story.ts";

export const RECALL_TOOL = "recall_folded";

export interface Served {
	/** Index among all requests the fake received. */
	request: number;
	turn: string;
	phase: number;
}

export interface DemoModel {
	script: Script;
	/** Which turn answered which request, in order. */
	served: Served[];
}

function offers(req: RecordedRequest, tool: string): boolean {
	return (req.body.tools ?? []).some((t) => t.function.name === tool);
}

/** The text from `needle` to the end of its line, in the newest tool output that holds it. */
function findQuote(req: RecordedRequest, needle: string): string | undefined {
	const results = toolResultsOf(req);
	for (let i = results.length - 1; i >= 0; i--) {
		for (const line of (results[i]?.text ?? "").split("\n")) {
			const at = line.indexOf(needle);
			if (at >= 0) return line.slice(at);
		}
	}
	return undefined;
}

function fill<T>(value: T, quote: string): T {
	if (typeof value === "string") return value.split(QUOTE).join(quote) as T;
	if (Array.isArray(value)) return value.map((v) => fill(v, quote)) as T;
	if (value !== null && typeof value === "object") {
		return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fill(v, quote)])) as T;
	}
	return value;
}

function reply(turn: Turn, req: RecordedRequest): Reply {
	switch (turn.kind) {
		case "answer": {
			const quote = turn.quote ? (findQuote(req, turn.quote) ?? "(line not found)") : "";
			return text(fill(turn.text, quote));
		}
		case "calls": {
			const quote = turn.quote ? (findQuote(req, turn.quote) ?? "(line not found)") : "";
			const calls = turn.calls.map((c) => ({ id: c.id, name: c.name, args: fill(c.args, quote) }));
			return toolCalls(calls, turn.say !== undefined ? { text: turn.say } : {});
		}
		case "recall-search":
			return toolCalls([{ id: turn.callId, name: RECALL_TOOL, args: { search: turn.needle } }], {
				text: "That CI log was folded out of my context a while ago. Searching the folded blocks for the build id.",
			});
		case "recall-code": {
			const last = toolResultsOf(req).at(-1)?.text ?? "";
			const code = /\{#([0-9a-f]{6,64})\}/.exec(last)?.[1] ?? "unknown";
			return toolCalls([{ id: turn.callId, name: RECALL_TOOL, args: { code } }], {
				text: `It is in {#${code}}. Reading the original back.`,
			});
		}
	}
}

export function demoModel(phases: readonly Phase[]): DemoModel {
	const turns = phases.flatMap((p, phase) => p.turns.map((turn) => ({ turn, phase })));
	const served: Served[] = [];
	let next = 0;
	const script: Script = (req) => {
		if (req.isSummaryRequest) return text(DEFAULT_SUMMARY);
		for (;;) {
			const item = turns[next];
			if (!item) return httpError(500, `demo model: script exhausted after ${turns.length} turns`);
			next++;
			const { turn, phase } = item;
			if ((turn.kind === "recall-search" || turn.kind === "recall-code") && !offers(req, RECALL_TOOL)) continue;
			served.push({ request: req.index, turn: turn.id, phase });
			return reply(turn, req);
		}
	};
	return { script, served };
}
