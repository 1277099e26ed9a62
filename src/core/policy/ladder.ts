/**
 * The fold ladder: when a fold event fires. Pure arithmetic over usage, mass and settings.
 *
 * - Nothing happens below the entry threshold (fold-at, or cold-fold-at while no cache read was ever
 *   seen). Once crossed, or once any layer exists, the ladder stays armed.
 * - Every event must free at least one step of the window, the first one included, so no event
 *   rewrites the prefix for less than a step's worth.
 * - Never two events on consecutive requests, unless usage is over the budget.
 * - Over the budget, fold at once, provided the fold frees at least a quarter step: every event
 *   rewrites the prefix from its first masked block (typically the whole protected tail), and the
 *   economics benchmark showed budget folds freeing ~1k tokens while rewriting ~25k, over and over.
 *   With less than that left to fold, that is the floor: the plan says so and does not churn.
 */
import type { Settings } from "../settings.ts";

export type LadderState = "no-window" | "below-threshold" | "accumulating" | "cooldown" | "fold" | "floor";

export interface LadderGeometry {
	window: number;
	budget: number;
	/** Entry threshold in tokens, and the fraction it came from. */
	threshold: number;
	thresholdFraction: number;
	cold: boolean;
	step: number;
	tail: number;
}

/** Over the budget, a fold must free at least this share of a step (see the header). */
export const BUDGET_FOLD_MIN_STEP_SHARE = 0.25;

export function ladderGeometry(
	settings: Settings,
	window: number | undefined,
	everCacheRead: boolean,
): LadderGeometry | null {
	if (window === undefined || !Number.isFinite(window) || window <= 0) return null;
	const byFraction = settings.budgetFraction * window;
	const budget = Math.max(
		1,
		Math.floor(settings.budgetCap === null ? byFraction : Math.min(settings.budgetCap, byFraction)),
	);
	const thresholdFraction = everCacheRead ? settings.foldAt : settings.coldFoldAt;
	return {
		window,
		budget,
		threshold: Math.floor(thresholdFraction * window),
		thresholdFraction,
		cold: !everCacheRead,
		step: Math.max(1, Math.floor(settings.foldStep * window)),
		tail: Math.max(0, Math.min(settings.tail, Math.floor(budget / 2))),
	};
}

export interface LadderInput {
	geometry: LadderGeometry | null;
	usage: number;
	/** Estimated tokens a fold event would free now. */
	mass: number;
	layers: number;
	/** The previous request carried a fold event. */
	cooldown: boolean;
}

export interface LadderDecision {
	state: LadderState;
	reason?: "threshold" | "step" | "budget";
	armed: boolean;
}

export function decideLadder(input: LadderInput): LadderDecision {
	const g = input.geometry;
	if (g === null) return { state: "no-window", armed: false };
	const armed = input.layers > 0 || input.usage >= g.threshold;
	if (input.usage > g.budget) {
		if (input.mass >= g.step * BUDGET_FOLD_MIN_STEP_SHARE) return { state: "fold", reason: "budget", armed: true };
		return { state: "floor", armed: true };
	}
	if (!armed) return { state: "below-threshold", armed };
	if (input.mass >= g.step) {
		if (input.cooldown) return { state: "cooldown", armed };
		return { state: "fold", reason: input.layers === 0 ? "threshold" : "step", armed };
	}
	return { state: "accumulating", armed };
}
