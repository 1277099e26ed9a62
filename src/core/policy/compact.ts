/**
 * The priced early compaction: when the context is over the budget and nothing more can fold,
 * whether to compact now (deterministically, from the seed index) instead of waiting for Pi's own
 * threshold. The same terms as the fold rule (price.ts): input-token equivalents, rates relative to
 * the uncached input price, rent or buy with RENT_MULTIPLE.
 *
 * A compaction is a fold of everything before Pi's cut point into the summary. With `C` the context
 * now and `K` what the compaction keeps (the recent messages Pi keeps, plus the summary):
 * - rewrite, once: the prompt changes from the first message on, so the kept `K` tokens are written
 *   instead of the `C` cached ones read: `K·w - C·r` (rewriteCost with span C, freed C - K). On a
 *   cold cache all of it is written either way: `(K - C)·w`, negative, so it pays at once;
 * - payback, on every later request: `(C - K)·r`;
 * - rent, already paid: every request over the budget since the last compaction re-read its excess
 *   over `K` (`Σ (P_i - K)·r` over those requests' prompts `P_i`; early-compaction.ts reads them).
 * It fires once the rent reaches RENT_MULTIPLE times the rewrite, or at once on a cold cache; never
 * under the budget, never while the fold rule can still free enough (folding loses no live context,
 * so it comes first), and never when Pi's own threshold compacts on the next request anyway (the
 * same compaction, answered the same way).
 *
 * Against waiting, the loss is bounded like a fold's: a session that ends right after the compaction
 * loses at most the rewrite, which the rent already paid exceeds. A session that would have reached
 * Pi's threshold loses far less: this compaction replaces the one Pi would have made there, whose own
 * rewrite `K·w - T·r` (T the threshold) it saves, so compacting early cost only `(T - C)·r` more, once,
 * and saved the payback on every request in between. The rule does not assume the session gets there
 * (`replaced` only reports it).
 *
 * What the rule does not price: the live context the compaction drops. The model keeps the summary
 * (the seed index) and recall_folded, which serves every folded block and searches the session's
 * originals; a re-read it needs costs a request the rule cannot foresee. RENT_MULTIPLE's margin is
 * the allowance for it, and the benchmark measures the whole effect.
 */
import { type ColdReason, RENT_MULTIPLE, type RelativeRates, rewriteCost } from "./price.ts";

export interface CompactInput {
	rates: RelativeRates;
	/** Why the cached prefix is gone for the next request, or null while warm. */
	cold: ColdReason | null;
	/** C: the context now, in tokens, as the next request would send it (before any new prompt). */
	context: number;
	/** K: what a compaction keeps, in tokens: the recent messages Pi keeps plus the summary. */
	kept: number;
	budget: number;
	/** Where Pi compacts on its own: the context window less Pi's reserve. */
	piThreshold: number;
	/** The fold rule would still fold something on the next request (the plan is not at its floor). */
	canFold: boolean;
	/** Σ (P_i - K) over the requests over the budget since the last compaction (their prompts P_i). */
	rentTokens: number;
	/** Least the compaction must free to be worth it (the fold rule's budget minimum). */
	minFreed: number;
}

/** Why an early compaction does not happen. */
export type CompactWait =
	/** The context is within the budget. */
	| "under-budget"
	/** The fold rule can still free enough: folding comes first. */
	| "can-fold"
	/** Pi's own threshold compacts on the next request anyway. */
	| "pi-threshold"
	/** The compaction would free less than the least worth a rewrite. */
	| "too-little"
	/** The rent paid has not reached RENT_MULTIPLE times the rewrite yet. */
	| "rent";

export interface CompactPrice {
	context: number;
	kept: number;
	/** Tokens the compaction takes out of every later request. */
	freed: number;
	/** In input-token equivalents (negative: it saves at once). */
	rewrite: number;
	payback: number;
	rent: number;
	/** The rewrite Pi's own compaction at its threshold would cost, which this one replaces if the session gets there. */
	replaced: number;
}

export type CompactDecision =
	| ({ fire: true; reason: "cold" | "rent" } & CompactPrice)
	/** `requests`: how many more requests at the current payback until it fires (null: never at this rate). */
	| ({ fire: false; reason: CompactWait; requests: number | null } & CompactPrice);

export function decideCompaction(input: CompactInput): CompactDecision {
	const { rates } = input;
	const context = Math.max(0, input.context);
	const kept = Math.min(context, Math.max(0, input.kept));
	const freed = context - kept;
	const price: CompactPrice = {
		context,
		kept,
		freed,
		rewrite: rewriteCost(rates, context, freed, 0, input.cold !== null),
		payback: freed * rates.read,
		rent: Math.max(0, input.rentTokens) * rates.read,
		replaced: rewriteCost(
			rates,
			Math.max(context, input.piThreshold),
			Math.max(context, input.piThreshold) - kept,
			0,
			false,
		),
	};
	const wait = (reason: CompactWait, requests: number | null = null): CompactDecision => ({
		fire: false,
		reason,
		requests,
		...price,
	});
	if (context <= input.budget) return wait("under-budget");
	if (input.canFold) return wait("can-fold");
	if (context > input.piThreshold) return wait("pi-threshold");
	if (freed < Math.max(1, input.minFreed)) return wait("too-little");
	if (input.cold !== null) return { fire: true, reason: "cold", ...price };
	const short = RENT_MULTIPLE * price.rewrite - price.rent;
	if (short <= 0) return { fire: true, reason: "rent", ...price };
	return wait("rent", price.payback > 0 ? Math.ceil(short / price.payback) : null);
}

/** What an early compaction's entry records (its details' `contextFold.early`), so status can show the decision. */
export interface EarlyCompactionRecord {
	v: 1;
	rule: "cold" | "rent";
	cold?: ColdReason;
	/** `model`: the model's own prices; `ratios`: decided in tokens with a preset's ratios. */
	basis: RelativeRates["basis"];
	context: number;
	kept: number;
	rewrite: number;
	payback: number;
	rent: number;
	replaced: number;
}

export function earlyRecord(
	d: Extract<CompactDecision, { fire: true }>,
	cold: ColdReason | null,
	basis: RelativeRates["basis"],
): EarlyCompactionRecord {
	return {
		v: 1,
		rule: d.reason,
		...(d.reason === "cold" && cold !== null && { cold }),
		basis,
		context: Math.round(d.context),
		kept: Math.round(d.kept),
		rewrite: Math.round(d.rewrite),
		payback: Math.round(d.payback),
		rent: Math.round(d.rent),
		replaced: Math.round(d.replaced),
	};
}

/** An early-compaction record read back from a compaction entry's details, or null when it holds none. */
export function parseEarlyRecord(details: unknown): EarlyCompactionRecord | null {
	const cf = (details as { contextFold?: { reason?: unknown; early?: unknown } } | null | undefined)?.contextFold;
	if (cf?.reason !== "early" || typeof cf.early !== "object" || cf.early === null) return null;
	const r = cf.early as Record<string, unknown>;
	const nums = ["context", "kept", "rewrite", "payback", "rent", "replaced"] as const;
	if (r.v !== 1 || (r.rule !== "cold" && r.rule !== "rent")) return null;
	if (!nums.every((k) => typeof r[k] === "number" && Number.isFinite(r[k]))) return null;
	return r as unknown as EarlyCompactionRecord;
}
