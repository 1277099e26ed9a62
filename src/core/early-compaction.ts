/**
 * The early-compaction question asked of one branch, the same way by the extension (between runs)
 * and by `simulate` (before each replayed request): the facts policy/compact.ts decides on, read
 * from the next request's plan, the context Pi would compact, and Pi's compaction settings.
 */
import { isSuccessfulResponse, promptTokensOf, type ThinkingPolicy, type ViewMessage } from "./blocks.ts";
import { applyFrozenLayers } from "./frozen.ts";
import type { MaskIndex } from "./layers.ts";
import type { FoldPlan } from "./plan.ts";
import { type CompactDecision, decideCompaction } from "./policy/compact.ts";
import { SUMMARY_TOKENS_BOUND } from "./policy/horizon.ts";
import type { PiMessage } from "./session/view.ts";
import { findCutIndex, type PiCompactionSettings } from "./simulate/compaction.ts";
import { MAX_REPORTED_TOKENS } from "./tokens.ts";

export interface EarlyCompactionInput {
	/** The next request, planned (not committed): the context Pi would send now, before any new prompt. */
	plan: FoldPlan;
	/** The context Pi would compact, in order, and its view (`view[i]` of `messages[i]`). */
	messages: readonly PiMessage[];
	view: readonly ViewMessage[];
	index: MaskIndex;
	thinking: ThinkingPolicy;
	/** Input folds apply (false for a model whose provider refused them), as in the plan. */
	inputs?: boolean;
	/** Pi's compaction settings for this model: where it compacts (window - reserve) and what it keeps. */
	pi: PiCompactionSettings;
}

export interface EarlyCompaction {
	decision: CompactDecision;
	/** Index of the first message Pi would keep. */
	cut: number;
}

/**
 * The priced decision for the branch as it stands, or null when there is nothing to decide: no window
 * (no budget), or no cut point (Pi would find nothing to compact).
 *
 * What the compaction keeps (K) is the context less what it takes out: every message before Pi's cut
 * point (found on Pi's own estimate, as Pi finds it), counted as sent (folded blocks as their
 * digests), less the summary that replaces them. The rent counts each successful response since the
 * newest compaction whose reported prompt (after any fold it carried) was over the budget, by its
 * excess over K: what a compaction would have saved on it. A fold over the budget does not refund
 * the excess the requests before it paid, so it does not restart the count; it only lowers the
 * excess of the requests after it. (Counting from the newest fold instead restarted the rent at every
 * fold made at the budget, and a session folding there again and again never let it pay.) Folding
 * still comes first: the decision waits while the next request can fold.
 */
export function earlyCompaction(input: EarlyCompactionInput): EarlyCompaction | null {
	const { plan, view } = input;
	const geometry = plan.geometry;
	if (geometry === null) return null;
	const cut = findCutIndex(
		input.messages,
		view.map((v) => v.entryId),
		input.pi.keepRecentTokens,
	);
	if (cut < 0) return null;
	const frozen = applyFrozenLayers(view, input.index, input.thinking, input.inputs !== false);
	let removed = 0;
	for (let i = 0; i < cut; i++) removed += frozen.tokensPerMessage[i] ?? 0;
	const context = plan.usageAfter;
	const kept = Math.max(0, context - Math.max(0, removed - SUMMARY_TOKENS_BOUND));
	let rentTokens = 0;
	for (const m of view) {
		if (!isSuccessfulResponse(m) || m.usage === undefined || m.timestamp <= frozen.latestCompaction) continue;
		const prompt = promptTokensOf(m.usage);
		if (prompt > geometry.budget && prompt <= MAX_REPORTED_TOKENS) rentTokens += Math.max(0, prompt - kept);
	}
	return {
		cut,
		decision: decideCompaction({
			rates: plan.pricing.rates,
			cold: plan.pricing.cold,
			context,
			kept,
			budget: geometry.budget,
			piThreshold: geometry.window - input.pi.reserveTokens,
			canFold: plan.state !== "floor",
			rentTokens,
			minFreed: geometry.budgetMinFreed,
		}),
	};
}
