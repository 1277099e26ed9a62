/**
 * The cache-life facts the priced rule reads: the prompt-cache lifetime (as Pi decides it), why a
 * request's cache is cold, a model's price schedule from Pi's `cost`, and the newest responses.
 */
import { describe, expect, test } from "bun:test";
import { ratesAt } from "../../src/core/accounting.ts";
import {
	type ColdInput,
	cacheLifetimeMs,
	coldForRequest,
	coldReason,
	DEFAULT_CACHE_SECONDS,
	type ResponseFacts,
	recentResponses,
	scheduleOf,
	UNCACHED_MIN_PROMPT,
} from "../../src/core/cache-life.ts";

describe("cacheLifetimeMs", () => {
	test("Pi's defaults: 5 minutes short, 1 hour long", () => {
		expect(DEFAULT_CACHE_SECONDS).toEqual({ short: 300, long: 3600 });
	});
	test.each<[string | undefined, { short?: number | null; long?: number | null } | null | undefined, number]>([
		[undefined, undefined, 300_000],
		[undefined, null, 300_000],
		["short", null, 300_000],
		["long", null, 3_600_000],
		["", null, 300_000],
		["forever", null, 300_000],
		// The model's own lifetimes (Pi 1.6.0 `promptCache`), for the tier the retention picks.
		[undefined, { short: 600, long: 7200 }, 600_000],
		["long", { short: 600, long: 7200 }, 7_200_000],
		["long", { short: 600 }, 3_600_000],
		[undefined, { long: 7200 }, 300_000],
		// A declared 0 means the provider keeps nothing: every request is cold.
		[undefined, { short: 0 }, 0],
		["long", { long: 0 }, 0],
		// Unusable declarations fall back to Pi's defaults.
		[undefined, { short: null }, 300_000],
		[undefined, { short: -1 }, 300_000],
		[undefined, { short: Number.NaN }, 300_000],
		[undefined, { short: Number.POSITIVE_INFINITY }, 300_000],
		["long", { long: -60 }, 3_600_000],
	])("retention %p, promptCache %p -> %p ms", (retention, promptCache, ms) => {
		expect(cacheLifetimeMs(retention, promptCache)).toBe(ms);
	});
	test("a promptCache value that is not a number is ignored", () => {
		expect(cacheLifetimeMs(undefined, { short: "600" } as unknown as { short: number })).toBe(300_000);
	});
	// Pi reads the variable as `PI_CACHE_RETENTION === "long" ? "long" : "short"` (pi-ai's
	// resolveCacheRetention and getPromptCacheTtlMs, both versions): no other value, no case folding,
	// and "none" only ever comes from a request option, never from the environment.
	test.each<[string, number]>([
		["none", 300_000],
		["NONE", 300_000],
		["LONG", 300_000],
		[" long", 300_000],
		["Long", 300_000],
	])("PI_CACHE_RETENTION=%p is what Pi makes of it: %p ms", (retention, ms) => {
		expect(cacheLifetimeMs(retention, null)).toBe(ms);
	});
});

const warmUsage = { input: 500, output: 40, cacheRead: 30_000, cacheWrite: 600 };
const uncachedUsage = { input: UNCACHED_MIN_PROMPT, output: 40, cacheRead: 0, cacheWrite: 0 };
const resp = (usage: ResponseFacts["usage"] = warmUsage, provider = "anthropic", model = "sonnet"): ResponseFacts => ({
	provider,
	model,
	usage,
});
const cold = (over: Partial<ColdInput>): ReturnType<typeof coldReason> =>
	coldReason({
		now: 1_000_000,
		lastActivity: 1_000_000 - 60_000,
		lifetimeMs: 300_000,
		recent: [resp(), resp()],
		request: { provider: "anthropic", model: "sonnet" },
		...over,
	});

