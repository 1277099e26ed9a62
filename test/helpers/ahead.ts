/** Arbitrary compactions ahead (policy/horizon.ts) for the property tests of the fold rule. */
import fc from "fast-check";
import type { CompactionAhead } from "../../src/core/policy/horizon.ts";

/** Pi's compaction ahead: near or far, a session expected to end before it or to run past it. */
export const aheadArb: fc.Arbitrary<CompactionAhead> = fc
	.record({
		kept: fc.integer({ min: 1_000, max: 40_000 }),
		above: fc.nat(60_000),
		left: fc.integer({ min: 1, max: 150_000 }),
		tail: fc.nat(30_000),
		growth: fc.integer({ min: 1, max: 8_000 }),
		remaining: fc.nat(400),
	})
	.map((a) => ({
		threshold: a.kept + a.above + a.left,
		kept: a.kept,
		context: a.kept + a.above,
		beforeTail: Math.max(0, a.kept + a.above - a.tail),
		growth: a.growth,
		remaining: a.remaining,
	}));
