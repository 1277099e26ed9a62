/**
 * The floor: a computed lower bound for any masking policy. It takes the raw arm's requests (no
 * extension, no compaction: the whole trajectory as sent) and masks every block context-fold could
 * ever mask (tool-result text and thinking of at least 256 tokens, outside the protected tail, already
 * delivered to the model, digest smaller than the block) from the first request where it is
 * eligible, using context-fold's own digests. Masking is free: each request reads from cache
 * everything the previous one sent (with today's masks applied retroactively) and writes only what is
 * new, except after a lifetime expiry, when it writes all of it. No compaction, no tool declarations.
 */

import { renderDigest } from "../../../src/core/digest.ts";
import { ladderGeometry } from "../../../src/core/policy/ladder.ts";
import { MIN_FOLD_TOKENS } from "../../../src/core/policy/select.ts";
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
}

interface MessageInfo {
	chars: number;
	role: string;
	foldables: Foldable[];
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

	constructor(window = WINDOW) {
		this.tail = ladderGeometry(DEFAULT_SETTINGS, window, true)?.tail ?? DEFAULT_SETTINGS.tail;
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
		let newly = 0;
		const end = Math.min(protectedFrom, Math.max(lastAssistant, 0));
		for (let i = 0; i < end; i++) {
			for (const f of (this.messages[i] as MessageInfo).foldables) {
				if (f.masked) continue;
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

	private info(m: ChatMessage): MessageInfo {
		const chars = stableStringify(m).length;
		const foldables: Foldable[] = [];
		if (m.role === "assistant") {
			for (const c of m.tool_calls ?? []) {
				let args: unknown = c.function.arguments;
				try {
					args = JSON.parse(c.function.arguments);
				} catch {
					// Keep the raw string.
				}
				this.calls.set(c.id, { name: c.function.name, args });
			}
			const thinking = m.reasoning_content;
			if (typeof thinking === "string") pushFoldable(foldables, thinking, "thinking");
		} else if (m.role === "tool") {
			const call = this.calls.get(m.tool_call_id ?? "");
			const parts = typeof m.content === "string" ? [m.content] : (m.content ?? []).map((p) => p.text ?? "");
			const hasImage = Array.isArray(m.content) && m.content.some((p) => p.type !== "text");
			if (!hasImage) {
				for (const text of parts) {
					pushFoldable(foldables, text, "toolResult", call?.name, summarizeCall(call?.name, call?.args));
				}
			}
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
