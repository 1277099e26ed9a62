/**
 * What a seed record is extracted from, shared by the extension (its SeedWriter and deterministic
 * compaction) and the offline replay of `context-fold simulate`, so both index the same messages.
 */
import { blockKey, type ViewMessage } from "../blocks.ts";
import type { Hash } from "../digest.ts";
import { valueAt } from "../inputs.ts";
import { type FrozenLayer, layerMasks, type MaskedBlock, type MaskIndex } from "../layers.ts";
import { buildView, type PiEntry, type PiMessage } from "../session/view.ts";
import type { SeedToolCall } from "./calls.ts";
import { extractSeedRecord } from "./extract.ts";
import type { SeedRecord } from "./schema.ts";

/** What a fold record is extracted from (see extractSeedRecord). */
export interface FoldPick {
	view: ViewMessage[];
	calls: SeedToolCall[];
	/** Every mask the layer commits, its inputs included. */
	masked: MaskedBlock[];
	/** The original value of each folded input, by code, read from the view. */
	inputTexts: Map<string, string>;
}

/** The seed record of one fold event from its picked messages (the extension's SeedWriter and simulate's compactor). */
export function foldSeedRecord(pick: FoldPick, seq: number, at: number, hash: Hash): SeedRecord {
	return extractSeedRecord({
		kind: "fold",
		seq,
		at,
		messages: pick.view,
		masked: pick.masked,
		inputTexts: pick.inputTexts,
		calls: pick.calls,
		hash,
	});
}

/**
 * The messages a fold record covers: the masked blocks' messages, the assistant messages whose tool
 * calls produced them or whose inputs were folded, and the user messages since the previous fold
 * (see userMessagesSince). `previous` is the layer committed before `layer`. Calls and input values
 * are read from the view, which holds the originals: call this before the substitutions are applied
 * or after, it sees the same bytes (an input substitution replaces a part's arguments object, it
 * never changes the one the view holds).
 */
export function pickFoldMessages(
	layer: FrozenLayer,
	previous: FrozenLayer | undefined,
	view: readonly ViewMessage[],
): FoldPick {
	const since = userMessagesSince(previous, view);
	const masked = layerMasks(layer);
	const entries = new Set(masked.map((b) => b.entryId));
	const callIds = new Set(masked.map((b) => b.toolCallId).filter((id): id is string => id !== undefined));
	const inputs = new Map<string, MaskedBlock[]>();
	for (const b of masked) {
		if (b.kind !== "input") continue;
		const key = blockKey(b.entryId, b.blockIndex);
		inputs.set(key, [...(inputs.get(key) ?? []), b]);
	}
	const pickedView: ViewMessage[] = [];
	const calls: SeedToolCall[] = [];
	const inputTexts = new Map<string, string>();
	for (const v of view) {
		let take = v.entryId !== null && entries.has(v.entryId);
		if (v.role === "user" && v.timestamp > since) take = true;
		if (v.role === "assistant") {
			for (let j = 0; j < v.blocks.length; j++) {
				const call = v.blocks[j]?.call;
				if (call?.id === undefined) continue;
				if (callIds.has(call.id)) {
					calls.push({ toolCallId: call.id, name: call.name, args: call.args });
					take = true;
				}
				for (const b of v.entryId === null ? [] : (inputs.get(blockKey(v.entryId, j)) ?? [])) {
					const text = b.path === undefined ? undefined : valueAt(call.args, b.path);
					if (text !== undefined) inputTexts.set(b.code, text);
				}
			}
		}
		if (take) pickedView.push(v);
	}
	return { view: pickedView, calls, masked, inputTexts };
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

/**
 * Every message of a branch, for one record that indexes a whole session: what `context-fold
 * handoff` extracts when the session never folded or compacted, so no seed index was written.
 */
export function pickSessionMessages(branch: readonly PiEntry[]): { view: ViewMessage[]; calls: SeedToolCall[] } {
	const ids = new Map<PiMessage, string>();
	const messages: PiMessage[] = [];
	for (const e of branch) {
		if (e.type !== "message" || e.message === undefined) continue;
		ids.set(e.message, e.id);
		messages.push(e.message);
	}
	return { view: buildView(messages, (m) => ids.get(m) ?? null), calls: toolCallsOf(messages) };
}
