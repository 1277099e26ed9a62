/**
 * What a fold is expected to pay back, and which rule decided it, in the words and figures the
 * status (inside Pi and in the CLI, text and JSON) and the `/context-fold` menu share. The amounts
 * are the priced rule's (policy/price.ts): input-token equivalents, in dollars where the model
 * declares prices.
 */
import type { Prices } from "./accounting.ts";
import { type FoldRule, pinsWords, ruleLabel, TEST_FIXED_FOLDS_ENV } from "./fold-rule.ts";
import type { FoldDecisionRecord, FrozenLayer } from "./layers.ts";
import type { FoldPlan } from "./plan.ts";
import { type ColdReason, type PricedEvent, requestsToPay } from "./policy/price.ts";
import { formatTokens } from "./tokens.ts";
import { formatDollars, plural } from "./wording.ts";

/** A fold's cost and return, as the plan prices it or a layer's decision record keeps it. */
export type Payback = Pick<PricedEvent, "rewrite" | "payback">;

/** Requests after which a fold has paid for its rewrite: 0 when it saves from the first, null when never. */
export function paysBackAfter(e: Payback): number | null {
	if (e.rewrite <= 0) return 0;
	return e.payback > 0 ? Math.ceil(e.rewrite / e.payback) : null;
}

/**
 * A fold's expected payback, in words: what its rewrite costs once, what it saves on every later
 * request, and after how many requests it has paid for itself. Amounts are input-token equivalents;
 * with `prices`, in dollars too.
 */
export function paybackWords(e: Payback, prices?: Prices): string {
	const dollars = (tokens: number) =>
		prices !== undefined && prices.input > 0 ? ` (${formatDollars((tokens * prices.input) / 1e6)})` : "";
	if (e.rewrite <= 0)
		return `saves from the first request: ~${formatTokens(e.payback)} tok-eq${dollars(e.payback)} per request`;
	const n = paysBackAfter(e);
	return `rewrite ~${formatTokens(e.rewrite)} tok-eq${dollars(e.rewrite)} once, saves ~${formatTokens(e.payback)}${dollars(e.payback)} per later request${n === null ? "" : `: pays back after ${plural(n, "request")}`}`;
}

/** Why the cached prefix is taken to be gone, in words. */
export const COLD_WORDS: Readonly<Record<ColdReason, string>> = {
	idle: "idle past the cache lifetime",
	"model-change": "another model than the last response",
	uncached: "the provider caches nothing",
	tools: "declaring the recall tools rewrote the prompt",
};

const FIRED = {
	rent: "re-reading old output had cost half again the rewrite",
	cold: "cache cold: the rewrite was free",
	budget: "over the budget",
} as const;

const DUE = {
	rent: "re-reading old output has cost half again the rewrite",
	cold: "cache cold: the rewrite is free",
	budget: "over the budget",
} as const;

/** Why a fold due on the next request will fire, in a few words. */
export function dueWords(rule: FoldDecisionRecord["rule"]): string {
	return DUE[rule];
}

/** Why the priced rule fired (or fires), in a few words; a cold cache with its reason when known. */
export function firedWords(rule: FoldDecisionRecord["rule"], cold?: ColdReason | null): string {
	if (rule === "cold" && cold !== undefined && cold !== null) return `cache cold: ${COLD_WORDS[cold]}`;
	return FIRED[rule];
}

/** The layer a status names as the last fold: its number and, from the priced rule, its decision record. */
export type LastFold = Pick<FrozenLayer, "seq" | "decision">;

type RulePlan = Pick<FoldPlan, "state" | "fixed" | "pricing">;

/** The fold due or waiting under the priced rule, and the last fold the rule decided. */
export interface FoldPaybacks {
	next: {
		/**
		 * `due`: the rule fires (on the next request); `waiting`: the event closest to paying; `held`:
		 * its rent is paid, but Pi's compaction ahead makes it a loss (policy/horizon.ts).
		 */
		state: "due" | "waiting" | "held";
		rule: FoldDecisionRecord["rule"] | null;
		cold: ColdReason | null;
		event: PricedEvent;
		/** The prices to say it in dollars with (the model's own), or undefined: tokens only. */
		prices: Prices | undefined;
	} | null;
	last: { seq: number; record: FoldDecisionRecord; prices: Prices | undefined } | null;
}

/**
 * The expected payback of the fold due or waiting (priced rule only: the fixed ladder does not price
 * its folds) and of the last fold, from its decision record. `pending`: the plan previews a request
 * not yet sent (the CLI), so a fold it makes is due, not done.
 */
