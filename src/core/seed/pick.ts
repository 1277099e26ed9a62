/**
 * What a seed record is extracted from, shared by the extension (its SeedWriter and deterministic
 * compaction) and the offline replay of `context-fold simulate`, so both index the same messages.
 */
import { blockKey, type ViewMessage } from "../blocks.ts";
import type { FrozenLayer, MaskIndex } from "../layers.ts";
import type { PiMessage } from "../session/view.ts";
import type { SeedToolCall } from "./calls.ts";

/**
 * The messages a fold record covers: the masked blocks' messages, the assistant messages whose tool
 * calls produced them, and the user messages since the previous fold (see userMessagesSince).
 * `view[i]` must be the view of `messages[i]`; `previous` is the layer committed before `layer`.
 */
export function pickFoldMessages(
	layer: FrozenLayer,
	previous: FrozenLayer | undefined,
	view: readonly ViewMessage[],
	messages: readonly PiMessage[],
): { view: ViewMessage[]; calls: SeedToolCall[] } {
	const since = userMessagesSince(previous, view);
	const entries = new Set(layer.blocks.map((b) => b.entryId));
	const callIds = new Set(layer.blocks.map((b) => b.toolCallId).filter((id): id is string => id !== undefined));
	const pickedView: ViewMessage[] = [];
	const calls: SeedToolCall[] = [];
	for (let i = 0; i < view.length; i++) {
		const v = view[i] as ViewMessage;
		const m = messages[i];
		let take = v.entryId !== null && entries.has(v.entryId);
		if (v.role === "user" && v.timestamp > since) take = true;
		if (v.role === "assistant" && Array.isArray(m?.content)) {
			for (const part of m.content) {
				if (part?.type === "toolCall" && typeof part.id === "string" && callIds.has(part.id)) {
					calls.push({ toolCallId: part.id, name: String(part.name ?? ""), args: part.arguments });
					take = true;
				}
			}
		}
		if (take) pickedView.push(v);
	}
	return { view: pickedView, calls };
}

/**
 * A fold record indexes the user messages since the previous fold: those sent after the response that
 * answered the previous fold's request. Every user message up to that response was in that request,
 * so the previous record already indexed it. The previous layer records the newest response before
 * its own request (lastResponseAt); the answer is the first response after that. With no previous
 * fold, every user message counts.
 */
export function userMessagesSince(previous: FrozenLayer | undefined, view: readonly ViewMessage[]): number {
	if (previous === undefined) return Number.NEGATIVE_INFINITY;
	for (const v of view) if (v.role === "assistant" && v.timestamp > previous.lastResponseAt) return v.timestamp;
	return previous.lastResponseAt;
}

/** The tool calls of assistant messages, for a compaction record. */
export function toolCallsOf(messages: readonly PiMessage[]): SeedToolCall[] {
	const calls: SeedToolCall[] = [];
	for (const m of messages) {
		if (m.role !== "assistant" || !Array.isArray(m.content)) continue;
		for (const part of m.content) {
			if (part?.type === "toolCall" && typeof part.id === "string")
				calls.push({ toolCallId: part.id, name: String(part.name ?? ""), args: part.arguments });
		}
	}
	return calls;
}

/** A block already folded (or pinned by unfold) is covered by its fold record: blank it out of a compaction record. */
export function withoutFolded(m: ViewMessage, index: MaskIndex): ViewMessage {
	const entryId = m.entryId;
	if (entryId === null || (index.byKey.size === 0 && index.pinned.size === 0)) return m;
	const covered = (j: number) => index.byKey.has(blockKey(entryId, j)) || index.pinned.has(blockKey(entryId, j));
	if (!m.blocks.some((_, j) => covered(j))) return m;
	return { ...m, blocks: m.blocks.map((b, j) => (covered(j) ? { kind: "other" as const, text: "" } : b)) };
}
