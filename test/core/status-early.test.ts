/**
 * What the status says about early compaction (core/status.ts earlyLine): the last early compaction
 * from its entry's record (warm and cold), the one waiting for its rent, and silence otherwise.
 * Golden strings; the records are read back from compaction details as a session file holds them.
 */
import { describe, expect, test } from "bun:test";
import { decideCompaction, earlyRecord, parseEarlyRecord } from "../../src/core/policy/compact.ts";
import type { RelativeRates } from "../../src/core/policy/price.ts";
import { earlyLine } from "../../src/core/status.ts";

const R: RelativeRates = { read: 0.125, write: 1.25, basis: "model" };
const input = {
	rates: R,
	cold: null,
	context: 160_000,
	kept: 24_000,
	budget: 150_000,
	piThreshold: 183_616,
	canFold: false,
	rentTokens: 120_000,
	minFreed: 3_000,
};

describe("early compaction in the status", () => {
	test("the last one, from the record its entry keeps", () => {
		const d = decideCompaction(input);
		if (!d.fire) throw new Error("expected a fire");
		const details = { contextFold: { v: 1, reason: "early", early: earlyRecord(d, null, "model") } };
		const last = parseEarlyRecord(JSON.parse(JSON.stringify(details)));
		expect(last).toEqual({
			v: 1,
			rule: "rent",
			basis: "model",
			context: 160_000,
			kept: 24_000,
			rewrite: 10_000,
			payback: 17_000,
			rent: 15_000,
			replaced: 7_048,
		});
		expect(earlyLine({ count: 1, last })).toBe(
			"1 early compaction from the seed index; the last took ~160k to ~24k tok (rent paid ~15k ≥ 1.5 × rewrite ~10k); recall_folded still reaches what it removed",
		);
	});
	test("a cold one says the rewrite was free", () => {
		const d = decideCompaction({ ...input, cold: "idle", rentTokens: 0 });
		if (!d.fire) throw new Error("expected a fire");
		expect(earlyLine({ count: 2, last: earlyRecord(d, "idle", "ratios") })).toBe(
			"2 early compactions from the seed index; the last took ~160k to ~24k tok (the cache was cold (idle), so the rewrite was free); recall_folded still reaches what it removed",
		);
	});
	test("one waiting for its rent says how long", () => {
		const waiting = decideCompaction({ ...input, rentTokens: 40_000 });
		expect(earlyLine({ count: 0, last: null, waiting })).toBe(
			"over the budget with no fold due: compacts early in ~1 more request (rent ~5.0k of 1.5 × rewrite ~10k)",
		);
	});
	test("nothing to say: none made, none waiting for rent", () => {
		expect(earlyLine(undefined)).toBeNull();
		expect(earlyLine({ count: 0, last: null, waiting: decideCompaction({ ...input, canFold: true }) })).toBeNull();
	});
	test("details that are not an early compaction's record read as none", () => {
		expect(parseEarlyRecord(undefined)).toBeNull();
		expect(parseEarlyRecord({ contextFold: { v: 1, reason: "threshold" } })).toBeNull();
		expect(
			parseEarlyRecord({ contextFold: { reason: "early", early: { v: 1, rule: "rent", context: "x" } } }),
		).toBeNull();
		expect(parseEarlyRecord({ contextFold: { reason: "early", early: { v: 2, rule: "rent" } } })).toBeNull();
	});
});
