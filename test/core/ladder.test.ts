import { describe, expect, test } from "bun:test";
import { BUDGET_FOLD_MIN_STEP_SHARE, decideLadder, ladderGeometry } from "../../src/core/policy/ladder.ts";
import { DEFAULT_SETTINGS, type Settings } from "../../src/core/settings.ts";

const S: Settings = { ...DEFAULT_SETTINGS, providerCacheIdleMinutes: {} };
const W = 200_000;
const g = ladderGeometry(S, W, true);
if (g === null) throw new Error("geometry");
const entry = S.foldAt * W;
const step = S.foldStep * W;
const budget = Math.min(S.budgetCap ?? Number.POSITIVE_INFINITY, S.budgetFraction * W);
const quarter = step * BUDGET_FOLD_MIN_STEP_SHARE;

describe("geometry", () => {
	test("defaults", () => {
		expect(g).toEqual({
			window: W,
			budget,
			threshold: entry,
			thresholdFraction: S.foldAt,
			cold: false,
			step,
			tail: Math.min(S.tail, budget / 2),
		});
	});
	test("cold threshold, cap off, tail clamped to half the budget, tiny windows", () => {
		expect(ladderGeometry(S, W, false)?.threshold).toBe(S.coldFoldAt * W);
		expect(ladderGeometry({ ...S, budgetCap: null }, 10_000_000, true)?.budget).toBe(S.budgetFraction * 10_000_000);
		expect(ladderGeometry({ ...S, budgetCap: 200_000 }, 10_000_000, true)?.budget).toBe(200_000);
		expect(ladderGeometry(S, 20_000, true)?.tail).toBe(Math.floor((S.budgetFraction * 20_000) / 2));
		expect(ladderGeometry(S, 1, true)).toMatchObject({ budget: 1, step: 1, tail: 0 });
		for (const w of [undefined, 0, -1, Number.NaN, Number.POSITIVE_INFINITY])
			expect(ladderGeometry(S, w, true)).toBeNull();
	});
});

describe("decideLadder", () => {
	test.each([
		[
			"below the entry threshold",
			{ usage: entry - 1, mass: step * 2, layers: 0, cooldown: false },
			"below-threshold",
			undefined,
		],
		[
			"at the threshold with a step of mass",
			{ usage: entry, mass: step, layers: 0, cooldown: false },
			"fold",
			"threshold",
		],
		[
			"at the threshold without a step",
			{ usage: entry, mass: step - 1, layers: 0, cooldown: false },
			"accumulating",
			undefined,
		],
		[
			"armed by a layer, below the threshold",
			{ usage: entry / 2, mass: step, layers: 2, cooldown: false },
			"fold",
			"step",
		],
		[
			"a step of mass right after a fold",
			{ usage: entry, mass: step, layers: 1, cooldown: true },
			"cooldown",
			undefined,
		],
		[
			"over budget: folds at once, even in cooldown",
			{ usage: budget + 1, mass: quarter, layers: 1, cooldown: true },
			"fold",
			"budget",
		],
		[
			"over budget with less than a quarter step: the floor",
			{ usage: budget + 1, mass: quarter - 1, layers: 1, cooldown: false },
			"floor",
			undefined,
		],
		[
			"over budget with nothing: the floor",
			{ usage: budget + 1, mass: 0, layers: 0, cooldown: false },
			"floor",
			undefined,
		],
	] as const)("%s", (_name, input, state, reason) => {
		const d = decideLadder({ geometry: g, ...input });
		expect(d.state).toBe(state);
		expect(d.reason).toBe(reason);
	});
	test("no window: no decision", () => {
		expect(decideLadder({ geometry: null, usage: 1e9, mass: 1e9, layers: 0, cooldown: false })).toEqual({
			state: "no-window",
			armed: false,
		});
	});
});
