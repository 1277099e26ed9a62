/**
 * The priced early compaction (policy/compact.ts): exact prices and decisions, then properties over
 * random inputs (never under the budget, never while folding can free enough, never past Pi's
 * threshold, monotone in the rent, a cold cache fires).
 */
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { type CompactInput, decideCompaction } from "../../../src/core/policy/compact.ts";
import { RENT_MULTIPLE, type RelativeRates } from "../../../src/core/policy/price.ts";

const RUNS = Number(process.env.CF_FUZZ_RUNS ?? 300);
/** Exact in binary, so equalities hold to the last bit. */
const R: RelativeRates = { read: 0.125, write: 1.25, basis: "model" };
const NO_CACHE: RelativeRates = { read: 1, write: 1, basis: "model" };

const base: CompactInput = {
	rates: R,
	cold: null,
	context: 160_000,
	kept: 24_000,
	budget: 150_000,
	piThreshold: 183_616,
	canFold: false,
	rentTokens: 0,
	minFreed: 3_000,
};
const decide = (over: Partial<CompactInput>) => decideCompaction({ ...base, ...over });

describe("decideCompaction: exact prices", () => {
	test("rewrite K·w - C·r, payback (C-K)·r, rent Σ·r, and what Pi's own compaction would have cost", () => {
		const d = decide({ rentTokens: 40_000 });
		expect(d).toEqual({
			fire: false,
			reason: "rent",
			requests: 1,
			context: 160_000,
			kept: 24_000,
			freed: 136_000,
			// 24,000·1.25 - 160,000·0.125
			rewrite: 10_000,
			payback: 17_000,
			rent: 5_000,
			// 24,000·1.25 - 183,616·0.125
			replaced: 7_048,
		});
	});
	test("fires exactly when the rent reaches RENT_MULTIPLE times the rewrite", () => {
		// 1.5 · 10,000 = 15,000 = 120,000 · 0.125
		expect(decide({ rentTokens: 120_000 })).toMatchObject({ fire: true, reason: "rent", rent: 15_000 });
		expect(decide({ rentTokens: 119_992 })).toMatchObject({ fire: false, reason: "rent", rent: 14_999, requests: 1 });
		// Short 15,000 - 0 over a payback of 17,000 a request: one more request.
		expect(decide({ rentTokens: 0 })).toMatchObject({ fire: false, requests: 1 });
		// A bigger rewrite (more kept) takes more requests: 1.5·(60,000·1.25 - 20,000) = 82,500 over 12,500.
		expect(decide({ kept: 60_000 })).toMatchObject({ fire: false, reason: "rent", rewrite: 55_000, requests: 7 });
	});
	test("a cold cache makes the compaction save at once: (K - C)·w", () => {
		const d = decide({ cold: "idle" });
		expect(d).toMatchObject({ fire: true, reason: "cold", rewrite: -170_000 });
	});
	test("no prompt cache (read = write = 1): the rewrite is negative and it fires warm", () => {
		expect(decide({ rates: NO_CACHE })).toMatchObject({ fire: true, reason: "rent", rewrite: -136_000 });
	});
	test.each<[string, Partial<CompactInput>, string]>([
		["within the budget", { context: 150_000, rentTokens: 1e9 }, "under-budget"],
		["folding can still free enough", { canFold: true, rentTokens: 1e9, cold: "idle" }, "can-fold"],
		["Pi compacts on the next request anyway", { context: 190_000, rentTokens: 1e9, cold: "idle" }, "pi-threshold"],
		["it would free less than the minimum", { kept: 158_000, rentTokens: 1e9, cold: "idle" }, "too-little"],
	])("never when %s", (_name, over, reason) => {
		expect(decide(over)).toMatchObject({ fire: false, reason });
	});
	test("a kept size above the context is clamped: nothing freed, nothing fires", () => {
		expect(decide({ kept: 200_000, cold: "idle" })).toMatchObject({ fire: false, reason: "too-little", freed: 0 });
	});
});

describe("decideCompaction: properties", () => {
	const input = fc.record({
		rates: fc.record({
			read: fc.double({ min: 0.01, max: 1, noNaN: true }),
			write: fc.double({ min: 1, max: 2, noNaN: true }),
			basis: fc.constant("model" as const),
		}),
		cold: fc.constantFrom(null, "idle" as const, "model-change" as const),
		context: fc.integer({ min: 0, max: 400_000 }),
		kept: fc.integer({ min: 0, max: 400_000 }),
		budget: fc.integer({ min: 1, max: 200_000 }),
		piThreshold: fc.integer({ min: 1, max: 400_000 }),
		canFold: fc.boolean(),
		rentTokens: fc.integer({ min: 0, max: 10_000_000 }),
		minFreed: fc.integer({ min: 0, max: 10_000 }),
	});
	test("never fires under the budget, while folding can, or past Pi's threshold", () => {
		fc.assert(
			fc.property(input, (i) => {
				const d = decideCompaction(i);
				if (i.context <= i.budget || i.canFold || i.context > i.piThreshold) expect(d.fire).toBe(false);
			}),
			{ numRuns: RUNS },
		);
	});
	test("a warm fire means the rent paid reached RENT_MULTIPLE times the rewrite", () => {
		fc.assert(
			fc.property(input, (i) => {
				const d = decideCompaction(i);
				if (d.fire && d.reason === "rent") expect(d.rent).toBeGreaterThanOrEqual(RENT_MULTIPLE * d.rewrite);
			}),
			{ numRuns: RUNS },
		);
	});
	test("monotone in the rent: more rent paid never turns a fire into a wait", () => {
		fc.assert(
			fc.property(input, fc.integer({ min: 0, max: 10_000_000 }), (i, more) => {
				if (decideCompaction(i).fire)
					expect(decideCompaction({ ...i, rentTokens: i.rentTokens + more }).fire).toBe(true);
			}),
			{ numRuns: RUNS },
		);
	});
	test("a cold cache fires whenever a compaction is allowed at all", () => {
		fc.assert(
			fc.property(input, (i) => {
				const cold = decideCompaction({ ...i, cold: "idle" });
				const allowed =
					i.context > i.budget &&
					!i.canFold &&
					i.context <= i.piThreshold &&
					i.context - Math.min(i.context, i.kept) >= Math.max(1, i.minFreed);
				expect(cold.fire).toBe(allowed);
			}),
			{ numRuns: RUNS },
		);
	});
	test("a waiting decision's request count is exact at the current payback", () => {
		fc.assert(
			fc.property(input, (i) => {
				const d = decideCompaction({ ...i, cold: null });
				if (d.fire || d.reason !== "rent" || d.requests === null) return;
				const after = decideCompaction({ ...i, cold: null, rentTokens: i.rentTokens + d.requests * d.freed });
				expect(after.fire).toBe(true);
			}),
			{ numRuns: RUNS },
		);
	});
});
