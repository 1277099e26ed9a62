import { describe, expect, test } from "bun:test";
import { decideFixed } from "../../src/core/policy/fixed.ts";
import { BUDGET_FOLD_MIN_SHARE, foldGeometry } from "../../src/core/policy/geometry.ts";
import { DEFAULT_SETTINGS, type Settings } from "../../src/core/settings.ts";
import { FIXED_SETTINGS } from "../helpers/session.ts";

const S: Settings = FIXED_SETTINGS;
const W = 200_000;
const g = foldGeometry(S, W);
if (g === null) throw new Error("geometry");
const entry = S.foldAt * W;
const step = S.foldStep * W;
const budget = Math.min(S.budgetCap ?? Number.POSITIVE_INFINITY, S.budgetFraction * W);
const minFreed = W * BUDGET_FOLD_MIN_SHARE;

describe("geometry", () => {
	test("defaults", () => {
		expect(g).toEqual({
			window: W,
			budget,
			tail: Math.min(S.tail, budget / 2),
			budgetMinFreed: minFreed,
		});
	});
	test("cap off, tail clamped to half the budget, tiny windows, no window", () => {
		const D = { ...DEFAULT_SETTINGS, providerCacheIdleMinutes: {} };
		expect(foldGeometry({ ...D, budgetCap: null }, 10_000_000)?.budget).toBe(D.budgetFraction * 10_000_000);
		expect(foldGeometry({ ...D, budgetCap: 200_000 }, 10_000_000)?.budget).toBe(200_000);
		expect(foldGeometry(D, 20_000)?.tail).toBe(Math.floor((D.budgetFraction * 20_000) / 2));
		expect(foldGeometry(D, 1)).toMatchObject({ budget: 1, tail: 0, budgetMinFreed: 1 });
		for (const w of [undefined, 0, -1, Number.NaN, Number.POSITIVE_INFINITY]) expect(foldGeometry(D, w)).toBeNull();
	});
});

describe("decideFixed (fold points set by hand)", () => {
	test.each([
		["below the entry threshold", { usage: entry - 1, mass: step * 2, layers: 0, cooldown: false }, false, undefined],
		[
			"at the threshold with a step of mass",
			{ usage: entry, mass: step, layers: 0, cooldown: false },
			true,
			"threshold",
		],
		["at the threshold without a step", { usage: entry, mass: step - 1, layers: 0, cooldown: false }, false, undefined],
		[
			"armed by a layer, below the threshold",
			{ usage: entry / 2, mass: step, layers: 2, cooldown: false },
			true,
			"step",
		],
		["a step of mass right after a fold", { usage: entry, mass: step, layers: 1, cooldown: true }, false, undefined],
		[
			"over budget: folds at once, even in cooldown",
			{ usage: budget + 1, mass: minFreed, layers: 1, cooldown: true },
			true,
			"budget",
		],
		[
			"over budget with less than the minimum: the floor",
			{ usage: budget + 1, mass: minFreed - 1, layers: 1, cooldown: false },
			false,
			undefined,
		],
		[
			"over budget with nothing: the floor",
			{ usage: budget + 1, mass: 0, layers: 0, cooldown: false },
			false,
			undefined,
		],
	] as const)("%s", (_name, input, fire, reason) => {
		const d = decideFixed({ geometry: g, settings: S, everCacheRead: true, ...input });
		expect(d.fire).toBe(fire);
		expect(d.reason).toBe(reason);
		expect(d.step).toBe(step);
		expect(d.threshold).toBe(entry);
	});
	test("the cold threshold applies while no cache read was ever seen", () => {
		const d = decideFixed({
			geometry: g,
			settings: S,
			everCacheRead: false,
			usage: S.coldFoldAt * W,
			mass: step,
			layers: 0,
			cooldown: false,
		});
		expect(d).toMatchObject({ fire: true, reason: "threshold", thresholdFraction: S.coldFoldAt, armed: true });
	});
});