describe("coldReason", () => {
	test("warm: the same model, within the lifetime, reading from cache", () => {
		expect(cold({})).toBeNull();
	});
	test("no response yet: nothing is cached, so nothing can be cold (whatever else holds)", () => {
		expect(cold({ recent: [] })).toBeNull();
		expect(cold({ recent: [], lifetimeMs: 0, request: { provider: "x", model: "y" } })).toBeNull();
		expect(cold({ recent: [], lastActivity: 0 })).toBeNull();
	});
	test("another model or another provider than the newest response", () => {
		expect(cold({ request: { provider: "anthropic", model: "opus" } })).toBe("model-change");
		expect(cold({ request: { provider: "bedrock", model: "sonnet" } })).toBe("model-change");
		// Only the newest response counts: an older one on another model does not.
		expect(cold({ recent: [resp(), resp(warmUsage, "openai", "gpt")] })).toBeNull();
		expect(cold({ recent: [resp(warmUsage, "openai", "gpt"), resp()] })).toBe("model-change");
	});
	test("a model change comes first: before idle and before uncached", () => {
		expect(
			cold({
				request: { provider: "anthropic", model: "opus" },
				lastActivity: 0,
				lifetimeMs: 0,
				recent: [resp(uncachedUsage), resp(uncachedUsage)],
			}),
		).toBe("model-change");
	});
	test("an unknown model on either side is no model change", () => {
		expect(cold({ request: { provider: "anthropic" } })).toBeNull();
		expect(cold({ request: {} })).toBeNull();
		expect(cold({ recent: [{ provider: "anthropic", usage: warmUsage }, resp()] })).toBeNull();
		expect(cold({ recent: [{ usage: warmUsage }] })).toBeNull();
	});
	test("an unknown provider on either side is no model change when the model is the same", () => {
		// A response recorded without its provider, or a request whose provider is not known: the same
		// model id is all there is to compare. A false "model-change" would fold everything at once on a
		// warm cache, the most expensive rewrite there is.
		expect(cold({ recent: [{ model: "sonnet", usage: warmUsage }, resp()] })).toBeNull();
		expect(cold({ request: { model: "sonnet" } })).toBeNull();
		// The model itself still counts.
		expect(cold({ recent: [{ model: "opus", usage: warmUsage }, resp()] })).toBe("model-change");
		expect(cold({ request: { model: "opus" } })).toBe("model-change");
	});
	test("idle: strictly longer than the lifetime since the last activity", () => {
		expect(cold({ lastActivity: 1_000_000 - 300_000 })).toBeNull();
		expect(cold({ lastActivity: 1_000_000 - 300_001 })).toBe("idle");
		expect(cold({ lastActivity: 0 })).toBe("idle");
		expect(cold({ lifetimeMs: 3_600_000, lastActivity: 1_000_000 - 3_600_000 })).toBeNull();
		expect(cold({ lifetimeMs: 3_600_000, lastActivity: 1_000_000 - 3_600_001 })).toBe("idle");
	});
	test("no idle judgment without a time on either side", () => {
		expect(cold({ now: null, lastActivity: 0 })).toBeNull();
		expect(cold({ lastActivity: null })).toBeNull();
		expect(cold({ now: null, lastActivity: null })).toBeNull();
	});
	test("a lifetime of 0 (or less) is always cold, times or not", () => {
		expect(cold({ lifetimeMs: 0 })).toBe("idle");
		expect(cold({ lifetimeMs: 0, now: null, lastActivity: null })).toBe("idle");
		expect(cold({ lifetimeMs: -5 })).toBe("idle");
	});
	test("idle comes before uncached", () => {
		expect(cold({ lastActivity: 0, recent: [resp(uncachedUsage), resp(uncachedUsage)] })).toBe("idle");
	});
	test("uncached: the newest two responses, each on a large prompt, read and wrote nothing", () => {
		expect(cold({ recent: [resp(uncachedUsage), resp(uncachedUsage)] })).toBe("uncached");
		// Only the newest two are read.
		expect(cold({ recent: [resp(uncachedUsage), resp(uncachedUsage), resp()] })).toBe("uncached");
		// The prompt is input + read + write, at least UNCACHED_MIN_PROMPT; output does not count.
		const split = { input: 12_000, output: 0, cacheRead: 0, cacheWrite: 0 };
		expect(cold({ recent: [resp(split), resp({ ...split, input: UNCACHED_MIN_PROMPT })] })).toBeNull();
		const small = { input: UNCACHED_MIN_PROMPT - 1, output: 50_000, cacheRead: 0, cacheWrite: 0 };
		expect(cold({ recent: [resp(small), resp(uncachedUsage)] })).toBeNull();
		expect(cold({ recent: [resp(uncachedUsage), resp(small)] })).toBeNull();
	});
	test("one miss is only a miss; any read or write means the provider caches", () => {
		expect(cold({ recent: [resp(uncachedUsage)] })).toBeNull();
		expect(cold({ recent: [resp(uncachedUsage), resp()] })).toBeNull();
		expect(cold({ recent: [resp(), resp(uncachedUsage)] })).toBeNull();
		expect(cold({ recent: [resp({ ...uncachedUsage, cacheWrite: 1 }), resp(uncachedUsage)] })).toBeNull();
		expect(cold({ recent: [resp(uncachedUsage), resp({ ...uncachedUsage, cacheRead: 1 })] })).toBeNull();
	});
	test("usage fields that are not positive finite numbers count as 0", () => {
		const odd = {
			input: UNCACHED_MIN_PROMPT,
			output: 0,
			cacheRead: "5" as unknown as number,
			cacheWrite: Number.NaN,
		};
		expect(cold({ recent: [resp(odd), resp(uncachedUsage)] })).toBe("uncached");
		const negative = { input: UNCACHED_MIN_PROMPT, output: 0, cacheRead: -100, cacheWrite: -1 };
		expect(cold({ recent: [resp(negative), resp(uncachedUsage)] })).toBe("uncached");
		// A prompt made of junk is no large prompt.
		const junk = { input: Number.POSITIVE_INFINITY, output: 0, cacheRead: 0, cacheWrite: 0 };
		expect(cold({ recent: [resp(junk), resp(uncachedUsage)] })).toBeNull();
		// No usage at all: nothing says the provider is not caching.
		expect(cold({ recent: [{ provider: "anthropic", model: "sonnet" }, resp(uncachedUsage)] })).toBeNull();
		expect(cold({ recent: [resp({}), resp(uncachedUsage)] })).toBeNull();
	});
});

