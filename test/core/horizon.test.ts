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
import { aheadArb } from "../helpers/ahead.ts";

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
		const a = compactionAhead({ ...c, context: 40_000, beforeTail: 20_000, window: 100_000 });
		expect(SUMMARY_TOKENS_BOUND).toBe(3_250);
		// Growth: every message after the response 20 back (its result, then 20 whole requests of
		// 100 + 50 + 1,000), over 20.
		expect(a).toEqual({
			threshold: 100_000 - PI_RESERVE_TOKENS,
			kept: PI_KEEP_RECENT_TOKENS + SUMMARY_TOKENS_BOUND,
			context: 40_000,
			beforeTail: 20_000,
			growth: (1_000 + 20 * 1_150) / GROWTH_REQUESTS,
			remaining: 30,
		});
	});
	test("Pi's own settings: its reserve and keep; the kept part never exceeds the context", () => {
		const c = context(5, 2_000);
		const a = compactionAhead({
			...c,
			context: 15_000,
			beforeTail: 5_000,
			window: 64_000,
			pi: { enabled: true, reserveTokens: 30_000, keepRecentTokens: 10_000 },
		});
		expect(a?.threshold).toBe(34_000);
		expect(a?.kept).toBe(10_000 + SUMMARY_TOKENS_BOUND);
		// Fewer than 20 requests: the growth is measured over what there is (4 request steps).
		expect(a?.growth).toBe((2_000 + 4 * 2_150) / 4);
		expect(compactionAhead({ ...c, context: 5_000, beforeTail: 0, window: 64_000 })?.kept).toBe(5_000);
	});
	test("nothing ahead: Pi's compaction off, fewer than three responses, the context at or past the threshold", () => {
		const c = context(10, 1_000);
		const off = { enabled: false, reserveTokens: 16_384, keepRecentTokens: 20_000 };
		const at = { beforeTail: 1_000, window: 100_000 };
		expect(compactionAhead({ ...c, ...at, context: 20_000, pi: off })).toBeNull();
		expect(compactionAhead({ ...context(2, 1_000), ...at, context: 20_000 })).toBeNull();
		expect(compactionAhead({ ...c, ...at, context: 100_000 - PI_RESERVE_TOKENS })).toBeNull();
		expect(compactionAhead({ ...c, ...at, context: 100_000 - PI_RESERVE_TOKENS - 1 })).not.toBeNull();
	});
});

describe("worthBeforeCompaction", () => {
	// T 80k, K 25k, C 60k; 40k before the tail; growth 2k per request (h = 10 requests to T); 50 to come.
	const a: CompactionAhead = {
		threshold: 80_000,
		kept: 25_000,
		context: 60_000,
		beforeTail: 40_000,
		growth: 2_000,
		remaining: 50,
	};
	test("a fold that leaves the context far above what the compaction keeps only postpones it", () => {
		// F = 10k of B = 40k: later growth folds to g_f = 1.5k. Before T: 10k·10 + (0.5k·10²)/2 = 125k
		// smaller. After: (60 - 10 - 25 + 1.5·10)k = 40k larger, until the folded context reaches T at
		// (80 - 60 + 10)k / 1.5k = 20 requests: 10 requests, 400k. Worth (125k - 400k)·0.1.
		expect(worthBeforeCompaction(a, 10_000, 0.1)).toBeCloseTo(-27_500, 6);
		// Five requests after the compaction to come: 200k of it.
		expect(worthBeforeCompaction({ ...a, remaining: 15 }, 10_000, 0.1)).toBeCloseTo(-7_500, 6);
	});
	test("a fold that goes about as low as the compaction, with most growth folding later, keeps its payback", () => {
		// F = 35k: g_f = 250. Before T: 35k·10 + (1.75k·10²)/2 = 437.5k; after: (60 - 35 - 25 + 2.5)k =
		// 2.5k for the 40 requests left (the folded context reaches T only after 220): 100k.
		expect(worthBeforeCompaction(a, 35_000, 0.1)).toBeCloseTo(33_750, 6);
	});
	test("a session expected to end first: the payback, and the growth that later folds take out", () => {
		// 8 requests to come: 10k·8 + (0.5k·8²)/2 = 96k.
		expect(worthBeforeCompaction({ ...a, remaining: 8 }, 10_000, 0.1)).toBeCloseTo(9_600, 6);
		expect(worthBeforeCompaction({ ...a, remaining: 0 }, 10_000, 0.1)).toBe(0);
	});
	test("requests to the threshold, rounded up", () => {
		expect(requestsToThreshold(a)).toBe(10);
		expect(requestsToThreshold({ ...a, growth: 3_000 })).toBe(7);
		expect(requestsToThreshold({ ...a, context: 90_000 })).toBe(0);
	});
	const plain = (ahead: CompactionAhead, freed: number, r: number) => {
		const B = Math.max(freed, ahead.beforeTail, 1);
		const gf = ahead.growth * (1 - freed / B);
		const E = ahead.remaining;
		return r * (freed * E + ((ahead.growth - gf) * E * E) / 2);
	};
	test("never more than the payback over the session left with nothing ahead; exactly that with the threshold far off", () => {
		fc.assert(
			fc.property(aheadArb, fc.nat(80_000), (ahead, raw) => {
				const freed = Math.min(raw, ahead.beforeTail);
				expect(worthBeforeCompaction(ahead, freed, 0.1)).toBeLessThanOrEqual(plain(ahead, freed, 0.1) + 1e-6);
				const far = { ...ahead, threshold: ahead.context + ahead.growth * (ahead.remaining + 1) };
				expect(worthBeforeCompaction(far, freed, 0.1)).toBeCloseTo(plain(ahead, freed, 0.1), 3);
			}),
			{ numRuns: RUNS },
		);
	});
	test("more to come after the compaction never makes a fold that stays above it worth more", () => {
		fc.assert(
			fc.property(aheadArb, fc.nat(80_000), fc.nat(100), (ahead, raw, more) => {
				const freed = Math.min(raw, ahead.beforeTail);
				const h = (ahead.threshold - ahead.context) / ahead.growth;
				if (ahead.remaining < h) return;
				const w = worthBeforeCompaction(ahead, freed, 0.1);
				expect(worthBeforeCompaction({ ...ahead, remaining: ahead.remaining + more }, freed, 0.1)).toBeLessThanOrEqual(
					w + 1e-6,
				);
			}),
			{ numRuns: RUNS },
		);
	});
});
