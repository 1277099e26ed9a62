/**
 * planFold: the one decision the core makes per request. Plain values in, a FoldPlan out; the
 * adapter applies the substitutions in place and persists the new layer, if any.
 */

import { PRICE_PRESETS, type PriceSchedule, type Prices, ratesAt } from "./accounting.ts";
import type { ThinkingPolicy, ViewMessage } from "./blocks.ts";
import { commitCandidates } from "./commit.ts";
import type { Hash } from "./digest.ts";
import { applyFrozenLayers } from "./frozen.ts";
import type { ArgPath } from "./inputs.ts";
import {
	FOLD_STATE_VERSION,
	type FoldDecisionRecord,
	type FrozenLayer,
	inputsField,
	type MaskIndex,
} from "./layers.ts";
import { decideFixed } from "./policy/fixed.ts";
import { type FoldGeometry, foldGeometry } from "./policy/geometry.ts";
import { type CompactionAhead, compactionAhead, type PiCompactionFacts } from "./policy/horizon.ts";
import {
	type ColdReason,
	decidePriced,
	type PricedDecision,
	paysBeforeCompaction,
	type RelativeRates,
	relativeRates,
	requestsToPay,
} from "./policy/price.ts";
import { selectCandidates } from "./policy/select.ts";
import { staleInView } from "./policy/stale-in-view.ts";
import { priceGroups, responseIndices, sumMass } from "./priced-groups.ts";
import type { Settings } from "./settings.ts";
import { protectedTailStart, readUsage, responsesSince, type UsageReading } from "./usage.ts";

export interface Substitution {
	messageIndex: number;
	blockIndex: number;
	code: string;
	/** Replacement text: the digest. */
	text: string;
	/** A signed thinking block: drop the signature so the provider accepts the changed text. */
	dropSignature: boolean;
	/**
	 * An input: the block is a tool call, and `text` replaces the string value at this path of its
	 * arguments (see foldArguments); name, id, every other key and value stay as they are.
	 */
	path?: ArgPath;
}

export interface PlanInput {
	messages: readonly ViewMessage[];
	index: MaskIndex;
	settings: Settings;
	window: number | undefined;
	/**
	 * The model's prices in $/Mtok (the tier for this request's size applies); null or zero prices
	 * decide in tokens with the Anthropic preset's ratios. See policy/price.ts.
	 */
	prices?: PriceSchedule | null;
	/** The cached prefix is known or very likely gone (the rewrite is free); null or absent: warm. */
	cold?: ColdReason | null;
	/**
	 * The recall tools are not declared yet (they are declared lazily, from the first fold on). The
	 * first event pays for declaring them: `tokens` more on every request, and a rewrite of the whole
	 * prefix where declaring rebuilds the system prompt (`rebuildsPrefix`), else of the tail only. A
	 * fold that would fire now is held back (`toolsNeeded`): the tools take effect from the next
	 * request, and no digest may reach the model before it can recall.
	 */
	tools?: { declared: false; rebuildsPrefix: boolean; tokens: number };
	/** Pi's compaction settings for the model (the compaction ahead the rule weighs); Pi's defaults when absent. */
	compaction?: PiCompactionFacts;
	/** Any response in this session's recorded history reported a cache read (the fixed ladder's cold threshold). */
	everCacheRead?: boolean;
	hash: Hash;
	/** Appended to every new digest's header (ephemeral sessions say recall is memory-only). */
	digestNote?: string;
	/** How thinking may fold for the provider this request goes to. Default: unsigned-only. */
	thinking?: ThinkingPolicy;
	/**
	 * Final check before a block is committed to a layer: its text is exactly the ledger's, so recall
	 * can verify it later (for an input, the value at `path` of the call's arguments). Injected by the
	 * adapter; absent means every candidate passes.
	 */
	verify?: (entryId: string, blockIndex: number, text: string, path?: ArgPath) => boolean;
	/**
	 * Fold tool-call inputs (default true). False for a model whose provider refused a request
	 * carrying them: its frozen input masks are not applied either, so its calls go out in full.
	 */
	inputs?: boolean;
	/** The session's working directory (its header's), for the superseded rules' paths. */
	cwd?: string;
}

/** What the plan is doing: folding, waiting for its rent to reach RENT_MULTIPLE times its rewrite, or at the floor over the budget. */
export type PlanState = "no-window" | "idle" | "accumulating" | "fold" | "floor";

