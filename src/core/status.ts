/**
 * The footer line: one glanceable summary, rendered as a plain string.
 *   ⧉ context-fold ×3 · ~41k tok masked · next fold: 3.1k/9.6k maskable · cache avg 66%
 */
import { type AccountingReport, foldValue, type Prices } from "./accounting.ts";
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
	/**
	 * The entry threshold as of now, when it changed since the plan was made (the first cache read
	 * arrived with the response): the gauge shows the threshold that will apply to the next request.
	 */
	thresholdFraction?: number;
}

export function renderFooter(input: FooterInput): string {
	const { plan } = input;
	const parts = [`⧉ context-fold ×${input.events}`];
	parts.push(`~${formatTokens(plan.maskedTokens)} tok masked`);
	parts.push(renderGauge(plan, input.thresholdFraction));
	if (input.cacheAvg !== null) parts.push(`cache avg ${Math.round(input.cacheAvg * 100)}%`);
	for (const flag of input.flags ?? []) parts.push(flag);
	return parts.join(" · ");
}

/** The ladder's trigger gauge: whichever fold condition is binding right now. */
export function renderGauge(
	plan: Pick<FoldPlan, "state" | "armed" | "mass" | "geometry">,
	thresholdFraction?: number,
): string {
	const g = plan.geometry;
	if (g === null) return "next fold: window unknown";
	if (plan.state === "floor") return "⚠ no more folds possible (over budget)";
	if (!plan.armed) return `next fold at ${Math.round((thresholdFraction ?? g.thresholdFraction) * 100)}% ctx`;
	return `next fold: ${formatTokens(Math.min(plan.mass, g.step))}/${formatTokens(g.step)} maskable`;
}

export interface StatusFlags {
	/** A fold never reached the provider (the whole old prompt was read back from cache). */
	offWire?: boolean;
	/** A second compaction forced by the threshold or an overflow. */
	secondForcedCompaction?: boolean;
	/** Even after every fold the plan can make, the context is over the budget. */
	irreducible?: boolean;
	/** Cold (no cache read on the last response) while carrying more than a fresh start would cost. */
	coldCarry?: boolean;
	/** Codes recalled again and again. */
	recallChurn?: readonly string[];
}

export interface StatusInput {
	plan: Pick<FoldPlan, "state" | "armed" | "mass" | "geometry" | "maskedTokens" | "maskedBlocks" | "usage"> | null;
	events: number;
	accounting: AccountingReport;
	/** Model prices per million tokens, when the model declares them. */
	prices?: Prices;
	flags: StatusFlags;
}

/** The full status text shown by `/context-fold status` (and, later, by the CLI). */
export function renderStatus(input: StatusInput): string {
	const { plan, accounting: a } = input;
	const lines = ["context-fold status"];
	lines.push(
		`  folds: ${input.events} event(s), ${plan?.maskedBlocks ?? 0} block(s) masked, ~${formatTokens(plan?.maskedTokens ?? 0)} tok out of every request`,
	);
	if (plan === null) {
		lines.push("  position: no request yet");
	} else {
		const g = plan.geometry;
		const pct = g
			? ` (${Math.round((plan.usage.tokens / g.window) * 100)}% of ${formatTokens(g.window)}, budget ${formatTokens(g.budget)})`
			: "";
		lines.push(
			`  position: usage ~${formatTokens(plan.usage.tokens)} ${plan.usage.source}${pct}; ${renderGauge(plan)}`,
		);
	}
	const last = a.perTurn.at(-1);
	lines.push(
		a.sessionRatio === null
			? "  cache: no usage reported yet"
			: `  cache: ${pct100(a.sessionRatio)} hit over the session${last !== undefined ? `, ${pct100(last)} on the last response` : ""} (${a.responses} responses)`,
	);
	if (a.changes.length > 0) {
		const charged = a.changes.filter((c) => c.reprefilled !== null).length;
		const cost = a.writesReported
			? `re-prefilled ~${formatTokens(a.reprefilled)} tok because folds moved the prefix (${charged} of ${a.changes.length} change(s) answered)`
			: `re-prefill ~${formatTokens(a.reprefilled)} tok from cache reads; writes unreported by this provider, so their cost is not shown`;
		lines.push(`  fold cost: ~${formatTokens(a.maskedSent)} tok not sent so far; ${cost}`);
		if (input.prices !== undefined && a.writesReported) {
			const v = foldValue(a, input.prices);
			lines.push(
				`  net: ${v.net >= 0 ? "+" : "-"}$${Math.abs(v.net).toFixed(4)} (saved $${v.saved.toFixed(4)} at cache-read price, paid $${v.cost.toFixed(4)} in re-writes)`,
			);
		}
	}
	const flags: string[] = [];
	if (input.flags.offWire) flags.push("a fold was committed but never reached the provider (see docs: wire watchdog)");
	if (input.flags.secondForcedCompaction) flags.push("second forced compaction: consider /fold-handoff");
	if (input.flags.irreducible) flags.push("irreducible context: over the budget even with everything foldable folded");
	if (input.flags.coldCarry) flags.push("cold cache with a large carry: a fresh start (/fold-handoff) would cost less");
	if (input.flags.recallChurn && input.flags.recallChurn.length > 0) {
		flags.push(
			`recall churn: ${input.flags.recallChurn.map((c) => `{#${c}}`).join(", ")} recalled repeatedly (unfold may be cheaper)`,
		);
	}
	lines.push(flags.length === 0 ? "  flags: none" : `  flags:\n${flags.map((f) => `    ⚠ ${f}`).join("\n")}`);
	return lines.join("\n");
}

function pct100(r: number): string {
	return `${Math.round(r * 100)}%`;
}

/** The same code recalled this many times is "churn": unfolding it once would be cheaper. */
export const RECALL_CHURN = 3;

export interface FlagsInput {
	/** The plan the flags judge: the latest request's (extension) or the next request's (CLI); null before any. */
	plan: Pick<FoldPlan, "geometry" | "usage" | "usageAfter" | "mass"> | null;
	accounting: AccountingReport;
	/** `recall_folded code=` calls per code on the branch. */
	recallCalls: ReadonlyMap<string, number>;
	/** Compactions the window forced on the branch (see BranchState.forcedCompactions). */
	forcedCompactions: number;
	/** What a fresh start is assumed to cost (CONTEXTFOLD_RECON_TOKENS). */
	reconTokens: number;
}

/** The status flags, one definition for `/context-fold status`, the footer and the CLI's `status`. */
export function statusFlags(input: FlagsInput): Required<Omit<StatusFlags, "recallChurn">> & { recallChurn: string[] } {
	const { plan, accounting: a } = input;
	const g = plan?.geometry ?? null;
	return {
		offWire: a.offWire,
		secondForcedCompaction: input.forcedCompactions >= 2,
		// Judged after the plan: its own fold applied, and whatever mass is still foldable taken off too.
		irreducible: plan !== null && g !== null && plan.usageAfter - plan.mass > g.budget,
		// The last response read nothing from cache, and carrying this context on costs more than a fresh start.
		coldCarry: a.perTurn.at(-1) === 0 && plan !== null && plan.usage.tokens > input.reconTokens,
		recallChurn: [...input.recallCalls].filter(([, n]) => n >= RECALL_CHURN).map(([c]) => c),
	};
}
