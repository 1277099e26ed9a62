/**
 * The core's plain view of an outgoing message list. The adapter converts Pi's messages into this
 * shape; the core never sees Pi types. Three kinds of block can ever be masked: the text parts of a
 * tool result, assistant thinking, and long string values inside an assistant tool call's arguments.
 */
import type { DigestFacts } from "./digest.ts";
import type { LongValue } from "./inputs.ts";
import { estimateTokens, IMAGE_TOKEN_ESTIMATE, type Usage } from "./tokens.ts";

export type BlockKind = "text" | "thinking" | "image" | "toolCall" | "other";

export interface ViewBlock {
	kind: BlockKind;
	/** Exact text for text/thinking blocks; serialized arguments for tool calls; "" otherwise. */
	text: string;
	/** Thinking carries a provider signature (Anthropic signature, OpenAI encrypted reasoning). */
	signed?: boolean;
	/** The signature is structured provider data (JSON), sent as-is whatever the text says. */
	opaqueSignature?: boolean;
	/** Thinking whose visible text was withheld by the provider. Never folded. */
	redacted?: boolean;
	/**
	 * The text differs from the session entry's: another extension rewrote it earlier in Pi's chain.
	 * Never folded, since recall could not verify it against the ledger.
	 */
	foreign?: boolean;
	/** Digest facts computed when the block was new (an optional cache; the core computes them if absent). */
	facts?: DigestFacts;
	/** A tool call's id, name and arguments (kind "toolCall" only). */
	call?: ViewCall;
	/** Its blockKey, memoized by keyOfBlock for the entry and index it was built for (not enumerable). */
	key?: { entryId: string; index: number; key: string };
}

/** A tool call as the core reads it: what its input folds and superseded output are decided from. */
export interface ViewCall {
	id: string | undefined;
	name: string;
	/** The arguments object as the message holds it (never changed by the core). */
	args: unknown;
	/** Its long string values (see findLongValues) with their path keys, found once when the view is built. */
	long: readonly KeyedValue[];
	/** Facts about the call that the superseded rules memoize here (see policy/superseded.ts). */
	memo?: unknown;
	/** The index keys of its long values, memoized by policy/select.ts for the entry and index they were built for. */
	keys?: { entryId: string; blockIndex: number; prefix: string; keys: string[] };
}

export interface KeyedValue extends LongValue {
	/** pathKey(path), the value's identity within its call. */
	key: string;
}

export interface ViewMessage {
	/** Pi role: user, assistant, toolResult, custom, bashExecution, compactionSummary, ... */
	role: string;
	/** Session entry id this message came from; null when it cannot be mapped (never masked). */
	entryId: string | null;
	/** Message timestamp (ms) as recorded by Pi. Used only for ordering against compactions. */
	timestamp: number;
	toolName?: string;
	toolCallId?: string;
	/** For a tool result: a short description of the call (command, path), for digests. */
	callSummary?: string;
	/** For a tool result: the full-output file the tool recorded (bash truncation). */
	fullOutputPath?: string;
	blocks: ViewBlock[];
	/** Provider-reported usage, on assistant messages. */
	usage?: Usage;
	/** Assistant stop reason: error and aborted responses carry no usable usage. */
	stopReason?: string;
	/** For a tool result: the tool reported failure. */
	isError?: boolean;
	/** For a tool result: the tool cut its output (Pi's `details.truncation.truncated`). */
	truncated?: boolean;
}

export function blockTokens(block: ViewBlock): number {
	if (block.kind === "image") return IMAGE_TOKEN_ESTIMATE;
	return estimateTokens(block.text.length);
}

/** Small fixed cost per message for role markers and framing. */
export const MESSAGE_OVERHEAD_TOKENS = 4;

export function messageTokens(message: ViewMessage): number {
	let total = MESSAGE_OVERHEAD_TOKENS;
	for (const block of message.blocks) total += blockTokens(block);
	return total;
}

/** Estimated tokens of a whole view, unmasked. */
export function viewTokens(view: readonly ViewMessage[]): number {
	let total = 0;
	for (const m of view) total += messageTokens(m);
	return total;
}

/** Stable address of one block inside the session: entry id plus content index. */
export function blockKey(entryId: string, blockIndex: number): string {
	return `${entryId}:${blockIndex}`;
}

/**
 * blockKey, memoized on the block: a view the adapter caches keeps its keys across requests, so a
 * steady request builds no key strings (and its map lookups hash no new string).
 */
export function keyOfBlock(block: ViewBlock, entryId: string, index: number): string {
	const memo = block.key;
	if (memo !== undefined && memo.entryId === entryId && memo.index === index) return memo.key;
	const key = blockKey(entryId, index);
	// Not enumerable: a cache, never part of the view's data (copies, comparisons and JSON skip it).
	Object.defineProperty(block, "key", { value: { entryId, index, key }, writable: true, configurable: true });
	return key;
}

/**
 * How thinking may be folded for the provider the request goes to. Providers reject or ignore a
 * signed block whose text changed, each in its own way (see docs/pi-api-surface.md):
 * - drop-signature: Anthropic-style. A block with an empty signature goes out as plain text.
 * - keep-signature: the signature names a field or is independent of the text (OpenAI-compatible
 *   chat completions, Google); replace the text, keep the signature. Opaque JSON signatures never fold.
 * - unsigned-only: unknown provider; fold only thinking that carries no signature.
 * - skip: the provider never sends thinking text back (OpenAI Responses family); folding saves nothing.
 */
export type ThinkingPolicy = "drop-signature" | "keep-signature" | "unsigned-only" | "skip";

/** Whether a block is of a maskable kind at all (position and freshness are checked elsewhere). */
export function isMaskableKind(
	message: ViewMessage,
	block: ViewBlock,
	thinking: ThinkingPolicy = "unsigned-only",
): boolean {
	if (message.entryId === null || block.foreign === true) return false;
	if (message.role === "toolResult") {
		if (block.kind !== "text") return false;
		// A result carrying any non-text part (a screenshot) is never folded, so nothing is lost.
		for (const b of message.blocks) if (b.kind !== "text") return false;
		return true;
	}
	if (message.role === "assistant") {
		if (block.kind !== "thinking" || block.redacted === true || block.text.length === 0) return false;
		if (thinking === "skip") return false;
		if (block.signed !== true) return true;
		if (thinking === "drop-signature") return true;
		return thinking === "keep-signature" && block.opaqueSignature !== true;
	}
	return false;
}

export function promptTokensOf(usage: Usage): number {
	return nonNegative(usage.input) + nonNegative(usage.cacheRead) + nonNegative(usage.cacheWrite);
}

export function nonNegative(n: number): number {
	return Number.isFinite(n) && n > 0 ? n : 0;
}

/** An assistant message that did not fail or get aborted: it was delivered, and its usage is a measurement. */
export function isSuccessfulResponse(m: { role: string; stopReason?: unknown }): boolean {
	return m.role === "assistant" && m.stopReason !== "error" && m.stopReason !== "aborted";
}

/**
 * An aborted or errored response: Pi keeps it in the session but never sends it again (pi-ai's
 * transformMessages drops it on every API, Pi 0.80.6 and 1.6.0), so it weighs nothing in a request.
 */
export function neverSent(m: { role: string; stopReason?: unknown }): boolean {
	return m.role === "assistant" && !isSuccessfulResponse(m);
}
