/**
 * planFold: the one decision the core makes per request. Plain values in, a FoldPlan out; the
 * adapter applies the substitutions in place and persists the new layer, if any.
 */
import {
	blockKey,
	blockTokens,
	isSuccessfulResponse,
	MESSAGE_OVERHEAD_TOKENS,
	type ThinkingPolicy,
	type ViewMessage,
} from "./blocks.ts";
import { deriveCode, type Hash, renderDigest, utf8Length } from "./digest.ts";
import { FOLD_STATE_VERSION, type FrozenLayer, type MaskedBlock, type MaskIndex } from "./layers.ts";
import { decideLadder, type LadderGeometry, type LadderState, ladderGeometry } from "./policy/ladder.ts";
import { type Candidate, DIGEST_TOKEN_ESTIMATE, selectCandidates } from "./policy/select.ts";
import type { Settings } from "./settings.ts";
import { estimateTokens } from "./tokens.ts";
import { protectedTailStart, readUsage, responsesSince, type UsageReading } from "./usage.ts";

export interface Substitution {
	messageIndex: number;
	blockIndex: number;
	code: string;
	/** Replacement text: the digest. */
	text: string;
	/** A signed thinking block: drop the signature so the provider accepts the changed text. */
	dropSignature: boolean;
}

export interface PlanInput {
	messages: readonly ViewMessage[];
	index: MaskIndex;
	settings: Settings;
	window: number | undefined;
	/** Any response in this session's recorded history reported a cache read. */
	everCacheRead: boolean;
	hash: Hash;
	/** Appended to every new digest's header (ephemeral sessions say recall is memory-only). */
	digestNote?: string;
	/** How thinking may fold for the provider this request goes to. Default: unsigned-only. */
	thinking?: ThinkingPolicy;
	/**
	 * Final check before a block is committed to a layer: its text is exactly the ledger's, so recall
	 * can verify it later. Injected by the adapter; absent means every candidate passes.
	 */
	verify?: (entryId: string, blockIndex: number, text: string) => boolean;
}

export interface FoldPlan {
	type: "fold-plan";
	state: LadderState;
	/** Every block to replace in this request: frozen layers first, then the new layer's blocks. */
	substitutions: Substitution[];
	/** The layer this request commits, or null. */
	layer: FrozenLayer | null;
	usage: UsageReading;
	/** Usage after this plan's new layer (equal to usage.tokens without one). */
	usageAfter: number;
	geometry: LadderGeometry | null;
	armed: boolean;
	/** Estimated tokens a fold event could free now (the gauge's numerator). */
	mass: number;
	/** Blocks masked in this request's view and the tokens they save, all layers included. */
	maskedBlocks: number;
	maskedTokens: number;
}

export function planFold(input: PlanInput): FoldPlan {
	const { messages, index } = input;
	const thinking = input.thinking ?? "unsigned-only";
	const frozen = applyFrozenLayers(messages, index, thinking);
	const usage = readUsage(messages, frozen.tokensPerMessage, frozen.latestCompaction);
	const geometry = ladderGeometry(input.settings, input.window, input.everCacheRead);
	const protectedFrom = geometry === null ? 0 : protectedTailStart(frozen.tokensPerMessage, geometry.tail);
	const { candidates, mass } = selectCandidates({
		messages,
		index,
		protectedFrom,
		deliveredBefore: Math.max(frozen.lastOk, 0),
		thinking,
		lastUser: frozen.lastUser,
	});
	const lastLayer = index.layers[index.layers.length - 1];
	const cooldown = lastLayer !== undefined && responsesSince(messages, lastLayer.lastResponseAt) <= 1;
	const decision = decideLadder({ geometry, usage: usage.tokens, mass, layers: index.layers.length, cooldown });

	const base = {
		type: "fold-plan" as const,
		substitutions: frozen.substitutions,
		usage,
		geometry,
		armed: decision.armed,
		mass: Math.max(0, mass),
		maskedBlocks: frozen.maskedBlocks,
		maskedTokens: frozen.maskedTokens,
	};
	if (decision.state !== "fold" || decision.reason === undefined || candidates.length === 0) {
		return { ...base, state: decision.state, layer: null, usageAfter: usage.tokens };
	}
	const commit = commitCandidates(input, candidates, thinking);
	if (commit.blocks.length === 0) return { ...base, state: "accumulating", layer: null, usageAfter: usage.tokens };

	const usageAfter = Math.max(0, usage.tokens - commit.saved);
	const layer: FrozenLayer = {
		type: "layer",
		v: FOLD_STATE_VERSION,
		seq: (lastLayer?.seq ?? 0) + 1,
		reason: decision.reason,
		lastResponseAt: frozen.lastOkAt,
		usageBefore: usage.tokens,
		usageAfter,
		blocks: commit.blocks,
	};
	return {
		...base,
		substitutions: [...frozen.substitutions, ...commit.substitutions],
		state: "fold",
		layer,
		usageAfter,
		mass: Math.max(0, commit.leftover),
		maskedBlocks: frozen.maskedBlocks + commit.blocks.length,
		maskedTokens: frozen.maskedTokens + commit.saved,
	};
}

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
 * count its tokens. `simulate` calls this too, to know what the recorded layers saved.
 */
