import { describe, expect, test } from "bun:test";
import { accountSession } from "../../src/core/accounting.ts";
import type { FoldRule } from "../../src/core/fold-rule.ts";
import type { FoldDecisionRecord } from "../../src/core/layers.ts";
import type { FoldPlan } from "../../src/core/plan.ts";
import { foldGeometry } from "../../src/core/policy/geometry.ts";
import { DEFAULT_SETTINGS } from "../../src/core/settings.ts";
import { RECALL_CHURN, renderFooter, renderGauge, renderStatus, statusFlags } from "../../src/core/status.ts";
import { runGrowth } from "../helpers/session.ts";

// Fixed knobs (not the defaults), so these golden strings do not move when a default is retuned.
const geometry = foldGeometry({ ...DEFAULT_SETTINGS, providerCacheIdleMinutes: {} }, 80_000);
// The fixed ladder with foldAt 0.45 and foldStep 0.12 on 80k: entry 36k, step 9.6k.
const fixed = { threshold: 36_000, thresholdFraction: 0.45, step: 9_600, armed: true };
const plan = (over: Partial<FoldPlan>): FoldPlan =>
	({
		type: "fold-plan",
		state: "accumulating",
		substitutions: [],
		layer: null,
		usage: { tokens: 30_000, source: "reported" },
		usageAfter: 30_000,
		geometry,
		fixed,
		mass: 3_100,
		maskedBlocks: 12,
		maskedTokens: 41_000,
		...over,
	}) as FoldPlan;

describe("footer", () => {
	test.each([
		[
			plan({ fixed: { ...fixed, armed: false } }),
			"⧉ context-fold ×3 · ~41k tok masked · next fold at 45% ctx · cache avg 66%",
		],
		[plan({}), "⧉ context-fold ×3 · ~41k tok masked · next fold: 3.1k/9.6k maskable · cache avg 66%"],
		[plan({ mass: 50_000 }), "⧉ context-fold ×3 · ~41k tok masked · next fold: 9.6k/9.6k maskable · cache avg 66%"],
		[
			plan({ state: "floor" }),
			"⧉ context-fold ×3 · ~41k tok masked · ⚠ no more folds possible (over budget) · cache avg 66%",
		],
	])("%#", (p, expected) => {
		expect(renderFooter({ plan: p, events: 3, cacheAvg: 0.66 })).toBe(expected);
	});
	test("no usage yet, flags, and a threshold that changed since the plan", () => {
		expect(
			renderFooter({
				plan: plan({ fixed: { ...fixed, armed: false } }),
				events: 0,
				cacheAvg: null,
				flags: ["⚠ fold not on wire"],
				thresholdFraction: 0.25,
			}),
		).toBe("⧉ context-fold ×0 · ~41k tok masked · next fold at 25% ctx · ⚠ fold not on wire");
		expect(renderGauge(plan({ geometry: null }))).toBe("next fold: window unknown");
	});
	test("right after a fold the gauge starts from zero", () => {
		const run = runGrowth({
			turns: 20,
			resultTokens: 3000,
			window: 80_000,
			settings: { foldAt: 0.45, foldStep: 0.12 },
		});
		const fold = run.plans.find((p) => p.layer !== null);
		expect(fold?.mass).toBe(0);
		expect(renderGauge(fold as FoldPlan)).toBe("next fold: 0/9.6k maskable");
	});
});

const pinnedByHand: FoldRule = {
	type: "fixed",
	pinnedBy: "hand",
	pins: [
		{ knob: "foldAt", name: "CONTEXTFOLD_FOLD_AT", source: "env", value: 0.45 },
		{ knob: "foldStep", name: "foldStep", source: "file", value: 0.12 },
	],
};
const SONNET = { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 };
/** The priced rule waiting: its best event has paid 3.1k of a 12k rewrite, at 600 a request. */
const waiting = (over: Partial<FoldPlan["pricing"]> = {}): FoldPlan =>
	plan({
		fixed: null,
		pricing: {
			rates: { read: 0.1, write: 1.25, basis: "model" },
			prices: SONNET,
			cold: null,
			decision: { fire: false, best: { from: 0, freed: 6_000, rewrite: 12_000, payback: 600, rent: 3_100 } },
			...over,
		},
	});
const coldRecord: FoldDecisionRecord = {
	v: 1,
	rule: "cold",
	cold: "idle",
	prices: SONNET,
	basis: "model",
	rewrite: -5_000,
	payback: 800,
	rent: 0,
};