export interface FoldPlan {
	type: "fold-plan";
	state: PlanState;
	/** Every block to replace in this request: frozen layers first, then the new layer's blocks. */
	substitutions: Substitution[];
	/** The layer this request commits, or null. */
	layer: FrozenLayer | null;
	usage: UsageReading;
	/** Usage after this plan's new layer (equal to usage.tokens without one). */
	usageAfter: number;
	geometry: FoldGeometry | null;
	/** The fixed ladder's entry threshold and step, when the fold points were set by hand (Settings.fixedFolds). */
	fixed: { threshold: number; thresholdFraction: number; step: number; armed: boolean } | null;
	/** The priced decision: the rates it used, whether the cache is cold, and the event fired or closest to paying. */
	pricing: { rates: RelativeRates; prices: Prices; cold: ColdReason | null; decision: PricedDecision };
	/**
	 * The recall tools are not declared and a fold is due now (`now`: it was held back) or very likely
	 * on the next request (`soon`): declare them, so the next request can carry digests.
	 */
	toolsWanted: "now" | "soon" | null;
	/** Estimated tokens a fold event could free now (the gauge's numerator). */
	mass: number;
	/** Blocks masked in this request's view and the tokens they save, all layers included. */
	maskedBlocks: number;
	maskedTokens: number;
}

export function planFold(input: PlanInput): FoldPlan {
	const { messages, index } = input;
	const thinking = input.thinking ?? "unsigned-only";
	const inputs = input.inputs !== false;
	const frozen = applyFrozenLayers(messages, index, thinking, inputs);
	const usage = readUsage(messages, frozen.tokensPerMessage, frozen.latestCompaction);
	const geometry = foldGeometry(input.settings, input.window);
	const protectedFrom = geometry === null ? 0 : protectedTailStart(frozen.tokensPerMessage, geometry.tail);
	const deliveredBefore = Math.max(frozen.lastOk, 0);
	// Stale blocks matter to the mass only where age alone would not fold them: past the tail's start.
	// Every block before it is a candidate anyway; its reason is looked up at a fold event (below).
	const ageEnd = Math.min(protectedFrom, deliveredBefore);
	const staleOf = (from: number) =>
		staleInView(messages, {
			from,
			deliveredBefore,
			lastUser: frozen.lastUser,
			...(input.cwd !== undefined && { cwd: input.cwd }),
		});
	const stale = staleOf(ageEnd);
	const { candidates, mass } = selectCandidates({
		messages,
		index,
		protectedFrom,
		deliveredBefore,
		thinking,
		lastUser: frozen.lastUser,
		inputs,
		stale,
	});
	const prices = input.prices === null || input.prices === undefined ? null : ratesAt(input.prices, usage.tokens);
	const fallback = PRICE_PRESETS.anthropic;
	const rates = relativeRates(prices, fallback);
	const cold = input.cold ?? null;
	const responses = candidates.length === 0 ? [] : responseIndices(messages);
	const { groups, cum } =
		geometry === null ? { groups: [], cum: [] } : priceGroups(frozen, candidates, responses, geometry.tail, ageEnd);
	// Without the recall tools declared, a fold can come one request later at the earliest, when all of
	// this request will be in the cache: price it there, or the rewrite it waits for is too small.
	// The previous request's prompt (every message before the newest response), or this whole request.
	const cached = groups.length === 0 ? 0 : ((input.tools === undefined ? cum[frozen.lastOk] : cum.at(-1)) ?? 0);
	const ahead =
		geometry === null || groups.length === 0
			? null
			: compactionAhead({
					tokensPerMessage: frozen.tokensPerMessage,
					responses,
					context: usage.tokens,
					beforeTail: cum[protectedFrom] ?? 0,
					window: geometry.window,
					pi: input.compaction,
				});
	const decision = decidePriced({
		rates,
		groups,
		cachedEnd: cached,
		cold,
		ahead,
		overBudget: geometry !== null && usage.tokens > geometry.budget,
		budgetMinFreed: geometry?.budgetMinFreed ?? 0,
		...(input.tools !== undefined && {
			activation: {
				from: input.tools.rebuildsPrefix ? 0 : cached,
				tokens: input.tools.tokens,
			},
		}),
	});
	const lastLayer = index.layers[index.layers.length - 1];
	const fixed =
		geometry !== null && input.settings.fixedFolds
			? decideFixed({
					geometry,
					settings: input.settings,
					everCacheRead: input.everCacheRead ?? true,
					usage: usage.tokens,
					mass,
					layers: index.layers.length,
					cooldown: lastLayer !== undefined && responsesSince(messages, lastLayer.lastResponseAt) <= 1,
				})
			: null;
	const base = {
		type: "fold-plan" as const,
		substitutions: frozen.substitutions,
		usage,
		geometry,
		fixed:
			fixed === null
				? null
				: {
						threshold: fixed.threshold,
						thresholdFraction: fixed.thresholdFraction,
						step: fixed.step,
						armed: fixed.armed,
					},
		pricing: {
			rates,
			prices: prices !== null && prices.input > 0 ? prices : { ...fallback },
			cold,
			decision,
		},
		toolsWanted:
			fixed === null
				? toolsWanted(input, decision, ahead, rates)
				: input.tools !== undefined && fixed.fire
					? "now"
					: null,
		mass: Math.max(0, mass),
		maskedBlocks: frozen.maskedBlocks,
		maskedTokens: frozen.maskedTokens,
	};
	// Without the recall tools declared, nothing folds: the event waits one request for them.
	const fires = (fixed === null ? decision.fire : fixed.fire) && input.tools === undefined;
	if (!fires || candidates.length === 0) {
		const state: PlanState =
			geometry === null
				? "no-window"
				: usage.tokens > geometry.budget
					? "floor"
					: candidates.length === 0
						? "idle"
						: "accumulating";
		return { ...base, state, layer: null, usageAfter: usage.tokens };
	}
	// The fixed ladder folds every candidate; the priced rule those from the event's cut on.
	const fromMessage = fixed === null && decision.fire ? (groups[decision.event.from]?.messageIndex ?? 0) : 0;
	const chosen = candidates.filter((c) => c.messageIndex >= fromMessage);
	const commit = commitCandidates(input, chosen, thinking, ageEnd > 0 ? staleOf(0) : stale);
	const committed = commit.blocks.length + commit.inputs.length;
	if (committed === 0) return { ...base, state: "accumulating", layer: null, usageAfter: usage.tokens };

	const usageAfter = Math.max(0, usage.tokens - commit.saved);
	const layer: FrozenLayer = {
		type: "layer",
		v: FOLD_STATE_VERSION,
		seq: (lastLayer?.seq ?? 0) + 1,
		// An older release drops a layer whose reason it does not know: the rule's own reason goes in `decision`.
		reason:
			fixed?.reason ??
			(decision.fire && decision.reason === "budget" ? "budget" : lastLayer === undefined ? "threshold" : "step"),
		lastResponseAt: frozen.lastOkAt,
		usageBefore: usage.tokens,
		usageAfter,
		blocks: commit.blocks,
		...inputsField(commit.inputs),
		...(fixed === null && decision.fire && { decision: decisionRecord(decision, base.pricing.prices, rates, cold) }),
	};
	return {
		...base,
		substitutions: [...frozen.substitutions, ...commit.substitutions],
		state: "fold",
		layer,
		usageAfter,
		mass: Math.max(0, commit.leftover + mass - sumMass(chosen)),
		maskedBlocks: frozen.maskedBlocks + committed,
		maskedTokens: frozen.maskedTokens + commit.saved,
	};
}