describe("scheduleOf", () => {
	const BASE = { input: 1, output: 2, cacheRead: 0.1, cacheWrite: 1.25 };
	test.each<[unknown]>([[undefined], [null], [0], ["3"], [[1, 2, 3]], [true]])("%p is no schedule", (cost) => {
		expect(scheduleOf(cost)).toBeNull();
	});
	test("a Pi model's cost, as declared", () => {
		expect(scheduleOf({ input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 })).toEqual({
			input: 3,
			output: 15,
			cacheRead: 0.3,
			cacheWrite: 3.75,
		});
	});
	test("missing, negative, NaN, infinite and non-number prices are 0", () => {
		expect(scheduleOf({})).toEqual({ input: 0, output: 0, cacheRead: 0, cacheWrite: 0 });
		expect(
			scheduleOf({ input: -3, output: Number.NaN, cacheRead: Number.POSITIVE_INFINITY, cacheWrite: "3.75" }),
		).toEqual({ input: 0, output: 0, cacheRead: 0, cacheWrite: 0 });
	});
	test("tiers: sorted by threshold, prices cleaned like the base ones", () => {
		const s = scheduleOf({
			...BASE,
			tiers: [
				{ inputTokensAbove: 200_000, input: 4, output: 8, cacheRead: 0.4, cacheWrite: 5 },
				{ inputTokensAbove: 100_000, input: 2, output: -1, cacheRead: "x", cacheWrite: 2.5 },
			],
		});
		expect(s).toEqual({
			...BASE,
			tiers: [
				{ above: 100_000, input: 2, output: 0, cacheRead: 0, cacheWrite: 2.5 },
				{ above: 200_000, input: 4, output: 8, cacheRead: 0.4, cacheWrite: 5 },
			],
		});
	});
	test("malformed tiers are dropped, the rest kept; no usable tier means no tiers field", () => {
		const s = scheduleOf({
			input: 1,
			tiers: [
				null,
				5,
				"t",
				[],
				{ input: 9 },
				{ inputTokensAbove: "100000", input: 9 },
				{ inputTokensAbove: 0, input: 2 },
			],
		});
		expect(s?.tiers).toEqual([{ above: 0, input: 2, output: 0, cacheRead: 0, cacheWrite: 0 }]);
		expect(scheduleOf({ input: 1, tiers: [] })).toEqual({ input: 1, output: 0, cacheRead: 0, cacheWrite: 0 });
		expect(scheduleOf({ input: 1, tiers: [{ input: 9 }] })).not.toHaveProperty("tiers");
		expect(scheduleOf({ input: 1, tiers: { inputTokensAbove: 5, input: 9 } })).not.toHaveProperty("tiers");
	});
	test("a tier whose threshold is NaN or infinite is dropped, and the others still apply in order", () => {
		// A NaN threshold used to stay in the list, where it made the sort's comparator inconsistent: the
		// 100k tier came after the 200k one, and a 250k-token prompt was priced at the 100k tier.
		const s = scheduleOf({
			...BASE,
			tiers: [
				{ inputTokensAbove: 200_000, input: 4, output: 8, cacheRead: 0.4, cacheWrite: 5 },
				{ inputTokensAbove: Number.NaN, input: 9, output: 9, cacheRead: 0.9, cacheWrite: 9 },
				{ inputTokensAbove: 100_000, input: 2, output: 4, cacheRead: 0.2, cacheWrite: 2.5 },
				{ inputTokensAbove: Number.POSITIVE_INFINITY, input: 7, output: 7, cacheRead: 0.7, cacheWrite: 7 },
			],
		});
		expect(s?.tiers?.map((t) => t.above)).toEqual([100_000, 200_000]);
		expect(ratesAt(s as NonNullable<typeof s>, 250_000).input).toBe(4);
		expect(ratesAt(s as NonNullable<typeof s>, 150_000).input).toBe(2);
		expect(ratesAt(s as NonNullable<typeof s>, 100_000).input).toBe(1);
	});
	test("Pi's tiered model shape (a Haiku-5.5-like cost) reads as one tier", () => {
		const s = scheduleOf({
			input: 0.11,
			output: 0.55,
			cacheRead: 0.011,
			cacheWrite: 0.1375,
			tiers: [{ inputTokensAbove: 100_000, input: 0.55, output: 2.75, cacheRead: 0.055, cacheWrite: 0.6875 }],
		});
		expect(s?.tiers).toEqual([{ above: 100_000, input: 0.55, output: 2.75, cacheRead: 0.055, cacheWrite: 0.6875 }]);
	});
});