describe("status", () => {
	test("golden", () => {
		const accounting = accountSession([
			{ type: "response", usage: { input: 0, output: 10, cacheRead: 9_000, cacheWrite: 1_000 }, timestamp: 0 },
			{ type: "fold", seq: 1, saved: 6_000 },
			{ type: "response", usage: { input: 0, output: 10, cacheRead: 2_000, cacheWrite: 2_500 }, timestamp: 1 },
		]);
		const text = renderStatus({
			plan: plan({}),
			events: 1,
			accounting,
			prices: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
			flags: { offWire: false, recallChurn: ["abc123"] },
			rule: pinnedByHand,
		});
		expect(text).toBe(
			[
				"context-fold status",
				"  folds: 1 event, 12 blocks masked, ~41k tok out of every request",
				"  position: usage ~30k reported (38% of 80k, budget 60k); next fold: 3.1k/9.6k maskable",
				"  rule: fixed fold points, set by hand: CONTEXTFOLD_FOLD_AT=0.45 (environment), foldStep 0.12 (context-fold.json); the priced rule is off until they are unset",
				"  cache: 76% hit over the session, 44% on the last response (2 responses)",
				"  fold cost: ~6.0k tok not sent so far; re-prefilled ~2.0k tok because folds moved the prefix (1 of 1 change answered)",
				"  net: -$0.0051 (saved $0.0018 at cache-read price, paid $0.0069 in re-writes)",
				"  flags:",
				"    ⚠ recall churn: {#abc123} recalled repeatedly (unfold may be cheaper)",
			].join("\n"),
		);
	});
	test("golden, priced rule: the rule's rates, the next fold's payback and the last fold's", () => {
		const text = renderStatus({
			plan: waiting(),
			events: 2,
			accounting: accountSession([]),
			flags: {},
			rule: { type: "priced" },
			lastFold: { seq: 2, decision: coldRecord },
		});
		expect(text).toBe(
			[
				"context-fold status",
				"  folds: 2 events, 12 blocks masked, ~41k tok out of every request",
				"  position: usage ~30k reported (38% of 80k, budget 60k); next fold in ~25 requests (re-reads 3.1k of 18k for a 12k rewrite)",
				"  rule: priced (read 0.10×, write 1.25× the input price)",
				"  payback: next fold: rewrite ~12k tok-eq ($0.0360) once, saves ~600 ($0.0018) per later request: pays back after 20 requests",
				"  payback: last fold #2 (cache cold: idle past the cache lifetime): saves from the first request: ~800 tok-eq ($0.0024) per request",
				"  cache: no usage reported yet",
				"  flags: none",
			].join("\n"),
		);
	});

	test("priced rule: a model without prices is decided in tokens (no dollars); a cold cache is named", () => {
		const text = renderStatus({
			plan: waiting({ rates: { read: 0.1, write: 1.25, basis: "ratios" }, cold: "model-change" }),
			events: 0,
			accounting: accountSession([]),
			flags: {},
			rule: { type: "priced" },
			// A layer the fixed ladder (or 0.1.0) made has no decision record: no payback to show for it.
			lastFold: { seq: 1 },
		});
		const lines = text.split("\n");
		expect(lines).toContain(
			"  rule: priced (the model declares no prices: decided in tokens with Anthropic's read/write ratios; cache cold: another model than the last response)",
		);
		expect(lines.filter((l) => l.startsWith("  payback:"))).toEqual([
			"  payback: next fold: rewrite ~12k tok-eq once, saves ~600 per later request: pays back after 20 requests",
		]);
	});

	test("a fold the priced rule fires: due in a preview (the CLI), the last fold once it is committed (Pi)", () => {
		const event = { from: 0, freed: 20_000, rewrite: 9_000, payback: 2_000, rent: 9_500 };
		const fired = plan({
			state: "fold",
			fixed: null,
			pricing: {
				rates: { read: 0.1, write: 1.25, basis: "model" },
				prices: SONNET,
				cold: null,
				decision: { fire: true, reason: "rent", event },
			},
		});
		const record: FoldDecisionRecord = { ...coldRecord, rule: "rent", rewrite: 9_000, payback: 2_000, rent: 9_500 };
		delete record.cold;
		const base = { events: 1, accounting: accountSession([]), flags: {}, rule: { type: "priced" } as FoldRule };
		const preview = renderStatus({
			...base,
			plan: fired,
			due: { reason: "threshold", rule: "rent", blocks: 7, tokens: 20_000 },
			lastFold: null,
		});
		expect(preview).toContain(
			"; fold due on the next request (re-reading old output had cost half again the rewrite): 7 blocks, ~20k tok\n",
		);
		expect(preview).toContain(
			"\n  payback: fold due: rewrite ~9.0k tok-eq ($0.0270) once, saves ~2.0k ($0.0060) per later request: pays back after 5 requests\n",
		);
		// In Pi the plan is the request just sent: its fold is the newest layer, said once, as the last fold.
		const live = renderStatus({ ...base, plan: fired, lastFold: { seq: 1, decision: record } });
		expect(live.split("\n").filter((l) => l.startsWith("  payback:"))).toEqual([
			"  payback: last fold #1 (re-reading old output had cost half again the rewrite): rewrite ~9.0k tok-eq ($0.0270) once, saves ~2.0k ($0.0060) per later request: pays back after 5 requests",
		]);
	});

	test("fixed fold points: the test seam is named as such; no payback is priced for the next fold", () => {
		const text = renderStatus({
			plan: plan({}),
			events: 0,
			accounting: accountSession([]),
			flags: {},
			rule: { type: "fixed", pinnedBy: "test-seam" },
		});
		expect(text).toContain("\n  rule: fixed fold points (test seam CONTEXTFOLD_TEST_FIXED_FOLDS=1)\n");
		expect(text).not.toContain("payback:");
		// Before any request the rule is still said (without rates: nothing was priced yet).
		const none = renderStatus({
			plan: null,
			events: 0,
			accounting: accountSession([]),
			flags: {},
			rule: { type: "priced" },
		});
		expect(none).toContain("  position: no request yet\n  rule: priced\n");
	});

	test("writes unreported and no request yet", () => {
		const accounting = accountSession([
			{ type: "response", usage: { input: 1_000, output: 10, cacheRead: 9_000, cacheWrite: 0 }, timestamp: 0 },
			{ type: "fold", seq: 1, saved: 6_000 },
			{ type: "response", usage: { input: 2_500, output: 10, cacheRead: 2_000, cacheWrite: 0 }, timestamp: 1 },
		]);
		const text = renderStatus({ plan: null, events: 1, accounting, flags: { offWire: true } });
		expect(text).toContain("  position: no request yet");
		expect(text).toContain("writes unreported by this provider, so their cost is not shown");
		expect(text).not.toContain("net:");
		expect(text).toContain("⚠ a fold was committed but never reached the provider");
	});
	test("a fold due on the next request is named once, in one set of numbers (no gauge beside it)", () => {
		const accounting = accountSession([
			{ type: "response", usage: { input: 1_000, output: 10, cacheRead: 9_000, cacheWrite: 0 }, timestamp: 0 },
		]);
		const text = renderStatus({
			plan: plan({ mass: 50_000 }),
			due: { reason: "budget", blocks: 51, tokens: 39_195 },
			events: 0,
			accounting,
			flags: {},
		});
		expect(text.split("\n")[2]).toBe(
			"  position: usage ~30k reported (38% of 80k, budget 60k); fold due on the next request (budget): 51 blocks, ~39k tok",
		);
		expect(text).not.toContain("maskable");
	});
});

