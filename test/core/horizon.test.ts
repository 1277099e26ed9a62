/**
 * The compaction ahead (policy/horizon.ts): the facts read from a context, and what a warm fold is
 * worth against letting Pi's compaction come, with exact numbers and the stated properties.
 */
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import {
	type CompactionAhead,
	compactionAhead,
	GROWTH_REQUESTS,
	PI_KEEP_RECENT_TOKENS,
	PI_RESERVE_TOKENS,
	requestsToThreshold,
	SUMMARY_TOKENS_BOUND,
	worthBeforeCompaction,
} from "../../src/core/policy/horizon.ts";

const RUNS = Number(process.env.CF_FUZZ_RUNS ?? 300);

/** A context of `n` requests: each a 100-token prompt message and a response, then `step` tokens of results. */
function context(n: number, step: number) {
	const tokensPerMessage: number[] = [];
	const responses: number[] = [];
	for (let i = 0; i < n; i++) {
		tokensPerMessage.push(100);
		responses.push(tokensPerMessage.length);
		tokensPerMessage.push(50);
		tokensPerMessage.push(step);
	}
	return { tokensPerMessage, responses };
}

describe("compactionAhead", () => {
	test("Pi's defaults: threshold window - 16,384, kept 20k plus the summary bound, growth over the newest 20 requests", () => {
		const c = context(30, 1_000);
		const a = compactionAhead({ ...c, context: 40_000, window: 100_000 });
		expect(SUMMARY_TOKENS_BOUND).toBe(3_250);
		// Growth: every message after the response 20 back (its result, then 20 whole requests of
		// 100 + 50 + 1,000), over 20.
		expect(a).toEqual({
			threshold: 100_000 - PI_RESERVE_TOKENS,
			kept: PI_KEEP_RECENT_TOKENS + SUMMARY_TOKENS_BOUND,
			context: 40_000,
			growth: (1_000 + 20 * 1_150) / GROWTH_REQUESTS,
			remaining: 30,
		});
	});
	test("Pi's own settings: its reserve and keep; the kept part never exceeds the context", () => {
		const c = context(5, 2_000);
		const a = compactionAhead({
			...c,
			context: 15_000,
			window: 64_000,
			pi: { enabled: true, reserveTokens: 30_000, keepRecentTokens: 10_000 },
		});
		expect(a?.threshold).toBe(34_000);
		expect(a?.kept).toBe(10_000 + SUMMARY_TOKENS_BOUND);
		// Fewer than 20 requests: the growth is measured over what there is (4 request steps).
		expect(a?.growth).toBe((2_000 + 4 * 2_150) / 4);
		expect(compactionAhead({ ...c, context: 5_000, window: 64_000 })?.kept).toBe(5_000);
	});
	test("nothing ahead: Pi's compaction off, fewer than three responses, the context at or past the threshold", () => {
		const c = context(10, 1_000);
		const off = { enabled: false, reserveTokens: 16_384, keepRecentTokens: 20_000 };
		expect(compactionAhead({ ...c, context: 20_000, window: 100_000, pi: off })).toBeNull();
		expect(compactionAhead({ ...context(2, 1_000), context: 20_000, window: 100_000 })).toBeNull();
		expect(compactionAhead({ ...c, context: 100_000 - PI_RESERVE_TOKENS, window: 100_000 })).toBeNull();
		expect(compactionAhead({ ...c, context: 100_000 - PI_RESERVE_TOKENS - 1, window: 100_000 })).not.toBeNull();
	});
});

describe("worthBeforeCompaction", () => {
	const a: CompactionAhead = { threshold: 80_000, kept: 25_000, context: 60_000, growth: 2_000, remaining: 50 };
	test("a session expected to run past the compaction: the payback until it, less the compaction put off", () => {
		// h = 10 requests to the threshold; F = 10k at r = 0.1: 1k·10 = 10k; put off F/g = 5 requests at
		// (T - K)·r = 5.5k each: 27.5k. Worth -17.5k.
		expect(worthBeforeCompaction(a, 10_000, 0.1)).toBeCloseTo(10_000 - 27_500, 9);
		// The compaction put off is capped by the requests left after it (2 of them here).
		expect(worthBeforeCompaction({ ...a, remaining: 12 }, 10_000, 0.1)).toBeCloseTo(10_000 - 5_500 * 2, 9);
	});
	test("a session expected to end first: the payback on every request left", () => {
		expect(worthBeforeCompaction({ ...a, remaining: 10 }, 10_000, 0.1)).toBeCloseTo(10_000, 9);
		expect(worthBeforeCompaction({ ...a, remaining: 4 }, 10_000, 0.1)).toBeCloseTo(4_000, 9);
	});
	test("requests to the threshold, rounded up", () => {
		expect(requestsToThreshold(a)).toBe(10);
		expect(requestsToThreshold({ ...a, growth: 3_000 })).toBe(7);
		expect(requestsToThreshold({ ...a, context: 90_000 })).toBe(0);
	});
	const aheadArb = fc
		.record({
			kept: fc.integer({ min: 1_000, max: 40_000 }),
			above: fc.nat(60_000),
			left: fc.integer({ min: 1, max: 150_000 }),
			growth: fc.integer({ min: 1, max: 8_000 }),
			remaining: fc.nat(400),
		})
		.map((x) => ({
			threshold: x.kept + x.above + x.left,
			kept: x.kept,
			context: x.kept + x.above,
			growth: x.growth,
			remaining: x.remaining,
		}));
	test("never more than the plain payback over the session left, and negative whenever the session runs F/g past the compaction", () => {
		fc.assert(
			fc.property(aheadArb, fc.nat(80_000), (ahead, freed) => {
				const r = 0.1;
				const w = worthBeforeCompaction(ahead, freed, r);
				expect(w).toBeLessThanOrEqual(freed * r * ahead.remaining + 1e-6);
				const h = (ahead.threshold - ahead.context) / ahead.growth;
				if (freed > 0 && ahead.context > ahead.kept && ahead.remaining >= h + freed / ahead.growth)
					expect(w).toBeLessThan(0);
			}),
			{ numRuns: RUNS },
		);
	});
	test("a far threshold changes nothing: the plain payback over the session left", () => {
		fc.assert(
			fc.property(aheadArb, fc.nat(80_000), (ahead, freed) => {
				const far = { ...ahead, threshold: ahead.context + ahead.growth * (ahead.remaining + 1) };
				expect(worthBeforeCompaction(far, freed, 0.1)).toBeCloseTo(freed * 0.1 * ahead.remaining, 6);
			}),
			{ numRuns: RUNS },
		);
	});
});
