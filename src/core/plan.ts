/**
 * planFold: the one decision the core makes per request. Plain values in, a FoldPlan out; the
 * adapter applies the substitutions in place and persists the new layer, if any.
 */
import {
	blockKey,
	blockTokens,
	MESSAGE_OVERHEAD_TOKENS,
	nonNegative,
	promptTokensOf,
	type ThinkingPolicy,
	type ViewMessage,
} from "./blocks.ts";
import { deriveCode, type Hash, renderDigest, utf8Length } from "./digest.ts";
import { FOLD_STATE_VERSION, type FrozenLayer, type MaskedBlock, type MaskIndex } from "./layers.ts";
import { decideLadder, type LadderGeometry, type LadderState, ladderGeometry } from "./policy/ladder.ts";
import { DIGEST_TOKEN_ESTIMATE, selectCandidates } from "./policy/select.ts";
import type { Settings } from "./settings.ts";
import { estimateTokens, MAX_REPORTED_TOKENS } from "./tokens.ts";

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

export interface UsageReading {
	tokens: number;
	source: "reported" | "estimate";
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
	const substitutions: Substitution[] = [];
	const tokensPerMessage: number[] = new Array(messages.length);
	let maskedBlocks = 0;
	let maskedTokens = 0;
	let lastOk = -1;
	let lastOkAt = 0;
	let latestCompaction = Number.NEGATIVE_INFINITY;
	let lastUser = -1;
	const thinking = input.thinking ?? "unsigned-only";

	// One pass over message headers: frozen substitutions, token counts, response positions.
	for (let i = 0; i < messages.length; i++) {
		const m = messages[i] as ViewMessage;
		let tokens = MESSAGE_OVERHEAD_TOKENS;
		for (let j = 0; j < m.blocks.length; j++) {
			const block = m.blocks[j];
			if (block === undefined) continue;
			if (m.entryId !== null && (block.kind === "text" || block.kind === "thinking") && index.byKey.size > 0) {
				const masked = index.byKey.get(blockKey(m.entryId, j));
				// The length check is a cheap guard against an id reused for different content.
				if (masked !== undefined && masked.chars === block.text.length && kindMatches(masked, m.role, block.kind)) {
					substitutions.push({
						messageIndex: i,
						blockIndex: j,
						code: masked.code,
						text: masked.digest,
						dropSignature: block.signed === true && thinking === "drop-signature",
					});
					const digestTokens = estimateTokens(masked.digest.length);
					tokens += digestTokens;
					maskedBlocks++;
					maskedTokens += Math.max(0, masked.tokens - digestTokens);
					continue;
				}
			}
			tokens += blockTokens(block);
		}
		tokensPerMessage[i] = tokens;
		if (m.role === "user") lastUser = i;
		if (m.role === "compactionSummary") latestCompaction = Math.max(latestCompaction, m.timestamp);
		if (m.role === "assistant" && m.stopReason !== "error" && m.stopReason !== "aborted") {
			lastOk = i;
			lastOkAt = Math.max(lastOkAt, m.timestamp);
		}
	}

	const usage = readUsage(messages, tokensPerMessage, latestCompaction);
	const geometry = ladderGeometry(input.settings, input.window, input.everCacheRead);
	const protectedFrom = geometry === null ? 0 : protectedTailStart(tokensPerMessage, geometry.tail);
	const { candidates, mass } = selectCandidates({
		messages,
		index,
		protectedFrom,
		deliveredBefore: Math.max(lastOk, 0),
		thinking,
		lastUser,
	});
	const lastLayer = index.layers[index.layers.length - 1];
	const cooldown = lastLayer !== undefined && responsesSince(messages, lastLayer.lastResponseAt) <= 1;
	const decision = decideLadder({ geometry, usage: usage.tokens, mass, layers: index.layers.length, cooldown });

	const base = {
		type: "fold-plan" as const,
		substitutions,
		usage,
		geometry,
		armed: decision.armed,
		mass: Math.max(0, mass),
		maskedBlocks,
		maskedTokens,
	};
	if (decision.state !== "fold" || decision.reason === undefined || candidates.length === 0) {
		return { ...base, state: decision.state, layer: null, usageAfter: usage.tokens };
	}