function decisionRecord(
	decision: Extract<PricedDecision, { fire: true }>,
	prices: Prices,
	rates: RelativeRates,
	cold: ColdReason | null,
): FoldDecisionRecord {
	return {
		v: 1,
		rule: decision.reason,
		...(cold !== null && decision.reason === "cold" && { cold }),
		prices: { input: prices.input, output: prices.output, cacheRead: prices.cacheRead, cacheWrite: prices.cacheWrite },
		basis: rates.basis,
		rewrite: Math.round(decision.event.rewrite),
		payback: Math.round(decision.event.payback),
		rent: Math.round(decision.event.rent),
	};
}

/** Whether to declare the recall tools now (see FoldPlan.toolsWanted). */
function toolsWanted(
	input: PlanInput,
	decision: PricedDecision,
	ahead: CompactionAhead | null,
	rates: RelativeRates,
): FoldPlan["toolsWanted"] {
	if (input.tools === undefined) return null;
	if (decision.fire) return "now";
	// Held for Pi's compaction: nothing is due, and declaring the tools would cost on every request.
	if (decision.best === null || decision.held !== undefined) return null;
	const n = requestsToPay(decision.best);
	if (n === null || n > 1) return null;
	// Paid next request, it would be held for the compaction all the same: no tools for it.
	return ahead !== null && !paysBeforeCompaction(ahead, decision.best, rates) ? null : "soon";
}
