/**
 * The geometry a fold decision works in, from the window and the settings: the budget context-fold
 * keeps the context under, the protected tail of recent context that never folds by age, and the
 * least an event over the budget must free to be worth a rewrite.
 */
import type { Settings } from "../settings.ts";

export interface FoldGeometry {
	window: number;
	budget: number;
	tail: number;
	/**
	 * Over the budget, an event must free at least this much (1.5 % of the window): every event
	 * rewrites the prefix from its first masked block, and budget folds freeing ~1k tokens while
	 * rewriting ~25k, over and over, were measured in the economics benchmark. With less left to fold,
	 * that is the floor: the plan says so and does not churn.
	 */
	budgetMinFreed: number;
	/**
	 * Where the priced rule folds at once: the budget, or lower in a small window, before Pi's own
	 * compaction (at `window - 16,384` by Pi's default reserve) with a margin of two budget minimums
	 * for the request's growth. A fold that keeps the context under Pi's threshold saves a
	 * compaction (a summary and a full rewrite), which outweighs any rewrite.
	 */
	foldLine: number;
}

/** Pi's default compaction reserve (both versions): Pi compacts once the context passes `window - this`. */
export const PI_RESERVE_TOKENS = 16_384;

/** Share of the window an event over the budget must free (see FoldGeometry.budgetMinFreed). */
export const BUDGET_FOLD_MIN_SHARE = 0.015;

export function foldGeometry(settings: Settings, window: number | undefined): FoldGeometry | null {
	if (window === undefined || !Number.isFinite(window) || window <= 0) return null;
	const byFraction = settings.budgetFraction * window;
	const budget = Math.max(
		1,
		Math.floor(settings.budgetCap === null ? byFraction : Math.min(settings.budgetCap, byFraction)),
	);
	const budgetMinFreed = Math.max(1, Math.floor(BUDGET_FOLD_MIN_SHARE * window));
	return {
		window,
		budget,
		tail: Math.max(0, Math.min(settings.tail, Math.floor(budget / 2))),
		budgetMinFreed,
		foldLine: Math.max(1, Math.min(budget, window - PI_RESERVE_TOKENS - 2 * budgetMinFreed)),
	};
}
