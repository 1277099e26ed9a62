// The cost targets: the required one over the sessions and, apart, over the small-window replays, the 0.8x and geometric-mean ones over the
// whole recorded traces only, and the verdicts that change under a sensitivity billing.
import { describe, expect, test } from "bun:test";
import type { EconomicsResult, TraceResult } from "./bench.ts";
import type { ArmTotals } from "./metrics.ts";
import { costTargets, sensitivityVerdicts } from "./targets.ts";

const HEAD = "Anthropic, 5 min, chars/4";
const OPENAI = "OpenAI, 5 min";
const RERUN = "Anthropic, 5 min, chars/3.3 (re-run)";

const arms = (native: number, def: number) =>
	[
		{ arm: "native", cost: native },
		{ arm: "cf-default", cost: def },
	] as ArmTotals[];

function session(
	name: string,
	kind: TraceResult["kind"],
	head: [number, number],
	openai: [number, number],
	rerun: [number, number],
) {
	return {
		name,
		kind,
		billed: { [HEAD]: arms(...head), [OPENAI]: arms(...openai) },
		denser: arms(...rerun),
	} as unknown as TraceResult;
}

const result = (traces: TraceResult[]) =>
	({ headline: HEAD, sensitivities: [OPENAI, RERUN], traces }) as unknown as EconomicsResult;

describe("cost targets", () => {
	const r = result([
		session("a", "recorded", [10, 7], [5, 4], [12, 8]),
		session("b", "recorded", [10, 6], [5, 3], [12, 7]),
		session("a-p15", "cut", [4, 4.2], [2, 1.9], [5, 5]),
		session("gen", "generated", [1, 0.5], [1, 0.4], [1, 1.1]),
		session("a-w100k", "window", [8, 8.4], [4, 3.9], [9, 9]),
	]);

	test("headline: the required target over every session; 0.8x and the geometric mean over the recorded ones", () => {
		expect(costTargets(r, HEAD).map((v) => [v.pass, v.detail])).toEqual([
			[false, "1 of 4 sessions costlier: a-p15 1.050×"],
			[false, "1 of 1 sessions costlier: a-w100k 1.050×"],
			[true, "a 0.700×; b 0.600×"],
			[true, "0.648× over 2 traces"],
		]);
	});

	test("each billing, and the sessions that change sides of native Pi", () => {
		const all = sensitivityVerdicts(r);
		expect(all.map((s) => s.billing)).toEqual([HEAD, OPENAI, RERUN]);
		expect(all.map((s) => s.verdicts.map((v) => v.pass))).toEqual([
			[false, false, true, true],
			[true, true, true, false],
			[false, true, true, true],
		]);
		// OpenAI: a 0.800× and b 0.600×, geometric mean 0.693×; a-p15 0.950×, no longer costlier.
		expect(all[1]?.verdicts.map((v) => v.detail)).toEqual([
			"all 4 sessions at or under 1.000× (highest: a-p15 0.950×)",
			"all 1 sessions at or under 1.000× (highest: a-w100k 0.975×)",
			"a 0.800×; b 0.600×",
			"0.693× over 2 traces",
		]);
		expect(all.map((s) => s.flips)).toEqual([
			[],
			[
				{ session: "a-p15", headline: 1.05, here: 0.95 },
				{ session: "a-w100k", headline: 1.05, here: 0.975 },
			],
			[
				{ session: "a-p15", headline: 1.05, here: 1 },
				{ session: "gen", headline: 0.5, here: 1.1 },
				{ session: "a-w100k", headline: 1.05, here: 1 },
			],
		]);
	});

	test("no whole recorded trace: the two recorded-only targets are n/a, never a pass", () => {
		const only = result([session("gen", "generated", [1, 0.9], [1, 0.9], [1, 0.9])]);
		expect(costTargets(only, HEAD).map((v) => [v.pass, v.detail])).toEqual([
			[true, "all 1 sessions at or under 1.000× (highest: gen 0.900×)"],
			[null, "no such session"],
			[null, "no whole recorded trace"],
			[null, "no whole recorded trace"],
		]);
	});
});
