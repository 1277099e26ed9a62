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
	 * Over the budget, the least worth a rewrite (1.5 % of the window): what a fold of the fixed ladder
	 * must free there, and an early compaction. Budget folds freeing ~1k tokens while rewriting ~25k,
	 * over and over, were measured in the economics benchmark.
	 */
	budgetMinFreed: number;
}

/** Share of the window a fold or compaction over the budget must free (see FoldGeometry.budgetMinFreed). */
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
	};
}
