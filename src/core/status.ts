/**
 * The footer line: one glanceable summary, rendered as a plain string.
 *   ⧉ context-fold ×3 · ~41k tok masked · next fold in ~4 requests (re-reads 3.1k of 18k for a 12k rewrite) · cache avg 66%
 */
import { type AccountingReport, foldValue, type Prices } from "./accounting.ts";
import type { FoldRule } from "./fold-rule.ts";
import type { FoldDecisionRecord } from "./layers.ts";
import { dueWords, firedWords, foldPaybacks, isFixedRule, type LastFold, paybackLines, ruleLine } from "./payback.ts";
import type { FoldPlan } from "./plan.ts";
import type { CompactDecision, EarlyCompactionRecord } from "./policy/compact.ts";
import { requestsToThreshold } from "./policy/horizon.ts";
import { type ColdReason, type PricedEvent, RENT_MULTIPLE, requestsToPay } from "./policy/price.ts";
import { formatTokens } from "./tokens.ts";
import { formatDollars, plural } from "./wording.ts";

export interface FooterInput {
	plan: Pick<FoldPlan, "state" | "fixed" | "pricing" | "mass" | "geometry" | "maskedTokens">;
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

// paybackWords moved to payback.ts with the rest of the rule's wording; importers of status.ts keep it.
export { paybackWords } from "./payback.ts";

export function renderFooter(input: FooterInput): string {
	const { plan } = input;
	const parts = [`⧉ context-fold ×${input.events}`];
	parts.push(`~${formatTokens(plan.maskedTokens)} tok masked`);
	parts.push(renderGauge(plan, input.thresholdFraction));
	if (input.cacheAvg !== null) parts.push(`cache avg ${Math.round(input.cacheAvg * 100)}%`);
	for (const flag of input.flags ?? []) parts.push(flag);
	return parts.join(" · ");
}

/** What the next fold waits for, in plain words (the fixed ladder: its threshold or step). */
export function renderGauge(
	plan: Pick<FoldPlan, "state" | "fixed" | "pricing" | "mass" | "geometry">,
	thresholdFraction?: number,
): string {
	const g = plan.geometry;
	if (g === null) return "next fold: window unknown";
	const f = plan.fixed;
	// Due, but this request committed nothing (held back while the recall tools are declared): it comes next.
	const due = f === null && plan.state !== "fold" ? plan.pricing.decision : null;
	if (due?.fire) return `next fold: on the next request (${dueWords(due.reason)})`;
	// A paid fold held for Pi's compaction ahead (over the budget too: folds are possible, not the floor).
	const held = f === null && !plan.pricing.decision.fire ? plan.pricing.decision.held : undefined;
	if (held !== undefined)
		return `next fold: after Pi's compaction (~${plural(Math.max(1, requestsToThreshold(held)), "request")} away), cheaper than folding now`;
	if (plan.state === "floor") return "⚠ no more folds possible (over budget)";
	if (f !== null) {
		if (!f.armed) return `next fold at ${Math.round((thresholdFraction ?? f.thresholdFraction) * 100)}% ctx`;
		return `next fold: ${formatTokens(Math.min(plan.mass, f.step))}/${formatTokens(f.step)} maskable`;
	}
	const d = plan.pricing.decision;
	if (d.fire) return `folded now (${firedWords(d.reason)})`;
	if (d.best === null) return "next fold: nothing old enough to fold yet";
	if (plan.pricing.cold !== null) return "next fold: at once (cache cold)";
	return `next fold ${waitWords(d.best)}`;
}

/** How long a waiting event still waits, and for what. */
function waitWords(e: PricedEvent): string {
	const n = requestsToPay(e);
	const what = `re-reads ${formatTokens(Math.max(0, e.rent))} of ${formatTokens(Math.max(0, RENT_MULTIPLE * e.rewrite))} for a ${formatTokens(Math.max(0, e.rewrite))} rewrite`;
	if (n === null) return `when the cache goes cold (${what})`;
	return `in ~${plural(Math.max(1, n), "request")} (${what})`;
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

/** A fold the plan would commit on the next request, not yet in the session (the CLI reads a file). */
export interface DueFold {
	/** The layer's recorded reason (threshold, step, budget). */
	reason: string;
	/** Why the priced rule fires it, when it does (the recorded reason stays 0.1.0's for older readers). */
	rule?: FoldDecisionRecord["rule"] | null;
	cold?: ColdReason | null;
	blocks: number;
	tokens: number;
}

export interface StatusInput {
	plan: Pick<
		FoldPlan,
		"state" | "fixed" | "pricing" | "mass" | "geometry" | "maskedTokens" | "maskedBlocks" | "usage"
	> | null;
	/** When given, the position line names this fold instead of the gauge, so one set of numbers is shown. */
	due?: DueFold | null;
	events: number;
	accounting: AccountingReport;
	/** Model prices per million tokens, when the model declares them. */
	prices?: Prices;
	flags: StatusFlags;
	/** Which rule decides and why (fold-rule.ts); without it the rule line is worded from the plan alone. */
	rule?: FoldRule;
	/** The newest fold layer on the branch, for the last fold's payback. */
	lastFold?: LastFold | null;
	/** Early compactions (policy/compact.ts): how many the branch holds, the newest one's record, and the decision waiting now. */
	early?: { count: number; last: EarlyCompactionRecord | null; waiting?: CompactDecision | null };
}

/** The status line on early compactions, or null when there is nothing to say. */
export function earlyLine(early: StatusInput["early"]): string | null {
	if (early === undefined) return null;
	const parts: string[] = [];
	const last = early.last;
	if (early.count > 0 && last !== null) {
		const why =
			last.rule === "cold"
				? `the cache was cold${last.cold !== undefined ? ` (${last.cold})` : ""}, so the rewrite was free`
				: `rent paid ~${formatTokens(last.rent)} ≥ ${RENT_MULTIPLE} × rewrite ~${formatTokens(last.rewrite)}`;
		parts.push(
			`${plural(early.count, "early compaction")} from the seed index; the last took ~${formatTokens(last.context)} to ~${formatTokens(last.kept)} tok (${why}); recall_folded still reaches what it removed`,
		);
	}
	const w = early.waiting;
	if (w != null && !w.fire && w.reason === "rent")
		parts.push(
			`over the budget with no fold due: compacts early ${w.requests === null ? "only if the rent grows" : `in ~${plural(w.requests, "more request")}`} (rent ~${formatTokens(w.rent)} of ${RENT_MULTIPLE} × rewrite ~${formatTokens(w.rewrite)})`,
		);
	return parts.length === 0 ? null : parts.join("; ");
}

/** The full status text shown by `/context-fold status` (and, later, by the CLI). */
export function renderStatus(input: StatusInput): string {
	const { plan, accounting: a } = input;
	const lines = ["context-fold status"];
	lines.push(
		`  folds: ${plural(input.events, "event")}, ${plural(plan?.maskedBlocks ?? 0, "block")} masked, ~${formatTokens(plan?.maskedTokens ?? 0)} tok out of every request`,
	);
	if (plan === null) {
		lines.push("  position: no request yet");
	} else {
		const g = plan.geometry;
		const pct = g
			? ` (${Math.round((plan.usage.tokens / g.window) * 100)}% of ${formatTokens(g.window)}, budget ${formatTokens(g.budget)})`
			: "";
		const due = input.due;
		const next =
			due === undefined || due === null
				? renderGauge(plan)
				: `fold due on the next request (${due.rule ? firedWords(due.rule, due.cold) : due.reason}): ${plural(due.blocks, "block")}, ~${formatTokens(due.tokens)} tok`;
		lines.push(`  position: usage ~${formatTokens(plan.usage.tokens)} ${plan.usage.source}${pct}; ${next}`);
	}
	if (plan !== null || input.rule !== undefined) lines.push(`  rule: ${ruleLine(plan, input.rule)}`);
	const paybacks = foldPaybacks({
		plan,
		fixed: isFixedRule(plan, input.rule),
		lastFold: input.lastFold,
		pending: input.due !== undefined,
	});
	for (const p of paybackLines(paybacks)) lines.push(`  payback: ${p}`);
	const early = earlyLine(input.early);
	if (early !== null) lines.push(`  compaction: ${early}`);
	const last = a.perTurn.at(-1);
	lines.push(
		a.sessionRatio === null
			? "  cache: no usage reported yet"
			: `  cache: ${pct100(a.sessionRatio)} hit over the session${last !== undefined ? `, ${pct100(last)} on the last response` : ""} (${plural(a.responses, "response")})`,
	);
	if (a.changes.length > 0) {
		const charged = a.changes.filter((c) => c.reprefilled !== null).length;
		const cost = a.writesReported
			? `re-prefilled ~${formatTokens(a.reprefilled)} tok because folds moved the prefix (${charged} of ${plural(a.changes.length, "change")} answered)`
			: `re-prefill ~${formatTokens(a.reprefilled)} tok from cache reads; writes unreported by this provider, so their cost is not shown`;
		lines.push(`  fold cost: ~${formatTokens(a.maskedSent)} tok not sent so far; ${cost}`);
		if (input.prices !== undefined && a.writesReported) {
			const v = foldValue(a, input.prices);
			lines.push(
				`  net: ${formatDollars(v.net, { signed: true })} (saved ${formatDollars(v.saved)} at cache-read price, paid ${formatDollars(v.cost)} in re-writes)`,
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
	// The order of the keys is the JSON schema's (context-fold/status@1).
	return {
		offWire: a.offWire,
		// Judged after the plan: its own fold applied, and whatever mass is still foldable taken off too.
		irreducible: plan !== null && g !== null && plan.usageAfter - plan.mass > g.budget,
		recallChurn: [...input.recallCalls].filter(([, n]) => n >= RECALL_CHURN).map(([c]) => c),
		secondForcedCompaction: input.forcedCompactions >= 2,
		// The last response read nothing from cache, and carrying this context on costs more than a fresh start.
		coldCarry: a.perTurn.at(-1) === 0 && plan !== null && plan.usage.tokens > input.reconTokens,
	};
}
