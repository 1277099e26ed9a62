// Generated sessions for the simulate tests that need no traces: a tool loop of bash calls with
// outputs of a given size, answered by one model, with the usage an Anthropic-style provider reports
// (the previous prompt read from cache, the rest written) and, optionally, the cost it states.
import type { Prices } from "../../src/core/accounting.ts";

export interface ToolLoop {
	id?: string;
	provider?: string;
	model?: string;
	/** Tool calls before the final answer. */
	calls?: number;
	/** Characters of each tool output. */
	outputChars?: number;
	/** Tokens of system prompt and tools in every reported prompt. */
	overhead?: number;
	/** Add this many tokens to every reported prompt (a recording made in a larger window, say). */
	extraReported?: number;
	/** State usage.cost at these prices; no cost field when absent. */
	statedPrices?: Prices;
}

const T0 = Date.parse("2026-01-01T00:00:00Z");

/** A v3 session file's text. Deterministic: fixed ids and timestamps, one minute apart. */
export function toolLoopSession(o: ToolLoop = {}): string {
	const id = o.id ?? "5e551000-0000-4000-8000-000000000001";
	const provider = o.provider ?? "anthropic";
	const model = o.model ?? "claude-opus-4-5";
	const calls = o.calls ?? 12;
	const outputChars = o.outputChars ?? 8000;
	const overhead = o.overhead ?? 1000;
	const entries: object[] = [
		{ type: "session", version: 3, id, timestamp: new Date(T0).toISOString(), cwd: "/work/demo" },
	];
	let parent: string | null = null;
	let n = 0;
	let chars = 0;
	let previousPrompt = 0;
	const add = (message: Record<string, unknown>, size: number) => {
		n++;
		const at = T0 + n * 60_000;
		const entryId = `e${String(n).padStart(4, "0")}`;
		entries.push({
			type: "message",
			id: entryId,
			parentId: parent,
			timestamp: new Date(at).toISOString(),
			message: { ...message, timestamp: at },
		});
		parent = entryId;
		chars += size;
	};
	const answer = (content: object[], size: number, stop: string) => {
		const prompt = overhead + Math.ceil(chars / 4) + (o.extraReported ?? 0);
		const usage: Record<string, unknown> = {
			input: 0,
			output: 50,
			cacheRead: previousPrompt,
			cacheWrite: prompt - previousPrompt,
		};
		const p = o.statedPrices;
		if (p !== undefined) {
			const cost = {
				input: 0,
				output: (50 * p.output) / 1e6,
				cacheRead: (previousPrompt * p.cacheRead) / 1e6,
				cacheWrite: ((prompt - previousPrompt) * p.cacheWrite) / 1e6,
			};
			usage.cost = { ...cost, total: cost.output + cost.cacheRead + cost.cacheWrite };
		}
		previousPrompt = prompt;
		add({ role: "assistant", content, api: "anthropic-messages", provider, model, usage, stopReason: stop }, size);
	};
	add({ role: "user", content: [{ type: "text", text: "run the checks one by one" }] }, 25);
	for (let i = 0; i < calls; i++) {
		const callId = `call_${i}`;
		const command = `./check ${i}`;
		answer([{ type: "toolCall", id: callId, name: "bash", arguments: { command } }], 40, "toolUse");
		const line = `check ${i}: ok ${"x".repeat(60)}\n`;
		const text = line.repeat(Math.ceil(outputChars / line.length)).slice(0, outputChars);
		add(
			{ role: "toolResult", toolCallId: callId, toolName: "bash", content: [{ type: "text", text }], isError: false },
			text.length,
		);
	}
	answer([{ type: "text", text: "all checks pass" }], 15, "stop");
	return `${entries.map((e) => JSON.stringify(e)).join("\n")}\n`;
}