	// Commit a layer: render every candidate's digest and record its identity.
	const taken = new Set(index.byCode.keys());
	const blocks: MaskedBlock[] = [];
	let saved = 0;
	/** Mass of candidates this event could not fold (rejected at commit): what the gauge shows next. */
	let leftover = 0;
	for (const c of candidates) {
		const m = messages[c.messageIndex] as ViewMessage;
		const block = m.blocks[c.blockIndex];
		if (block === undefined || m.entryId === null) continue;
		if (input.verify !== undefined && !input.verify(m.entryId, c.blockIndex, block.text)) {
			leftover += c.tokens - DIGEST_TOKEN_ESTIMATE;
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
			leftover += c.tokens - DIGEST_TOKEN_ESTIMATE;
			continue;
		}
		taken.add(code);
		const masked: MaskedBlock = {
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
		};
		blocks.push(masked);
		substitutions.push({
			messageIndex: c.messageIndex,
			blockIndex: c.blockIndex,
			code,
			text: rendered.digest,
			dropSignature: block.signed === true && thinking === "drop-signature",
		});
		saved += c.tokens - digestTokens;
	}
	if (blocks.length === 0) return { ...base, state: "accumulating", layer: null, usageAfter: usage.tokens };

	const usageAfter = Math.max(0, usage.tokens - saved);
	const layer: FrozenLayer = {
		type: "layer",
		v: FOLD_STATE_VERSION,
		seq: (lastLayer?.seq ?? 0) + 1,
		reason: decision.reason,
		lastResponseAt: lastOkAt,
		usageBefore: usage.tokens,
		usageAfter,
		blocks,
	};
	return {
		...base,
		state: "fold",
		layer,
		usageAfter,
		mass: Math.max(0, leftover),
		maskedBlocks: maskedBlocks + blocks.length,
		maskedTokens: maskedTokens + saved,
	};
}

function kindMatches(masked: MaskedBlock, role: string, kind: string): boolean {
	return masked.kind === "toolResult"
		? role === "toolResult" && kind === "text"
		: role === "assistant" && kind === "thinking";
}

/**
 * Usage, defined: the provider-reported prompt of the newest successful response (input + cache
 * read + cache write) plus its own output, plus the estimate of every message after it. With no
 * usable report (first request, or no response since the latest compaction; a report above
 * MAX_REPORTED_TOKENS or one that overflows is not usable) it is the estimate alone.
 */
export function readUsage(
	messages: readonly ViewMessage[],
	tokensPerMessage: readonly number[],
	latestCompaction: number,
): UsageReading {
	for (let i = messages.length - 1; i >= 0; i--) {
		const m = messages[i] as ViewMessage;
		if (m.role !== "assistant" || m.usage === undefined) continue;
		if (m.stopReason === "error" || m.stopReason === "aborted") continue;
		if (m.timestamp <= latestCompaction) break;
		const prompt = promptTokensOf(m.usage);
		// No report, or an absurd one (overflowing, or past any real window): not a measurement.
		if (prompt <= 0 || !(prompt <= MAX_REPORTED_TOKENS)) continue;
		let tokens = prompt + Math.min(nonNegative(m.usage.output), MAX_REPORTED_TOKENS);
		for (let k = i + 1; k < messages.length; k++) tokens += tokensPerMessage[k] ?? 0;
		return { tokens, source: "reported" };
	}
	let tokens = 0;
	for (const t of tokensPerMessage) tokens += t ?? 0;
	return { tokens, source: "estimate" };
}

/** First message index of the protected tail: every message that starts within the newest `tail` tokens. */
export function protectedTailStart(tokensPerMessage: readonly number[], tail: number): number {
	let acc = 0;
	let start = tokensPerMessage.length;
	for (let i = tokensPerMessage.length - 1; i >= 0; i--) {
		if (acc >= tail) break;
		acc += tokensPerMessage[i] ?? 0;
		start = i;
	}
	return start;
}

function responsesSince(messages: readonly ViewMessage[], since: number): number {
	let n = 0;
	for (let i = messages.length - 1; i >= 0; i--) {
		const m = messages[i] as ViewMessage;
		if (m.role !== "assistant" || m.stopReason === "error" || m.stopReason === "aborted") continue;
		if (m.timestamp <= since) break;
		n++;
		if (n > 1) break;
	}
	return n;
}
