/**
 * The floor: a computed lower bound for any masking policy. It takes the raw arm's requests (no
 * extension, no compaction: the whole trajectory as sent) and masks every block context-fold could
 * ever mask from the first request where it is eligible, using context-fold's own digests:
 * tool-result text and thinking of at least 256 tokens outside the protected tail and already
 * delivered to the model; the long argument values (INPUT_MIN_CHARS) of tool calls outside the tail,
 * before the newest user message, whose result was delivered; and superseded or duplicate results and
 * inputs (policy/superseded.ts, from the requests alone: chat messages carry no error flag, so the
 * "failure then success" rule is not applied) even inside the tail, once settled. Masking is free:
 * each request reads from cache everything the previous one sent (with today's masks applied
 * retroactively) and writes only what is new, except after a lifetime expiry, when it writes all of
 * it. No compaction, no tool declarations. `{ inputs: false }` gives the floor as it was before
 * inputs and stale blocks folded (results and thinking only).
 */

import { renderDigest } from "../../../src/core/digest.ts";
import { renderInputDigest } from "../../../src/core/input-digest.ts";
import { findLongValues } from "../../../src/core/inputs.ts";
import { foldGeometry } from "../../../src/core/policy/geometry.ts";
import { MIN_FOLD_TOKENS } from "../../../src/core/policy/select.ts";
import { findStaleBlocks, type ToolEvent } from "../../../src/core/policy/superseded.ts";
import { summarizeCall } from "../../../src/core/session/view.ts";
import { DEFAULT_SETTINGS } from "../../../src/core/settings.ts";
import { estimateTokens } from "../../../src/core/tokens.ts";
import { protectedTailStart } from "../../../src/core/usage.ts";
import { stableStringify } from "../../e2e/harness/cache-model.ts";
import type { ChatMessage } from "../../e2e/harness/requests.ts";
import { WINDOW } from "./arms.ts";
import type { RequestShape } from "./billing.ts";
import type { RequestRecord } from "./replay-model.ts";

interface Foldable {
	/** Serialized characters the digest saves on the wire. */
	savedChars: number;
	/** Tokens saved by context-fold's own estimate (block minus digest). */
	savedTokens: number;
	masked: boolean;
	/** A tool-call input (eligible only before the newest user message, once its result was delivered). */
	input?: boolean;
}

interface MessageInfo {
	chars: number;
	role: string;
	foldables: Foldable[];
	/** An assistant message's tool calls. */
	calls?: Array<{ id: string; name: string; args: unknown }>;
	/** A tool result: its call and text. */
	result?: { callId: string; text: string };
}

export interface FloorRecord extends RequestShape {
	k: number;
	/** context-fold-estimated tokens masked in this request. */
	maskedTokens: number;
	/** Blocks first masked at this request. */
	newlyMasked: number;
}

export class FloorTracker {
	readonly records: FloorRecord[] = [];
	readonly problems: string[] = [];
	private readonly messages: MessageInfo[] = [];
	private readonly calls = new Map<string, { name: string; args: unknown }>();
	private readonly tail: number;
	private maskedChars = 0;
	private maskedTokens = 0;
	private previousCount = 0;

	private readonly inputs: boolean;

	constructor(window = WINDOW, options: { inputs?: boolean } = {}) {
		this.tail = foldGeometry(DEFAULT_SETTINGS, window)?.tail ?? DEFAULT_SETTINGS.tail;
		this.inputs = options.inputs !== false;
	}

	observe(messages: ChatMessage[], record: RequestRecord): void {
		if (messages.length < this.messages.length) {
			this.problems.push(
				`request ${record.k}: ${messages.length} messages after ${this.messages.length}; not append-only`,
			);
			return;
		}
		for (let i = this.messages.length; i < messages.length; i++)
			this.messages.push(this.info(messages[i] as ChatMessage));
		let sum = 1;
		for (const m of this.messages) sum += m.chars + 1;
		const expected = record.toolsChars + Math.max(2, sum);
		if (expected !== record.chars) {
			this.problems.push(`request ${record.k}: ${record.chars} chars, expected ${expected} from its messages`);
		}

		// The protected tail, on the floor's own (masked) view, in context-fold's token estimate.
		const tokens = this.messages.map((m) => estimateTokens(m.chars - masked(m)));
		const protectedFrom = protectedTailStart(tokens, this.tail);
		let lastAssistant = -1;
		for (let i = this.messages.length - 1; i >= 0 && lastAssistant < 0; i--) {
			if (this.messages[i]?.role === "assistant") lastAssistant = i;
		}
		let lastUser = -1;
		for (let i = this.messages.length - 1; i >= 0 && lastUser < 0; i--) {
			if (this.messages[i]?.role === "user") lastUser = i;
		}
		let newly = 0;
		const delivered = Math.max(lastAssistant, 0);
		const end = Math.min(protectedFrom, delivered);
		const stale = this.inputs ? this.stale(Math.min(delivered, Math.max(lastUser, 0))) : new Set<number>();
		for (let i = 0; i < delivered; i++) {
			const inTail = i >= end;
			if (inTail && !stale.has(i)) continue;
			for (const f of (this.messages[i] as MessageInfo).foldables) {
				if (f.masked) continue;
				if (f.input === true && !(i < lastUser)) continue;
				f.masked = true;
				newly++;
				this.maskedChars += f.savedChars;
				this.maskedTokens += f.savedTokens;
			}
		}
		// Everything up to the previous request's messages is read back, masks applied retroactively.
		let prefix = record.toolsChars + 1;
		let maskedBelow = 0;
		for (let i = 0; i < this.previousCount; i++) {
			const m = this.messages[i] as MessageInfo;
			prefix += m.chars + 1;
			maskedBelow += masked(m);
		}
		const chars = record.chars - this.maskedChars;
		this.records.push({
			kind: "turn",
			k: record.k,
			t: record.t,
			chars,
			prefixChars: this.previousCount === 0 ? 0 : Math.min(chars, prefix - 1 - maskedBelow),
			outputTokens: record.outputTokens,
			maskedTokens: this.maskedTokens,
			newlyMasked: newly,
		});
		this.previousCount = this.messages.length;
	}