describe("recentResponses", () => {
	const a = (ts: unknown, over: Record<string, unknown> = {}) => ({
		role: "assistant",
		stopReason: "toolUse",
		provider: "anthropic",
		model: "sonnet",
		usage: warmUsage,
		timestamp: ts,
		...over,
	});
	test("no messages, or none from the assistant", () => {
		expect(recentResponses([])).toEqual({ recent: [], lastAt: null });
		expect(
			recentResponses([
				{ role: "user", timestamp: 5 },
				{ role: "toolResult", timestamp: 6 },
			]),
		).toEqual({ recent: [], lastAt: null });
	});
	test("newest first, at most two, the time of the newest", () => {
		const out = recentResponses([
			a(1, { model: "m1" }),
			{ role: "user", timestamp: 2 },
			a(3, { model: "m3" }),
			{ role: "toolResult", timestamp: 4 },
			a(5, { model: "m5", stopReason: "stop" }),
			{ role: "toolResult", timestamp: 6 },
		]);
		expect(out.recent.map((r) => r.model)).toEqual(["m5", "m3"]);
		expect(out.lastAt).toBe(5);
	});
	test("errors and aborted responses are skipped", () => {
		const out = recentResponses([
			a(1, { model: "m1" }),
			a(2, { model: "m2", stopReason: "length" }),
			a(3, { model: "m3", stopReason: "error" }),
			a(4, { model: "m4", stopReason: "aborted" }),
		]);
		expect(out.recent.map((r) => r.model)).toEqual(["m2", "m1"]);
		expect(out.lastAt).toBe(2);
	});
	test("only fields of the right type are copied", () => {
		const out = recentResponses([a(1, { provider: 7, model: null, usage: "lots" })]);
		expect(out.recent).toEqual([{}]);
		const full = recentResponses([a(1)]);
		expect(full.recent).toEqual([{ provider: "anthropic", model: "sonnet", usage: warmUsage }]);
	});
	test("the time is the newest response's; without one, there is none (never an older one's)", () => {
		// An older time would make the cache look idle longer than it has been: a false cold.
		expect(recentResponses([a(1), a("2025-01-01")]).lastAt).toBeNull();
		expect(recentResponses([a(1), a(undefined)]).lastAt).toBeNull();
		expect(recentResponses([a("x"), a(7)]).lastAt).toBe(7);
	});
});

describe("coldForRequest: the rule as the extension, status and simulate ask it", () => {
	const reply = (t: number) => ({
		role: "assistant",
		timestamp: t,
		provider: "p",
		model: "m",
		usage: { input: 10, output: 1, cacheRead: 500, cacheWrite: 0 },
	});
	const base = { messages: [reply(1_000)], lifetimeMs: 300_000, provider: "p", model: "m" };
	test("idle from the newest response, or from a later cache warm-up", () => {
		expect(coldForRequest({ ...base, warmAt: 0, now: 1_000 + 300_001 })).toBe("idle");
		expect(coldForRequest({ ...base, warmAt: 200_000, now: 1_000 + 300_001 })).toBeNull();
		expect(coldForRequest({ ...base, warmAt: 0, now: 1_000 + 300_000 })).toBeNull();
	});
	test("recorded times go through the caller's clock", () => {
		expect(coldForRequest({ ...base, warmAt: 0, now: 10_000, at: (t) => t - 1_000_000 })).toBe("idle");
	});
	test("another model, and no time known", () => {
		expect(coldForRequest({ ...base, warmAt: 0, now: null, model: "other" })).toBe("model-change");
		expect(coldForRequest({ ...base, warmAt: 0, now: null })).toBeNull();
		expect(coldForRequest({ ...base, messages: [], warmAt: 0, now: 1e12 })).toBeNull();
	});
});
