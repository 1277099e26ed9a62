/**
 * Which blocks may fold now: maskable kinds, outside the protected tail, already delivered to the
 * model in full at least once, not folded before, not pinned by an unfold, and large enough that a
 * digest actually saves something. Tool-call inputs fold on the same terms, and only once the call's
 * result was delivered and the call is outside the tool loop still running. Superseded and duplicate
 * blocks (policy/superseded.ts) are exempt from the protected tail, never from the rest.
 */
import {
	blockKey,
	blockTokens,
	isMaskableKind,
	keyOfBlock,
	neverSent,
	type ThinkingPolicy,
	type ViewMessage,
} from "../blocks.ts";
import type { ArgPath } from "../inputs.ts";
import type { MaskIndex } from "../layers.ts";
import { estimateTokens } from "../tokens.ts";
import type { StaleInView } from "./stale-in-view.ts";

/** Blocks smaller than this never fold: their digest would save too little to pay for a rewrite. */
export const MIN_FOLD_TOKENS = 256;
/** Planning estimate of one digest's size; the exact size is known only when it is rendered. */
export const DIGEST_TOKEN_ESTIMATE = 80;
/** The same for an input digest (a header and a first line, at most three risk lines). */
export const INPUT_DIGEST_TOKEN_ESTIMATE = 40;

export interface Candidate {
	messageIndex: number;
	blockIndex: number;
	tokens: number;
	/** An input candidate: one long value of the tool call at blockIndex. */
	input?: { path: ArgPath; value: string };
	/** Superseded or duplicate: why (for the digest). */
	reason?: string;
}

export interface SelectInput {
	messages: readonly ViewMessage[];
	index: MaskIndex;
	/** First message index inside the protected tail. */
	protectedFrom: number;
	/** Index of the newest successful assistant response; blocks before it have been delivered. */
	deliveredBefore: number;
	thinking: ThinkingPolicy;
	/**
	 * Index of the newest user message. Under drop-signature (Anthropic-style), signed thinking after
	 * it belongs to the tool loop still running, which the provider requires intact: it never folds.
	 * Tool-call inputs and stale blocks after it never fold, whatever the provider.
	 */
	lastUser: number;
	/** Fold tool-call inputs (off for a model whose provider refused a request carrying them). */
	inputs?: boolean;
	/** Superseded and duplicate blocks of this request (see staleInView). */
	stale?: StaleInView;
}

export function selectCandidates(input: SelectInput): { candidates: Candidate[]; mass: number } {
	const candidates: Candidate[] = [];
	let mass = 0;
	const stale = input.stale;
	const staleCount = stale === undefined ? 0 : stale.results.size + stale.inputs.size;
	const foldInputs = input.inputs !== false;
	// Stale blocks are exempt from the tail, so the scan reaches past it when there are any.
	const ageEnd = Math.min(input.protectedFrom, input.deliveredBefore);
	const end = staleCount > 0 ? input.deliveredBefore : ageEnd;
	for (let i = 0; i < end; i++) {
		const message = input.messages[i] as ViewMessage;
		if (message.entryId === null) continue;
		if (message.role !== "toolResult" && message.role !== "assistant") continue;
		// A response Pi never sends again (aborted, errored): folding it frees nothing.
		if (neverSent(message)) continue;
		const settled = i < input.lastUser;
		// Past the tail's start only stale blocks fold; before it every block does (commit adds its reason).
		const inTail = i >= ageEnd;
		const reason =
			inTail && settled && message.role === "toolResult" ? stale?.results.get(message.entryId)?.reason : undefined;
		if (inTail && reason === undefined && !(settled && message.role === "assistant")) continue;
		for (let j = 0; j < message.blocks.length; j++) {
			const block = message.blocks[j];
			if (block === undefined) continue;
			if (block.kind === "toolCall") {
				const call = block.call;
				if (!foldInputs || !settled || call === undefined || call.long.length === 0 || call.id === undefined) continue;
				// The keys of its values, built once per view (a view lives as long as its message is sent).
				if (call.keys === undefined || call.keys.entryId !== message.entryId || call.keys.blockIndex !== j) {
					const prefix = blockKey(message.entryId, j);
					call.keys = {
						entryId: message.entryId,
						blockIndex: j,
						prefix,
						keys: call.long.map((v) => `${prefix}:${v.key}`),
					};
				}
				const keys = call.keys;
				// Every value already masked: nothing to do (the common case once a call has folded).
				if (input.index.inputs.get(keys.prefix)?.length === call.long.length) continue;
				if (!resultFollows(input.messages, i, call.id, input.deliveredBefore)) continue;
				const why = inTail ? stale?.inputs.get(keys.prefix)?.reason : undefined;
				if (inTail && why === undefined) continue;
				for (let k = 0; k < call.long.length; k++) {
					const v = call.long[k] as (typeof call.long)[number];
					const key = keys.keys[k] as string;
					if (input.index.byKey.has(key) || input.index.pinned.has(key)) continue;
					const tokens = estimateTokens(v.value.length);
					candidates.push({
						messageIndex: i,
						blockIndex: j,
						tokens,
						input: { path: v.path, value: v.value },
						...(why !== undefined && { reason: why }),
					});
					mass += tokens - INPUT_DIGEST_TOKEN_ESTIMATE;
				}
				continue;
			}
			if (inTail && reason === undefined) continue;
			if (!isMaskableKind(message, block, input.thinking)) continue;
			if (block.signed === true && input.thinking === "drop-signature" && i > input.lastUser) continue;
			const tokens = blockTokens(block);
			if (tokens < MIN_FOLD_TOKENS) continue;
			const key = keyOfBlock(block, message.entryId, j);
			if (input.index.byKey.has(key) || input.index.pinned.has(key)) continue;
			candidates.push({ messageIndex: i, blockIndex: j, tokens, ...(reason !== undefined && { reason }) });
			mass += tokens - DIGEST_TOKEN_ESTIMATE;
		}
	}
	return { candidates, mass };
}

/**
 * The call's result was delivered: it is among the results right after the call's message (where Pi
 * puts them) and before `end`, the newest successful response. A result anywhere else counts as not
 * delivered, which can only miss a fold.
 */
function resultFollows(messages: readonly ViewMessage[], i: number, id: string, end: number): boolean {
	for (let k = i + 1; k < end; k++) {
		const m = messages[k] as ViewMessage;
		if (m.role !== "toolResult") return false;
		if (m.toolCallId === id) return true;
	}
	return false;
}