export function foldPaybacks(input: {
	plan: RulePlan | null;
	fixed: boolean;
	lastFold?: LastFold | null | undefined;
	pending?: boolean;
}): FoldPaybacks {
	const { plan } = input;
	let next: FoldPaybacks["next"] = null;
	if (plan !== null && !input.fixed) {
		const d = plan.pricing.decision;
		const prices = plan.pricing.rates.basis === "model" ? plan.pricing.prices : undefined;
		const cold = plan.pricing.cold;
		// A fold this very plan made is the last fold (its record), unless the request is still to come.
		if (d.fire && (plan.state !== "fold" || input.pending === true))
			next = { state: "due", rule: d.reason, cold, event: d.event, prices };
		else if (!d.fire && d.best !== null)
			next = { state: d.held === undefined ? "waiting" : "held", rule: null, cold, event: d.best, prices };
	}
	const lastFold = input.lastFold ?? null;
	const record = lastFold?.decision;
	const last =
		lastFold === null || record === undefined
			? null
			: { seq: lastFold.seq, record, prices: record.basis === "model" ? record.prices : undefined };
	return { next, last };
}

/** The paybacks as status lines: `fold due (…): …` or `next fold: …`, then `last fold #n (…): …`. */
export function paybackLines(p: FoldPaybacks): string[] {
	const out: string[] = [];
	const n = p.next;
	if (n !== null)
		out.push(
			// Why a fold is due is said where it is announced (the position line, the gauge); not again here.
			`${n.state === "due" ? "fold due" : n.state === "held" ? "fold held for Pi's compaction" : "next fold"}: ${paybackWords(n.event, n.prices)}`,
		);
	if (p.last !== null)
		out.push(
			`last fold #${p.last.seq} (${firedWords(p.last.record.rule, p.last.record.cold)}): ${paybackWords(p.last.record, p.last.prices)}`,
		);
	return out;
}

/** The paybacks as JSON (the CLI's `status --json`, context-fold/status@1 `pricing.next` and `pricing.lastFold`). */
export function paybacksJson(p: FoldPaybacks) {
	const n = p.next;
	const last = p.last;
	return {
		next:
			n === null
				? null
				: {
						state: n.state,
						rule: n.rule,
						freed: Math.round(n.event.freed),
						rewrite: Math.round(n.event.rewrite),
						payback: Math.round(n.event.payback),
						rent: Math.round(n.event.rent),
						/** Requests until the rule fires at the current rate (0: due; null: not before the cache goes cold). */
						requestsUntilDue: n.state === "due" ? 0 : n.state === "held" ? null : requestsToPay(n.event),
						paysBackAfter: paysBackAfter(n.event),
						words: paybackWords(n.event, n.prices),
					},
		lastFold:
			last === null
				? null
				: {
						seq: last.seq,
						...last.record,
						cold: last.record.cold ?? null,
						paysBackAfter: paysBackAfter(last.record),
						words: paybackWords(last.record, last.prices),
					},
	};
}

/** The fixed ladder decides: as the rule says, else as the plan shows. */
export function isFixedRule(plan: RulePlan | null, rule: FoldRule | undefined): boolean {
	return rule !== undefined ? rule.type === "fixed" : plan !== null && plan.fixed !== null;
}

/** The status's rule line: which rule decides, on what prices, and whether the cache is cold. */
export function ruleLine(plan: RulePlan | null, rule?: FoldRule): string {
	if (isFixedRule(plan, rule)) {
		if (rule === undefined || rule.type !== "fixed")
			return "fixed fold points (foldAt/foldStep/coldFoldAt set by hand)";
		if (rule.pinnedBy === "test-seam") return `fixed fold points (test seam ${TEST_FIXED_FOLDS_ENV}=1)`;
		return `fixed fold points, set by hand: ${pinsWords(rule.pins)}; the priced rule is off until ${rule.pins.length === 1 ? "it is" : "they are"} unset`;
	}
	if (plan === null) return "priced";
	const basis =
		plan.pricing.rates.basis === "ratios"
			? "the model declares no prices: decided in tokens with Anthropic's read/write ratios"
			: `read ${plan.pricing.rates.read.toFixed(2)}×, write ${plan.pricing.rates.write.toFixed(2)}× the input price`;
	return `priced (${basis}${plan.pricing.cold === null ? "" : `; cache cold: ${COLD_WORDS[plan.pricing.cold]}`})`;
}

/** The rule and the paybacks in short lines, for the `/context-fold` menu's title. */
export function ruleSummary(input: { plan: RulePlan | null; rule: FoldRule; lastFold?: LastFold | null }): string[] {
	const paybacks = foldPaybacks({ plan: input.plan, fixed: input.rule.type === "fixed", lastFold: input.lastFold });
	return [`fold rule: ${ruleLabel(input.rule)}`, ...paybackLines(paybacks).map((l) => `payback of the ${l}`)];
}
