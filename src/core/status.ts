/**
 * The footer line: one glanceable summary, rendered as a plain string.
 *   ⧉ context-fold ×3 · ~41k tok masked · next fold: 3.1k/9.6k maskable · cache avg 66%
 */
import type { FoldPlan } from "./plan.ts";
import { formatTokens } from "./tokens.ts";

export interface FooterInput {
	plan: Pick<FoldPlan, "state" | "armed" | "mass" | "geometry" | "maskedTokens">;
	/** Fold events committed on the active branch. */
	events: number;
	/** Whole-session cache hit ratio in [0,1], or null when no response reported usage. */
	cacheAvg: number | null;
	/** Extra flags appended at the end, e.g. "⚠ fold not on wire". */
	flags?: readonly string[];
}

export function renderFooter(input: FooterInput): string {
	const { plan } = input;
	const parts = [`⧉ context-fold ×${input.events}`];
	parts.push(`~${formatTokens(plan.maskedTokens)} tok masked`);
	parts.push(renderGauge(plan));
	if (input.cacheAvg !== null) parts.push(`cache avg ${Math.round(input.cacheAvg * 100)}%`);
	for (const flag of input.flags ?? []) parts.push(flag);
	return parts.join(" · ");
}

/** The ladder's trigger gauge: whichever fold condition is binding right now. */
export function renderGauge(plan: Pick<FoldPlan, "state" | "armed" | "mass" | "geometry">): string {
	const g = plan.geometry;
	if (g === null) return "next fold: window unknown";
	if (plan.state === "floor") return "⚠ no more folds possible (over budget)";
	if (!plan.armed) return `next fold at ${Math.round(g.thresholdFraction * 100)}% ctx`;
	return `next fold: ${formatTokens(Math.min(plan.mass, g.step))}/${formatTokens(g.step)} maskable`;
}
