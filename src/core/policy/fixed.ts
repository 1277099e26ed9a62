/**
 * The fixed ladder: fold points set by hand. When a user sets `foldAt`, `foldStep` or `coldFoldAt`
 * (environment or settings file), these decide instead of the priced rule (price.ts), exactly as
 * they did before the rule was priced:
 *
 * - Nothing happens below the entry threshold (foldAt, or coldFoldAt while no cache read was ever
 *   seen). Once crossed, or once any layer exists, the ladder stays armed.
 * - Every event must free at least one step of the window, the first one included.
 * - Never two events on consecutive requests, unless usage is over the budget.
 * - Over the budget, fold at once when the fold frees at least the geometry's budget minimum.
 */
import type { Settings } from "../settings.ts";
import type { FoldGeometry } from "./geometry.ts";

export interface FixedInput {
	geometry: FoldGeometry;
	settings: Settings;
	everCacheRead: boolean;
	usage: number;
	/** Estimated tokens a fold event would free now. */
	mass: number;
	layers: number;
	/** The previous request carried a fold event. */
	cooldown: boolean;
}

export interface FixedDecision {
	fire: boolean;
	reason?: "threshold" | "step" | "budget";
	/** The entry threshold in tokens and the fold step, for the gauge. */
	threshold: number;
	thresholdFraction: number;
	step: number;
	armed: boolean;
}

export function decideFixed(input: FixedInput): FixedDecision {
	const g = input.geometry;
	const thresholdFraction = input.everCacheRead ? input.settings.foldAt : input.settings.coldFoldAt;
	const threshold = Math.floor(thresholdFraction * g.window);
	const step = Math.max(1, Math.floor(input.settings.foldStep * g.window));
	const facts = { threshold, thresholdFraction, step };
	const armed = input.layers > 0 || input.usage >= threshold;
	if (input.usage > g.budget) {
		if (input.mass >= g.budgetMinFreed) return { ...facts, fire: true, reason: "budget", armed: true };
		return { ...facts, fire: false, armed: true };
	}
	if (!armed || input.mass < step || input.cooldown) return { ...facts, fire: false, armed };
	return { ...facts, fire: true, reason: input.layers === 0 ? "threshold" : "step", armed };
}
