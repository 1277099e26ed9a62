/**
 * Which blocks may fold now: maskable kinds, outside the protected tail, already delivered to the
 * model in full at least once, not folded before, not pinned by an unfold, and large enough that a
 * digest actually saves something.
 */
import { blockKey, blockTokens, isMaskableKind, type ThinkingPolicy, type ViewMessage } from "../blocks.ts";
import type { MaskIndex } from "../layers.ts";

/** Blocks smaller than this never fold: their digest would save too little to pay for a rewrite. */
export const MIN_FOLD_TOKENS = 256;
/** Planning estimate of one digest's size; the exact size is known only when it is rendered. */
export const DIGEST_TOKEN_ESTIMATE = 80;

export interface Candidate {
	messageIndex: number;
	blockIndex: number;
	tokens: number;
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
	 */
	lastUser: number;
}

export function selectCandidates(input: SelectInput): { candidates: Candidate[]; mass: number } {
	const candidates: Candidate[] = [];
	let mass = 0;
	const end = Math.min(input.protectedFrom, input.deliveredBefore);
	for (let i = 0; i < end; i++) {
		const message = input.messages[i] as ViewMessage;
		if (message.entryId === null) continue;
		if (message.role !== "toolResult" && message.role !== "assistant") continue;
		for (let j = 0; j < message.blocks.length; j++) {
			const block = message.blocks[j];
			if (block === undefined || !isMaskableKind(message, block, input.thinking)) continue;
			if (block.signed === true && input.thinking === "drop-signature" && i > input.lastUser) continue;
			const key = blockKey(message.entryId, j);
			if (input.index.byKey.has(key) || input.index.pinned.has(key)) continue;
			const tokens = blockTokens(block);
			if (tokens < MIN_FOLD_TOKENS) continue;
			candidates.push({ messageIndex: i, blockIndex: j, tokens });
			mass += tokens - DIGEST_TOKEN_ESTIMATE;
		}
	}
	return { candidates, mass };
}
