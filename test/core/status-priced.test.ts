/**
 * What the footer gauge and the status say under the priced rule: the next fold's wait in requests,
 * a cold cache, nothing foldable yet, a fold made now or held back a request, and a fold's expected
 * payback. Golden strings, from hand-built plans and from a session grown through planFold.
 */
import { describe, expect, test } from "bun:test";
import { accountSession, PRICE_PRESETS, type Prices } from "../../src/core/accounting.ts";
import type { FoldPlan } from "../../src/core/plan.ts";
import { foldGeometry } from "../../src/core/policy/geometry.ts";
import {
	type ColdReason,
	type PricedDecision,
	type PricedEvent,
	RENT_MULTIPLE,
	type RelativeRates,
} from "../../src/core/policy/price.ts";
import { DEFAULT_SETTINGS } from "../../src/core/settings.ts";
import { paybackWords, renderFooter, renderGauge, renderStatus } from "../../src/core/status.ts";
import { formatTokens } from "../../src/core/tokens.ts";
import { runGrowth } from "../helpers/session.ts";

const geometry = foldGeometry({ ...DEFAULT_SETTINGS, providerCacheIdleMinutes: {} }, 80_000);
const MODEL: RelativeRates = { read: 0.1, write: 1.25, basis: "model" };
const waiting: PricedEvent = { from: 0, freed: 8_000, rewrite: 12_000, payback: 800, rent: 3_100 };
/** What the waiting event's rent must reach before it fires (policy/price.ts): 18k at 1.5. */
const THRESHOLD = RENT_MULTIPLE * waiting.rewrite;
const OF = formatTokens(THRESHOLD);
/** The waiting event's gauge: (18,000 - 3,100) / 800 a request, 19 requests at 1.5. */
const WAITING = `next fold in ~${Math.ceil((THRESHOLD - 3_100) / 800)} requests (re-reads 3.1k of ${OF} for a 12k rewrite)`;

const plan = (decision: PricedDecision, over: Partial<FoldPlan> = {}, cold: ColdReason | null = null): FoldPlan =>
	({
		type: "fold-plan",
		state: decision.fire ? "fold" : "accumulating",
		substitutions: [],
		layer: null,
		usage: { tokens: 30_000, source: "reported" },
		usageAfter: 30_000,
		geometry,
		fixed: null,
		pricing: { rates: MODEL, prices: { ...PRICE_PRESETS.anthropic }, cold, decision },
		toolsWanted: null,
		mass: 3_100,
		maskedBlocks: 12,
		maskedTokens: 41_000,
		...over,
	}) as FoldPlan;
const wait = (e: Partial<PricedEvent>): PricedDecision => ({ fire: false, best: { ...waiting, ...e } });
const fire = (reason: "rent" | "cold", e: Partial<PricedEvent> = {}): PricedDecision => ({
	fire: true,
	reason,
	event: { ...waiting, ...e },
});