	/**
	 * Indices of messages holding a superseded or duplicate block (a result, or an assistant message
	 * with a stale call's inputs) among calls settled before `settledEnd`.
	 */
	private stale(settledEnd: number): Set<number> {
		const at = new Map<string, number>();
		const results = new Map<string, { i: number; text: string }>();
		this.messages.forEach((m, i) => {
			if (m.result) results.set(m.result.callId, { i, text: m.result.text });
		});
		const events: ToolEvent[] = [];
		this.messages.forEach((m, i) => {
			for (const c of m.calls ?? []) {
				const r = results.get(c.id);
				at.set(`a:${c.id}`, i);
				if (r) at.set(`r:${c.id}`, r.i);
				events.push({
					toolCallId: c.id,
					toolName: c.name,
					args: c.args,
					callEntryId: c.id,
					callBlockIndex: 0,
					...(r && { result: { entryId: c.id, text: r.text, isError: false } }),
					settled: r !== undefined && i < settledEnd && r.i < settledEnd,
				});
			}
		});
		const out = new Set<number>();
		for (const b of findStaleBlocks({ events })) {
			const i = at.get(`${b.block === "result" ? "r" : "a"}:${b.toolCallId}`);
			if (i !== undefined) out.add(i);
		}
		return out;
	}

	private info(m: ChatMessage): MessageInfo {
		const chars = stableStringify(m).length;
		const foldables: Foldable[] = [];
		if (m.role === "assistant") {
			const calls: NonNullable<MessageInfo["calls"]> = [];
			for (const c of m.tool_calls ?? []) {
				let args: unknown = c.function.arguments;
				try {
					args = JSON.parse(c.function.arguments);
				} catch {
					// Keep the raw string.
				}
				this.calls.set(c.id, { name: c.function.name, args });
				calls.push({ id: c.id, name: c.function.name, args });
				if (this.inputs) pushInputFoldables(foldables, c.function.name, args);
			}
			const thinking = m.reasoning_content;
			if (typeof thinking === "string") pushFoldable(foldables, thinking, "thinking");
			return { chars, role: m.role, foldables, calls };
		}
		if (m.role === "tool") {
			const call = this.calls.get(m.tool_call_id ?? "");
			const parts = typeof m.content === "string" ? [m.content] : (m.content ?? []).map((p) => p.text ?? "");
			const hasImage = Array.isArray(m.content) && m.content.some((p) => p.type !== "text");
			if (!hasImage) {
				for (const text of parts) {
					pushFoldable(foldables, text, "toolResult", call?.name, summarizeCall(call?.name, call?.args));
				}
			}
			return { chars, role: m.role, foldables, result: { callId: m.tool_call_id ?? "", text: parts.join("\n") } };
		}
		return { chars, role: m.role, foldables };
	}
}

function masked(m: MessageInfo): number {
	let n = 0;
	for (const f of m.foldables) if (f.masked) n += f.savedChars;
	return n;
}

function pushFoldable(
	out: Foldable[],
	text: string,
	kind: "toolResult" | "thinking",
	toolName?: string,
	callSummary?: string,
): void {
	const tokens = estimateTokens(text.length);
	if (tokens < MIN_FOLD_TOKENS) return;
	const { digest } = renderDigest({
		code: "000000",
		kind,
		text,
		...(toolName !== undefined && { toolName }),
		...(callSummary !== undefined && { callSummary }),
	});
	const digestTokens = estimateTokens(digest.length);
	if (digestTokens >= tokens) return;
	out.push({
		savedChars: JSON.stringify(text).length - JSON.stringify(digest).length,
		savedTokens: tokens - digestTokens,
		masked: false,
	});
}

/** A tool call's long argument values, each saving what its digest saves inside the arguments' JSON string. */
function pushInputFoldables(out: Foldable[], toolName: string, args: unknown): void {
	for (const v of findLongValues(args)) {
		const { digest } = renderInputDigest({ code: "000000", toolName, path: v.path, text: v.value });
		if (digest.length >= v.value.length) continue;
		// The arguments travel as a JSON string inside the request's JSON: escaped twice.
		const wire = (t: string) => JSON.stringify(JSON.stringify(t)).length;
		out.push({
			savedChars: wire(v.value) - wire(digest),
			savedTokens: estimateTokens(v.value.length) - estimateTokens(digest.length),
			masked: false,
			input: true,
		});
	}
}