export function applyFrozenLayers(
	messages: readonly ViewMessage[],
	index: MaskIndex,
	thinking: ThinkingPolicy,
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
			const masked =
				m.entryId !== null && (block.kind === "text" || block.kind === "thinking") && index.byKey.size > 0
					? index.byKey.get(blockKey(m.entryId, j))
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
		pass.tokensPerMessage[i] = tokens;
		if (m.role === "user") pass.lastUser = i;
		if (m.role === "compactionSummary") pass.latestCompaction = Math.max(pass.latestCompaction, m.timestamp);
		if (isSuccessfulResponse(m)) {
			pass.lastOk = i;
			pass.lastOkAt = Math.max(pass.lastOkAt, m.timestamp);
		}
	}
	return pass;
}

interface Commit {
	blocks: MaskedBlock[];
	substitutions: Substitution[];
	/** Tokens the new layer takes out of the request. */
	saved: number;
	/** Mass of candidates this event could not fold (rejected at commit): what the gauge shows next. */
	leftover: number;
}

/** Render every candidate's digest and record its identity: the new layer's blocks. */
function commitCandidates(input: PlanInput, candidates: readonly Candidate[], thinking: ThinkingPolicy): Commit {
	const { messages, index } = input;
	const taken = new Set(index.byCode.keys());
	const out: Commit = { blocks: [], substitutions: [], saved: 0, leftover: 0 };
	for (const c of candidates) {
		const m = messages[c.messageIndex] as ViewMessage;
		const block = m.blocks[c.blockIndex];
		if (block === undefined || m.entryId === null) continue;
		if (input.verify !== undefined && !input.verify(m.entryId, c.blockIndex, block.text)) {
			out.leftover += c.tokens - DIGEST_TOKEN_ESTIMATE;
			continue;
		}
		const kind = m.role === "toolResult" ? "toolResult" : "thinking";
		const code = deriveCode(input.hash, m.entryId, c.blockIndex, taken);
		const rendered = renderDigest({
			code,
			kind,
			text: block.text,
			...(m.toolName !== undefined && { toolName: m.toolName }),
			...(m.callSummary !== undefined && { callSummary: m.callSummary }),
			...(input.digestNote !== undefined && { note: input.digestNote }),
			...(block.facts !== undefined && { facts: block.facts }),
		});
		const digestTokens = estimateTokens(rendered.digest.length);
		if (digestTokens >= c.tokens) {
			out.leftover += c.tokens - DIGEST_TOKEN_ESTIMATE;
			continue;
		}
		taken.add(code);
		out.blocks.push({
			code,
			entryId: m.entryId,
			blockIndex: c.blockIndex,
			kind,
			sha256: input.hash(block.text),
			chars: block.text.length,
			bytes: utf8Length(block.text),
			lines: rendered.lines,
			tokens: c.tokens,
			digest: rendered.digest,
			...(m.toolName !== undefined && { toolName: m.toolName }),
			...(m.toolCallId !== undefined && { toolCallId: m.toolCallId }),
			...(block.signed === true && { signed: true }),
			...(m.fullOutputPath !== undefined && { fullOutputPath: m.fullOutputPath }),
		});
		out.substitutions.push({
			messageIndex: c.messageIndex,
			blockIndex: c.blockIndex,
			code,
			text: rendered.digest,
			dropSignature: block.signed === true && thinking === "drop-signature",
		});
		out.saved += c.tokens - digestTokens;
	}
	return out;
}

function kindMatches(masked: MaskedBlock, role: string, kind: string): boolean {
	return masked.kind === "toolResult"
		? role === "toolResult" && kind === "text"
		: role === "assistant" && kind === "thinking";
}
