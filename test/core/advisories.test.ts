import { describe, expect, test } from "bun:test";
import { ADVISORY_MIN_TOKENS, coldVerdict, idleVerdict } from "../../src/core/advisories.ts";

const MIN = 60_000;
const base = { now: 100 * MIN, idleMinutes: 30, lastActivity: 50 * MIN, carried: 85_000, lastNoticeAnchor: null };

describe("idleVerdict", () => {
	test("warns once the interval ran out, with the carried size", () => {
		expect(idleVerdict(base)).toEqual({
			type: "warn",
			message: "cache may have expired: ~85k tok may rebill. Consider /fold-handoff",
			anchor: 50 * MIN,
		});
	});
	test.each([
		[{ idleMinutes: null }, "disabled"],
		[{ idleMinutes: 0 }, "disabled"],
		[{ carried: null }, "unknown-size"],
		[{ carried: ADVISORY_MIN_TOKENS - 1 }, "small"],
		[{ now: 50 * MIN + 29 * MIN }, "fresh"],
		[{ lastNoticeAnchor: 50 * MIN }, "already-said"],
	])("%p stays quiet (%s)", (over, reason) => {
		expect(idleVerdict({ ...base, ...over })).toEqual({ type: "quiet", reason } as never);
	});
	test("no recorded activity for the model: cache unverified, once", () => {
		const v = idleVerdict({ ...base, lastActivity: null });
		expect(v).toEqual({
			type: "warn",
			message: "cache unverified: ~85k tok may rebill. Consider /fold-handoff",
			anchor: Number.NEGATIVE_INFINITY,
		});
		expect(idleVerdict({ ...base, lastActivity: null, lastNoticeAnchor: Number.NEGATIVE_INFINITY }).type).toBe("quiet");
	});
	test("a new interval after new activity warns again", () => {
		expect(idleVerdict({ ...base, lastActivity: 60 * MIN, lastNoticeAnchor: 50 * MIN }).type).toBe("warn");
	});
});

describe("coldVerdict", () => {
	const cold = { observed: 3, firstAfterFold: false, cacheRead: 0, fresh: 40_000, inStreak: false };
	test("a cold final response with a large fresh input warns", () => {
		expect(coldVerdict(cold)).toEqual({
			warn: true,
			message: "session cold: rebilled ~40k tok as fresh input. Consider /fold-handoff",
		});
	});
	test.each([
		[{ cacheRead: 1 }],
		[{ observed: 1 }],
		[{ firstAfterFold: true }],
		[{ inStreak: true }],
		[{ fresh: ADVISORY_MIN_TOKENS - 1 }],
	])("%p does not warn", (over) => {
		expect(coldVerdict({ ...cold, ...over }).warn).toBe(false);
	});
});