describe("the gauge under the priced rule", () => {
	test.each<[string, FoldPlan, string]>([
		["waiting: requests to go, and rent against the threshold and the rewrite", plan(wait({})), WAITING],
		[
			"one request to go",
			plan(wait({ rent: THRESHOLD - 500 })),
			`next fold in ~1 request (re-reads ${formatTokens(THRESHOLD - 500)} of ${OF} for a 12k rewrite)`,
		],
		[
			"rent equal to the rewrite is not enough: it still owes the margin",
			plan(wait({ rent: 12_000 })),
			`next fold in ~${Math.ceil((THRESHOLD - 12_000) / 800)} requests (re-reads 12k of ${OF} for a 12k rewrite)`,
		],
		[
			"paid, yet not fired (it frees nothing beyond the tools): still one request at least",
			plan(wait({ rent: THRESHOLD + 1_000 })),
			`next fold in ~1 request (re-reads ${formatTokens(THRESHOLD + 1_000)} of ${OF} for a 12k rewrite)`,
		],
		[
			"nothing more to earn: it waits for the cache to go cold",
			plan(wait({ payback: 0 })),
			`next fold when the cache goes cold (re-reads 3.1k of ${OF} for a 12k rewrite)`,
		],
		[
			"amounts below zero read as zero",
			plan(wait({ rent: -5, rewrite: 900, payback: 100 })),
			`next fold in ~${Math.ceil((RENT_MULTIPLE * 900 + 5) / 100)} requests (re-reads 0 of ${formatTokens(RENT_MULTIPLE * 900)} for a 900 rewrite)`,
		],
		[
			"a negative rewrite reads as zero, and so does its threshold",
			plan(wait({ rent: 0, rewrite: -900, payback: 100 })),
			"next fold in ~1 request (re-reads 0 of 0 for a 0 rewrite)",
		],
		["nothing old enough yet", plan({ fire: false, best: null }), "next fold: nothing old enough to fold yet"],
		["cold, with something waiting", plan(wait({}), {}, "idle"), "next fold: at once (cache cold)"],
		[
			"cold, with nothing yet",
			plan({ fire: false, best: null }, {}, "idle"),
			"next fold: nothing old enough to fold yet",
		],
		["folded now by rent", plan(fire("rent")), "folded now (re-reading old output had cost half again the rewrite)"],
		["folded now, cold", plan(fire("cold"), {}, "model-change"), "folded now (cache cold: the rewrite was free)"],
		[
			"held for Pi's compaction: how far it is, and why",
			plan({
				fire: false,
				best: waiting,
				held: { threshold: 83_616, kept: 23_250, context: 70_000, beforeTail: 50_000, growth: 1_500, remaining: 90 },
			}),
			"next fold: after Pi's compaction (~10 requests away), cheaper than folding now",
		],
		[
			"held over the budget: not the floor",
			plan(
				{
					fire: false,
					best: waiting,
					held: { threshold: 83_616, kept: 23_250, context: 83_000, beforeTail: 63_000, growth: 1_500, remaining: 90 },
				},
				{ state: "floor" },
			),
			"next fold: after Pi's compaction (~1 request away), cheaper than folding now",
		],
		["at the floor", plan(wait({}), { state: "floor" }), "⚠ no more folds possible (over budget)"],
		["window unknown", plan(wait({}), { geometry: null, state: "no-window" }), "next fold: window unknown"],
	])("%s", (_name, p, expected) => {
		expect(renderGauge(p)).toBe(expected);
	});
	test("a fold due but held back a request (the recall tools first) is not said to be made", () => {
		const held = { state: "accumulating" as const, toolsWanted: "now" as const };
		expect(renderGauge(plan(fire("rent"), held))).toBe(
			"next fold: on the next request (re-reading old output has cost half again the rewrite)",
		);
		expect(renderGauge(plan(fire("cold"), held, "idle"))).toBe(
			"next fold: on the next request (cache cold: the rewrite is free)",
		);
		// Over the budget too: a fold is coming, not the floor.
		expect(renderGauge(plan(fire("rent"), { ...held, state: "floor" }))).toBe(
			"next fold: on the next request (re-reading old output has cost half again the rewrite)",
		);
	});
	test("the words for a rent fold say the multiple: half again the rewrite", () => {
		// status.ts words the threshold ("half again"), so a change of RENT_MULTIPLE must change them too.
		expect(RENT_MULTIPLE).toBe(1.5);
		expect(WAITING).toBe("next fold in ~19 requests (re-reads 3.1k of 18k for a 12k rewrite)");
	});
	test("the footer", () => {
		expect(renderFooter({ plan: plan(wait({})), events: 3, cacheAvg: 0.66 })).toBe(
			`⧉ context-fold ×3 · ~41k tok masked · ${WAITING} · cache avg 66%`,
		);
		expect(renderFooter({ plan: plan(fire("cold"), {}, "idle"), events: 1, cacheAvg: null, flags: ["⚠ x"] })).toBe(
			"⧉ context-fold ×1 · ~41k tok masked · folded now (cache cold: the rewrite was free) · ⚠ x",
		);
		// The fixed ladder's threshold fraction means nothing to the priced gauge.
		expect(
			renderFooter({ plan: plan({ fire: false, best: null }), events: 0, cacheAvg: 0, thresholdFraction: 0.25 }),
		).toBe("⧉ context-fold ×0 · ~41k tok masked · next fold: nothing old enough to fold yet · cache avg 0%");
	});
});

