import { describe, expect, test } from "bun:test";
import { accountSession } from "../../src/core/accounting.ts";
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
		});
		expect(text).toBe(
			[
				"context-fold status",
				"  folds: 1 event, 12 blocks masked, ~41k tok out of every request",
				"  position: usage ~30k reported (38% of 80k, budget 60k); next fold: 3.1k/9.6k maskable",
				"  rule: fixed fold points (foldAt/foldStep/coldFoldAt set by hand)",
				"  cache: 76% hit over the session, 44% on the last response (2 responses)",
				"  fold cost: ~6.0k tok not sent so far; re-prefilled ~2.0k tok because folds moved the prefix (1 of 1 change answered)",
				"  net: -$0.0051 (saved $0.0018 at cache-read price, paid $0.0069 in re-writes)",
				"  flags:",
				"    ⚠ recall churn: {#abc123} recalled repeatedly (unfold may be cheaper)",
			].join("\n"),
		);
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