describe("statusFlags: one definition for the extension and the CLI", () => {
	// geometry: window 80k, budget 60k (0.75), step 9.6k.
	const a = accountSession([]);
	const flags = (p: FoldPlan | null, over: Partial<Parameters<typeof statusFlags>[0]> = {}) =>
		statusFlags({ plan: p, accounting: a, recallCalls: new Map(), forcedCompactions: 0, reconTokens: 18_000, ...over });

	test.each([
		// Right after a fold that got the context under the budget: not irreducible (the extension used to
		// judge the usage before its own fold, and said it was).
		[
			"folded under the budget",
			plan({ state: "fold", usage: { tokens: 70_000, source: "reported" }, usageAfter: 50_000, mass: 0 }),
			false,
		],
		[
			"over the budget with nothing left to fold",
			plan({ state: "floor", usage: { tokens: 70_000, source: "reported" }, usageAfter: 70_000, mass: 0 }),
			true,
		],
		[
			"over the budget, but a small fold would get under it",
			plan({ state: "floor", usage: { tokens: 62_000, source: "reported" }, usageAfter: 62_000, mass: 3_000 }),
			false,
		],
		[
			"over the budget even after every fold it could make",
			plan({ state: "floor", usage: { tokens: 70_000, source: "reported" }, usageAfter: 70_000, mass: 3_000 }),
			true,
		],
		// Over half the window but under the budget: not irreducible (the CLI used to say it was).
		[
			"past half the window, under the budget",
			plan({ usage: { tokens: 50_000, source: "reported" }, usageAfter: 50_000, mass: 0 }),
			false,
		],
	])("irreducible: %s", (_what, p, expected) => {
		expect(flags(p).irreducible).toBe(expected);
	});

	test("no plan, no window: nothing is flagged", () => {
		expect(flags(null)).toEqual({
			offWire: false,
			irreducible: false,
			recallChurn: [],
			secondForcedCompaction: false,
			coldCarry: false,
		});
		expect(flags(plan({ geometry: null, usageAfter: 1e9 })).irreducible).toBe(false);
	});

	test("recall churn: codes recalled RECALL_CHURN times or more, from the branch's calls", () => {
		const calls = new Map([
			["abc123", RECALL_CHURN],
			["def456", RECALL_CHURN - 1],
		]);
		expect(flags(plan({}), { recallCalls: calls }).recallChurn).toEqual(["abc123"]);
	});

	test("a second forced compaction", () => {
		expect(flags(plan({}), { forcedCompactions: 1 }).secondForcedCompaction).toBe(false);
		expect(flags(plan({}), { forcedCompactions: 2 }).secondForcedCompaction).toBe(true);
	});

	test("cold carry: the last response read nothing from cache and the context is over the reconstruction cost", () => {
		const cold = accountSession([
			{ type: "response", usage: { input: 30_000, output: 10, cacheRead: 0, cacheWrite: 0 }, timestamp: 1 },
		]);
		expect(flags(plan({}), { accounting: cold }).coldCarry).toBe(true);
		expect(flags(plan({}), { accounting: cold, reconTokens: 40_000 }).coldCarry).toBe(false);
		expect(flags(plan({})).coldCarry).toBe(false);
	});
});