describe("paybackWords", () => {
	const anthropic: Prices = { ...PRICE_PRESETS.anthropic };
	test.each<[string, PricedEvent, Prices | undefined, string]>([
		[
			"in tokens",
			waiting,
			undefined,
			"rewrite ~12k tok-eq once, saves ~800 per later request: pays back after 15 requests",
		],
		[
			"in dollars too",
			waiting,
			anthropic,
			"rewrite ~12k tok-eq ($0.0360) once, saves ~800 ($0.0024) per later request: pays back after 15 requests",
		],
		[
			"after one request",
			{ ...waiting, rewrite: 700 },
			undefined,
			"rewrite ~700 tok-eq once, saves ~800 per later request: pays back after 1 request",
		],
		["never pays back", { ...waiting, payback: 0 }, undefined, "rewrite ~12k tok-eq once, saves ~0 per later request"],
		[
			"cold: it saves from the first request",
			{ ...waiting, rewrite: -10_000 },
			anthropic,
			"saves from the first request: ~800 tok-eq ($0.0024) per request",
		],
		[
			"zero prices: tokens only",
			waiting,
			{ input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
			"rewrite ~12k tok-eq once, saves ~800 per later request: pays back after 15 requests",
		],
	])("%s", (_name, e, prices, expected) => {
		expect(paybackWords(e, prices)).toBe(expected);
	});
});

describe("status under the priced rule", () => {
	const accounting = accountSession([
		{ type: "response", usage: { input: 0, output: 10, cacheRead: 9_000, cacheWrite: 1_000 }, timestamp: 0 },
	]);
	const status = (p: FoldPlan, prices?: Prices) =>
		renderStatus({
			plan: p,
			events: 1,
			accounting,
			...(prices !== undefined && { prices: { ...prices } }),
			flags: {},
		});
	test("waiting, with the model's prices", () => {
		expect(status(plan(wait({})), PRICE_PRESETS.anthropic)).toBe(
			[
				"context-fold status",
				"  folds: 1 event, 12 blocks masked, ~41k tok out of every request",
				`  position: usage ~30k reported (38% of 80k, budget 60k); ${WAITING}`,
				"  rule: priced (read 0.10×, write 1.25× the input price)",
				"  payback: next fold: rewrite ~12k tok-eq ($0.0360) once, saves ~800 ($0.0024) per later request: pays back after 15 requests",
				"  cache: 90% hit over the session, 90% on the last response (1 response)",
				"  flags: none",
			].join("\n"),
		);
	});
	test("cold, decided in tokens, nothing to wait for", () => {
		const p = plan(fire("cold", { rewrite: -10_000 }), {}, "idle");
		p.pricing = { ...p.pricing, rates: { read: 0.1, write: 1.25, basis: "ratios" } };
		// The fold this plan made has no record here (a status names a made fold from its layer's record).
		expect(status(p).split("\n").slice(2, 5)).toEqual([
			"  position: usage ~30k reported (38% of 80k, budget 60k); folded now (cache cold: the rewrite was free)",
			"  rule: priced (the model declares no prices: decided in tokens with Anthropic's read/write ratios; cache cold: idle past the cache lifetime)",
			"  cache: 90% hit over the session, 90% on the last response (1 response)",
		]);
	});
	test("nothing foldable yet: no payback line", () => {
		const lines = status(plan({ fire: false, best: null })).split("\n");
		expect(lines[2]).toBe(
			"  position: usage ~30k reported (38% of 80k, budget 60k); next fold: nothing old enough to fold yet",
		);
		expect(lines.some((l) => l.startsWith("  payback:"))).toBe(false);
	});
});

describe("the gauge along a grown session", () => {
	// A golden of what a person reads request by request, at RENT_MULTIPLE 1.5 (the words test above
	// pins it): the threshold (32k) is half again the rewrite (21k), and the fold comes when the rent passes it.
	test("waiting, one request to go, folded now, then waiting again from no rent", () => {
		const run = runGrowth({ turns: 35, resultTokens: 1_700, window: 200_000, settings: { fixedFolds: false } });
		const at = run.plans.findIndex((p) => p.layer !== null);
		expect(at).toBe(33);
		expect(run.plans.slice(12, 35).map((p) => renderGauge(p))).toEqual([
			"next fold: nothing old enough to fold yet",
			"next fold in ~201 requests (re-reads 0 of 33k for a 22k rewrite)",
			"next fold in ~100 requests (re-reads 163 of 32k for a 22k rewrite)",
			"next fold in ~66 requests (re-reads 489 of 32k for a 22k rewrite)",
			"next fold in ~49 requests (re-reads 977 of 32k for a 22k rewrite)",
			"next fold in ~38 requests (re-reads 1.6k of 32k for a 21k rewrite)",
			"next fold in ~31 requests (re-reads 2.4k of 32k for a 21k rewrite)",
			"next fold in ~26 requests (re-reads 3.4k of 32k for a 21k rewrite)",
			"next fold in ~22 requests (re-reads 4.6k of 32k for a 21k rewrite)",
			"next fold in ~18 requests (re-reads 5.9k of 32k for a 21k rewrite)",
			"next fold in ~16 requests (re-reads 7.3k of 32k for a 21k rewrite)",
			"next fold in ~13 requests (re-reads 9.0k of 32k for a 21k rewrite)",
			"next fold in ~11 requests (re-reads 11k of 32k for a 21k rewrite)",
			"next fold in ~9 requests (re-reads 13k of 32k for a 21k rewrite)",
			"next fold in ~8 requests (re-reads 15k of 31k for a 21k rewrite)",
			"next fold in ~6 requests (re-reads 17k of 31k for a 21k rewrite)",
			"next fold in ~5 requests (re-reads 20k of 31k for a 21k rewrite)",
			"next fold in ~4 requests (re-reads 22k of 31k for a 21k rewrite)",
			"next fold in ~3 requests (re-reads 25k of 31k for a 21k rewrite)",
			"next fold in ~2 requests (re-reads 28k of 31k for a 21k rewrite)",
			"next fold in ~1 request (re-reads 31k of 31k for a 21k rewrite)",
			"folded now (re-reading old output had cost half again the rewrite)",
			"next fold in ~201 requests (re-reads 0 of 33k for a 22k rewrite)",
		]);
		// Each waiting line's threshold is RENT_MULTIPLE times the rewrite the plan priced.
		for (const p of run.plans.slice(13, at)) {
			const d = p.pricing.decision as Extract<PricedDecision, { fire: false }>;
			const e = d.best as PricedEvent;
			expect(renderGauge(p)).toContain(
				`of ${formatTokens(RENT_MULTIPLE * e.rewrite)} for a ${formatTokens(e.rewrite)} rewrite`,
			);
			expect(e.rent).toBeLessThan(RENT_MULTIPLE * e.rewrite);
		}
		const fold = run.plans[at]?.pricing.decision as Extract<PricedDecision, { fire: true }>;
		expect(fold.event.rent).toBeGreaterThanOrEqual(RENT_MULTIPLE * fold.event.rewrite);
	});
});
