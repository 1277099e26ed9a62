import { describe, expect, test } from "bun:test";
import { foldRuleOf, pinnedNotice, ruleChangeWords, ruleLabel } from "../../src/core/fold-rule.ts";
import { foldPaybacks, paybacksJson, ruleSummary } from "../../src/core/payback.ts";
import type { FoldPlan } from "../../src/core/plan.ts";
import { RENT_MULTIPLE } from "../../src/core/policy/price.ts";
import { resolveSettings } from "../../src/core/resolved-settings.ts";

const rule = (env: Record<string, string>, file?: unknown) => foldRuleOf(resolveSettings({ env, file }));

describe("which rule decides the folds", () => {
	test("nothing set: the priced rule, no notice", () => {
		const r = rule({});
		expect(r).toEqual({ type: "priced" });
		expect(pinnedNotice(r)).toBeNull();
		expect(ruleLabel(r)).toBe("priced");
	});

	test("a fold point in the environment and one in the file: fixed, each named with its source", () => {
		const r = rule({ CONTEXTFOLD_FOLD_AT: "0.4" }, { foldStep: 0.1, tail: 9000 });
		expect(r).toEqual({
			type: "fixed",
			pinnedBy: "hand",
			pins: [
				{ knob: "foldAt", name: "CONTEXTFOLD_FOLD_AT", source: "env", value: 0.4 },
				{ knob: "foldStep", name: "foldStep", source: "file", value: 0.1 },
			],
		});
		expect(pinnedNotice(r)).toBe(
			'fold points pinned by hand: CONTEXTFOLD_FOLD_AT=0.4 (environment), foldStep 0.1 (context-fold.json). The priced fold rule is off for this session: folds come at these fixed points, as in 0.1.0. Unset them (or choose "default" in /context-fold Settings) to return to the priced rule.',
		);
		expect(ruleLabel(r)).toBe("fixed: set by hand (CONTEXTFOLD_FOLD_AT, foldStep in the file)");
	});

	test("one pin: the notice says 'it'; an environment value over a file value names the variable", () => {
		const r = rule({ CONTEXTFOLD_COLD_FOLD_AT: "0.2" }, { coldFoldAt: 0.5 });
		expect(pinnedNotice(r)).toBe(
			'fold points pinned by hand: CONTEXTFOLD_COLD_FOLD_AT=0.2 (environment). The priced fold rule is off for this session: folds come at these fixed points, as in 0.1.0. Unset it (or choose "default" in /context-fold Settings) to return to the priced rule.',
		);
	});

	test("an invalid fold point pins nothing (its warning says it was ignored); other knobs never pin", () => {
		expect(rule({ CONTEXTFOLD_FOLD_AT: "abc", CONTEXTFOLD_TAIL: "3000", CONTEXTFOLD_BUDGET_FRACTION: "0.5" })).toEqual({
			type: "priced",
		});
		expect(rule({}, { foldAt: "lots" })).toEqual({ type: "priced" });
	});

	test("the test seam: fixed at the default points, without a notice", () => {
		const r = rule({ CONTEXTFOLD_TEST_FIXED_FOLDS: "1" });
		expect(r).toEqual({ type: "fixed", pinnedBy: "test-seam" });
		expect(pinnedNotice(r)).toBeNull();
		expect(ruleLabel(r)).toBe("fixed: test seam CONTEXTFOLD_TEST_FIXED_FOLDS=1");
		// Only "1" turns it on; a hand-set point beside it is still a pin the user hears about.
		expect(rule({ CONTEXTFOLD_TEST_FIXED_FOLDS: "yes" })).toEqual({ type: "priced" });
		expect(pinnedNotice(rule({ CONTEXTFOLD_TEST_FIXED_FOLDS: "1", CONTEXTFOLD_FOLD_STEP: "0.05" }))).toContain(
			"CONTEXTFOLD_FOLD_STEP=0.05 (environment)",
		);
	});

	test("a settings edit that changes the rule says so; one that keeps it says nothing", () => {
		const priced = rule({});
		const fixed = rule({ CONTEXTFOLD_FOLD_AT: "0.4" });
		expect(ruleChangeWords(priced, fixed)).toBe(
			" Fold points are pinned now: the priced fold rule is off until they are unset.",
		);
		expect(ruleChangeWords(fixed, priced)).toBe(" No fold point is pinned now: the priced fold rule decides.");
		expect(ruleChangeWords(fixed, rule({ CONTEXTFOLD_FOLD_STEP: "0.1" }))).toBe("");
		expect(ruleChangeWords(priced, priced)).toBe("");
	});
});

describe("paybacks for the menu and the JSON", () => {
	const pricing = (decision: FoldPlan["pricing"]["decision"]): Pick<FoldPlan, "state" | "fixed" | "pricing"> => ({
		state: decision.fire ? "fold" : "accumulating",
		fixed: null,
		pricing: {
			rates: { read: 0.1, write: 1.25, basis: "model" },
			prices: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
			cold: null,
			decision,
		},
	});
	const best = { from: 0, freed: 6_000, rewrite: 12_000, payback: 600, rent: 3_100 };

	test("the menu title: the rule, then each payback", () => {
		expect(
			ruleSummary({
				plan: pricing({ fire: false, best }),
				rule: { type: "priced" },
				lastFold: {
					seq: 3,
					decision: {
						v: 1,
						rule: "budget",
						prices: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
						basis: "ratios",
						rewrite: 4_000,
						payback: 400,
						rent: 100,
					},
				},
			}),
		).toEqual([
			"fold rule: priced",
			"payback of the next fold: rewrite ~12k tok-eq ($0.0360) once, saves ~600 ($0.0018) per later request: pays back after 20 requests",
			"payback of the last fold #3 (over the budget): rewrite ~4.0k tok-eq once, saves ~400 per later request: pays back after 10 requests",
		]);
		// Fixed fold points: the rule, and no priced payback for a fold the ladder decides.
		expect(
			ruleSummary({ plan: pricing({ fire: false, best }), rule: { type: "fixed", pinnedBy: "test-seam" } }),
		).toEqual(["fold rule: fixed: test seam CONTEXTFOLD_TEST_FIXED_FOLDS=1"]);
	});

	test("JSON: the waiting event with the requests until it is due, and after which it pays back", () => {
		const j = paybacksJson(foldPaybacks({ plan: pricing({ fire: false, best }), fixed: false, pending: true }));
		expect(j).toEqual({
			next: {
				state: "waiting",
				rule: null,
				freed: 6_000,
				rewrite: 12_000,
				payback: 600,
				rent: 3_100,
				requestsUntilDue: Math.ceil((RENT_MULTIPLE * 12_000 - 3_100) / 600),
				paysBackAfter: 20,
				words:
					"rewrite ~12k tok-eq ($0.0360) once, saves ~600 ($0.0018) per later request: pays back after 20 requests",
			},
			lastFold: null,
		});
		const due = paybacksJson(
			foldPaybacks({
				plan: pricing({ fire: true, reason: "cold", event: { ...best, rewrite: -1_500.4 } }),
				fixed: false,
				pending: true,
			}),
		);
		expect(due.next).toMatchObject({
			state: "due",
			rule: "cold",
			rewrite: -1_500,
			requestsUntilDue: 0,
			paysBackAfter: 0,
		});
		expect(paybacksJson(foldPaybacks({ plan: pricing({ fire: false, best }), fixed: true }))).toEqual({
			next: null,
			lastFold: null,
		});
	});
});
