/**
 * The frozen pass: the layers already committed, re-applied to a request byte for byte (their stored
 * digests, never re-rendered), with each message's tokens and the positions the planner reads. One
 * pass per request; `simulate` runs it too, to know what the recorded layers saved.
 */
import {
	blockTokens,
	isSuccessfulResponse,
	keyOfBlock,
	MESSAGE_OVERHEAD_TOKENS,
	neverSent,
	type ThinkingPolicy,
	type ViewMessage,
} from "./blocks.ts";
import { type ArgPath, INPUT_MIN_CHARS, valueAt } from "./inputs.ts";
import type { MaskedBlock, MaskIndex } from "./layers.ts";
import type { Substitution } from "./plan.ts";
import { estimateTokens } from "./tokens.ts";

/** What the layers already frozen do to a request, and the positions the ladder reads, in one pass. */
export interface FrozenPass {
	/** The frozen layers' substitutions, in message order. */
	substitutions: Substitution[];
	/** Each message's tokens with the frozen digests in place. */
	tokensPerMessage: number[];
	/** Blocks the frozen layers mask in this request, and the tokens that saves. */
	maskedBlocks: number;
	maskedTokens: number;
	/** Index and timestamp of the newest successful response (-1 and 0 without one). */
	lastOk: number;
	lastOkAt: number;
	/** Index of the newest user message (-1 without one). */
	lastUser: number;
	/** Timestamp of the newest compaction summary (-Infinity without one). */
	latestCompaction: number;
}

/**
 * Re-apply the frozen layers' stored digests (byte for byte, never re-rendered) to a request, and
 * count its tokens. `simulate` calls this too, to know what the recorded layers saved. With `inputs`
 * false the input masks are left out (their calls go out in full).
 */
export function applyFrozenLayers(
	messages: readonly ViewMessage[],
	index: MaskIndex,
	thinking: ThinkingPolicy,
	inputs = true,
): FrozenPass {
	const pass: FrozenPass = {
		substitutions: [],
		tokensPerMessage: new Array(messages.length),
		maskedBlocks: 0,
		maskedTokens: 0,
		lastOk: -1,
		lastOkAt: 0,
		lastUser: -1,
		latestCompaction: Number.NEGATIVE_INFINITY,
	};
	for (let i = 0; i < messages.length; i++) {
		const m = messages[i] as ViewMessage;
		let tokens = MESSAGE_OVERHEAD_TOKENS;
		for (let j = 0; j < m.blocks.length; j++) {
			const block = m.blocks[j];
			if (block === undefined) continue;
			// Only a call long enough to hold a folded value can have one (INPUT_MIN_CHARS).
			if (
				block.kind === "toolCall" &&
				inputs &&
				index.inputs.size > 0 &&
				block.text.length >= INPUT_MIN_CHARS &&
				m.entryId !== null &&
				m.role === "assistant"
			) {
				const masks = index.inputs.get(keyOfBlock(block, m.entryId, j));
				if (masks !== undefined) {
					tokens += Math.max(0, blockTokens(block) - applyInputMasks(pass, masks, block, i, j));
					continue;
				}
			}
			const masked =
				m.entryId !== null && (block.kind === "text" || block.kind === "thinking") && index.byKey.size > 0
					? index.byKey.get(keyOfBlock(block, m.entryId, j))
					: undefined;
			// The length check is a cheap guard against an id reused for different content.
			if (masked !== undefined && masked.chars === block.text.length && kindMatches(masked, m.role, block.kind)) {
				pass.substitutions.push({
					messageIndex: i,
					blockIndex: j,
					code: masked.code,
					text: masked.digest,
					dropSignature: block.signed === true && thinking === "drop-signature",
				});
				const digestTokens = estimateTokens(masked.digest.length);
				tokens += digestTokens;
				pass.maskedBlocks++;
				pass.maskedTokens += Math.max(0, masked.tokens - digestTokens);
				continue;
			}
			tokens += blockTokens(block);
		}
		pass.tokensPerMessage[i] = neverSent(m) ? 0 : tokens;
		if (m.role === "user") pass.lastUser = i;
		if (m.role === "compactionSummary") pass.latestCompaction = Math.max(pass.latestCompaction, m.timestamp);
		if (isSuccessfulResponse(m)) {
			pass.lastOk = i;
			pass.lastOkAt = Math.max(pass.lastOkAt, m.timestamp);
		}
	}
	return pass;
}

/**
 * The frozen masks of one tool call's input values: a substitution for each value still there with
 * the length it had when folded. Returns the tokens they save.
 */
function applyInputMasks(
	pass: FrozenPass,
	masks: readonly MaskedBlock[],
	block: ViewMessage["blocks"][number],
	messageIndex: number,
	blockIndex: number,
): number {
	let saved = 0;
	for (const masked of masks) {
		if (masked.path === undefined) continue;
		const path = masked.path;
		const value = block.call?.long.find((v) => samePath(v.path, path))?.value ?? valueAt(block.call?.args, path);
		// The length check is a cheap guard against an id reused for different content.
		if (value === undefined || value.length !== masked.chars) continue;
		pass.substitutions.push({
			messageIndex,
			blockIndex,
			code: masked.code,
			text: masked.digest,
			dropSignature: false,
			path: masked.path,
		});
		const digestTokens = estimateTokens(masked.digest.length);
		pass.maskedBlocks++;
		const s = Math.max(0, masked.tokens - digestTokens);
		pass.maskedTokens += s;
		saved += s;
	}
	return saved;
}

function samePath(a: ArgPath, b: ArgPath): boolean {
	if (a.length !== b.length) return false;
	for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
	return true;
}

function kindMatches(masked: MaskedBlock, role: string, kind: string): boolean {
	if (masked.kind === "input") return false;
	return masked.kind === "toolResult"
		? role === "toolResult" && kind === "text"
		: role === "assistant" && kind === "thinking";
}
