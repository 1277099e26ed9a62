/**
 * Real recorded Pi sessions (vendored in test/fixtures/traces, see test/helpers/traces.ts) turned into
 * the core's view, and simulated fold events over them: every `every` tool results fold together.
 */
import { readFileSync } from "node:fs";
import type { ViewBlock, ViewMessage } from "../../../src/core/blocks.ts";
import { countLines, deriveCode, utf8Length } from "../../../src/core/digest.ts";
import type { MaskedBlock } from "../../../src/core/layers.ts";
import type { ExtractInput, SeedToolCall } from "../../../src/core/seed/extract.ts";
import { estimateTokens } from "../../../src/core/tokens.ts";
import { sha256 } from "../../helpers/session.ts";
import { TRACE_FILES, tracePath } from "../../helpers/traces.ts";

export const LARGE = tracePath(TRACE_FILES.largeV3);
export const COMPACTED = tracePath(TRACE_FILES.compactV3);

export { sha256 };

interface RawPart {
	type?: string;
	text?: string;
	thinking?: string;
	id?: string;
	name?: string;
	arguments?: unknown;
}

export interface Trace {
	messages: ViewMessage[];
	/** Pi's compactions, in order: the first message kept by each. */
	compactions: Array<{ firstKeptEntryId: string; at: number }>;
	calls: SeedToolCall[];
	/** Bytes of tool-result text in the trace. */
	resultChars: number;
}

/** The session's message entries as ViewMessages, plus every structured tool call. */
export function readTrace(path: string): Trace {
	const messages: ViewMessage[] = [];
	const calls: SeedToolCall[] = [];
	const compactions: Trace["compactions"] = [];
	let resultChars = 0;
	for (const line of readFileSync(path, "utf8").split("\n")) {
		if (line.trim() === "") continue;
		const entry = JSON.parse(line) as {
			type: string;
			id: string;
			timestamp: string;
			firstKeptEntryId?: string;
			message?: Record<string, unknown>;
		};
		if (entry.type === "compaction" && entry.firstKeptEntryId !== undefined) {
			compactions.push({ firstKeptEntryId: entry.firstKeptEntryId, at: Date.parse(entry.timestamp) });
		}
		if (entry.type !== "message" || entry.message === undefined) continue;
		const m = entry.message;
		const blocks: ViewBlock[] = [];
		const content = typeof m.content === "string" ? [{ type: "text", text: m.content }] : (m.content as RawPart[]);
		for (const part of content ?? []) {
			if (part.type === "text") blocks.push({ kind: "text", text: part.text ?? "" });
			else if (part.type === "thinking") blocks.push({ kind: "thinking", text: part.thinking ?? "" });
			else if (part.type === "toolCall") {
				blocks.push({ kind: "toolCall", text: JSON.stringify(part.arguments) + (part.name ?? "") });
				calls.push({ toolCallId: part.id ?? "", name: part.name ?? "", args: part.arguments });
			} else if (part.type === "image") blocks.push({ kind: "image", text: "" });
			else blocks.push({ kind: "other", text: JSON.stringify(part) });
		}
		const view: ViewMessage = {
			role: String(m.role),
			entryId: entry.id,
			timestamp: typeof m.timestamp === "number" ? m.timestamp : 0,
			blocks,
		};
		if (typeof m.toolName === "string") view.toolName = m.toolName;
		if (typeof m.toolCallId === "string") view.toolCallId = m.toolCallId;
		if (view.role === "toolResult") for (const b of blocks) resultChars += b.text.length;
		messages.push(view);
	}
	return { messages, calls, compactions, resultChars };
}

export function maskBlock(m: ViewMessage, blockIndex: number, taken: Set<string>): MaskedBlock {
	const text = (m.blocks[blockIndex] as ViewBlock).text;
	const code = deriveCode(sha256, m.entryId as string, blockIndex, taken);
	taken.add(code);
	return {
		code,
		entryId: m.entryId as string,
		blockIndex,
		kind: m.role === "toolResult" ? "toolResult" : "thinking",
		...(m.toolName !== undefined && { toolName: m.toolName }),
		...(m.toolCallId !== undefined && { toolCallId: m.toolCallId }),
		sha256: sha256(text),
		chars: text.length,
		bytes: utf8Length(text),
		lines: countLines(text),
		tokens: estimateTokens(text.length),
		digest: "",
	};
}

/**
 * One extractor input per simulated fold: each run of `every` tool results folds together, with the
 * assistant messages that called them and the user messages since the previous fold.
 */
export function simulateFolds(trace: Trace, every: number, withCalls: boolean): ExtractInput[] {
	const inputs: ExtractInput[] = [];
	const taken = new Set<string>();
	let pending: ViewMessage[] = [];
	let masked: MaskedBlock[] = [];
	let results = 0;
	const flush = () => {
		if (masked.length === 0) return;
		const ids = new Set(pending.flatMap((m) => (m.role === "toolResult" ? [m.toolCallId] : [])));
		inputs.push({
			kind: "fold",
			seq: inputs.length + 1,
			at: pending[pending.length - 1]?.timestamp ?? 0,
			messages: pending,
			masked,
			...(withCalls && { calls: trace.calls.filter((c) => ids.has(c.toolCallId)) }),
			hash: sha256,
		});
		pending = [];
		masked = [];
	};
	for (const m of trace.messages) {
		if (m.role === "user" || m.role === "assistant") pending.push(m);
		if (m.role !== "toolResult") continue;
		pending.push(m);
		m.blocks.forEach((b, j) => {
			if (b.kind === "text" && b.text.length > 0) masked.push(maskBlock(m, j, taken));
		});
		if (++results % every === 0) flush();
	}
	flush();
	return inputs;
}

/** One extractor input per compaction of the trace: the messages it removed (nothing was folded). */
export function compactionInputs(trace: Trace): ExtractInput[] {
	const inputs: ExtractInput[] = [];
	let from = 0;
	for (const c of trace.compactions) {
		const to = trace.messages.findIndex((m) => m.entryId === c.firstKeptEntryId);
		if (to < from) continue;
		const removed = trace.messages.slice(from, to);
		const ids = new Set(removed.flatMap((m) => (m.role === "toolResult" ? [m.toolCallId] : [])));
		inputs.push({
			kind: "compaction",
			seq: inputs.length + 1,
			at: c.at,
			messages: removed,
			calls: trace.calls.filter((call) => ids.has(call.toolCallId)),
			hash: sha256,
		});
		from = to;
	}
	return inputs;
}
