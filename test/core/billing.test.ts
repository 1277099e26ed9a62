// The provider billing model: longest common prefix read from cache, the rest written (Anthropic) or
// billed as input (OpenAI, Gemini), cache lifetime from timestamps, chars/4 tokens, preset prices.
import { describe, expect, test } from "bun:test";
import { PRICE_PRESETS } from "../../src/core/accounting.ts";
import {
	type BillableRequest,
	billingModel,
	billRequests,
	billUncached,
	requestPricing,
	serializeMessage,
	sharedPrefix,
} from "../../src/core/billing.ts";
import type { ViewMessage } from "../../src/core/blocks.ts";
import { commonPrefixLength } from "../../src/core/values.ts";

/** Parts of exactly `tokens` tokens each (chars/4 with the 1-char separator). */
const part = (ch: string, tokens: number) => ch.repeat(tokens * 4 - 1);
const req = (parts: string[], at: number | null = 0, fixedTokens = 0): BillableRequest => ({
	parts,
	fixedTokens,
	at,
	output: 10,
});

describe("billRequests", () => {
	test("anthropic: the shared prefix is read, the rest written; a rewrite breaks the prefix", () => {
		const a = part("a", 100);
		const b = part("b", 50);
		const c = part("c", 30);
		const bills = billRequests([req([a]), req([a, b]), req([a, c, b])], billingModel("anthropic"));
		expect(bills.map((x) => [x.prompt, x.cacheRead, x.cacheWrite, x.input, x.prefixBreak])).toEqual([
			[100, 0, 100, 0, false],
			[150, 100, 50, 0, false],
			// c differs from b at its first character, so only `a` (and its separator) is shared.
			[180, 100, 80, 0, true],
		]);
		const p = PRICE_PRESETS.anthropic;
		expect(bills[1]?.cost).toBeCloseTo((100 * p.cacheRead + 50 * p.cacheWrite + 10 * p.output) / 1e6, 12);
	});

	test("openai: the rest is uncached input; under 1,024 cached tokens nothing is cached; steps of 128", () => {
		const small = billRequests([req([part("a", 1000)]), req([part("a", 1000), part("b", 10)])], billingModel("openai"));
		expect(small[1]).toMatchObject({ prompt: 1010, cacheRead: 0, input: 1010, cacheWrite: 0 });
		const big = billRequests([req([part("a", 1300)]), req([part("a", 1300), part("b", 10)])], billingModel("openai"));
		expect(big[1]).toMatchObject({ prompt: 1310, cacheRead: 1280, input: 30 });
	});

	test("a gap longer than the cache lifetime bills the whole prompt again (5 min default, 1 h option)", () => {
		const a = part("a", 100);
		const seq = [req([a], 0), req([a, a], 4 * 60_000), req([a, a, a], 10 * 60_000)];
		expect(billRequests(seq, billingModel("anthropic")).map((x) => [x.cacheRead, x.expired])).toEqual([
			[0, false],
			[100, false],
			[0, true],
		]);
		expect(billRequests(seq, billingModel("anthropic", "1h")).map((x) => x.cacheRead)).toEqual([0, 100, 200]);
	});

	test("another model's cache serves nothing: a switch and the switch back bill the whole prompt", () => {
		const a = part("a", 100);
		const on = (key: string, parts: string[]) => ({ ...req(parts, 0), cacheKey: key });
		const seq = [
			on("x/m1", [a]),
			on("x/m1", [a, a]),
			on("y/m2", [a, a, a]),
			on("x/m1", [a, a, a, a]),
			req([a, a, a, a, a], 0),
		];
		expect(billRequests(seq, billingModel("anthropic")).map((x) => [x.cacheRead, x.expired])).toEqual([
			[0, false],
			[100, false],
			[0, true],
			[0, true],
			// No key (a request whose model is unknown): judged by time alone.
			[400, false],
		]);
	});

	test("unknown times count as warm; the fixed prefix (system prompt, tools) is cached with the rest", () => {
		const bills = billRequests(
			[req([part("a", 10)], null, 500), req([part("a", 10)], null, 500)],
			billingModel("gemini"),
		);
		expect(bills[1]).toMatchObject({ prompt: 510, cacheRead: 510, input: 0, expired: false });
	});

	test("presets: a 1-hour Anthropic cache write costs 2x input, 5 minutes 1.25x", () => {
		expect(billingModel("anthropic").prices.cacheWrite).toBe(3.75);
		expect(billingModel("anthropic", "1h").prices.cacheWrite).toBe(6);
		expect(billingModel("openai").prices).toEqual({ ...PRICE_PRESETS.openai });
	});
});

describe("billRequests with each request's own model prices", () => {
	const opus = { input: 5, output: 25, cacheRead: 0.5, cacheWrite: 6.25 };
	const priced = (parts: string[], prices: BillableRequest["prices"]): BillableRequest => ({ ...req(parts), prices });

	test("the model's rates replace the preset's; cache writes where the model prices them", () => {
		const a = part("a", 100);
		const bills = billRequests([priced([a], opus), priced([a, a], opus)], billingModel("anthropic"));
		expect(bills[1]).toMatchObject({ cacheRead: 100, cacheWrite: 100, input: 0 });
		expect(bills[1]?.cost).toBeCloseTo((100 * 0.5 + 100 * 6.25 + 10 * 25) / 1e6, 12);
		// A one-hour cache write costs twice the model's input price.
		const hour = billRequests([priced([a], opus)], billingModel("anthropic", "1h"));
		expect(hour[0]?.cost).toBeCloseTo((100 * 10 + 10 * 25) / 1e6, 12);
	});

	test("no cache-write price: the rest is plain input; no cache-read price either: no cache at all", () => {
		const a = part("a", 100);
		const gpt = { input: 1.25, output: 10, cacheRead: 0.125, cacheWrite: 0 };
		const uncached = billRequests([priced([a], gpt), priced([a, a], gpt)], billingModel("anthropic"));
		expect(uncached[1]).toMatchObject({ cacheRead: 100, cacheWrite: 0, input: 100 });
		const plain = { input: 1, output: 2, cacheRead: 0, cacheWrite: 0 };
		const none = billRequests([priced([a], plain), priced([a, a], plain)], billingModel("anthropic"));
		expect(none[1]).toMatchObject({ cacheRead: 0, cacheWrite: 0, input: 200 });
		expect(none[1]?.cost).toBeCloseTo((200 * 1 + 10 * 2) / 1e6, 12);
	});

	test("a tiered model: the tier of the prompt's size prices the whole request", () => {
		const tiered = { ...opus, tiers: [{ above: 150, input: 10, output: 50, cacheRead: 1, cacheWrite: 12.5 }] };
		const a = part("a", 100);
		const bills = billRequests([priced([a], tiered), priced([a, a], tiered)], billingModel("anthropic"));
		expect(bills[0]?.cost).toBeCloseTo((100 * 6.25 + 10 * 25) / 1e6, 12);
		expect(bills[1]?.cost).toBeCloseTo((100 * 1 + 100 * 12.5 + 10 * 50) / 1e6, 12);
		expect(requestPricing(billingModel("openai"), tiered, 151).rates.input).toBe(10);
		expect(requestPricing(billingModel("openai"), tiered, 150).rates.input).toBe(5);
	});

	test("a request without the prompt cache (Pi's summary requests): its whole prompt as input, at the tier of its size", () => {
		const tiered = { ...opus, tiers: [{ above: 150, input: 10, output: 50, cacheRead: 1, cacheWrite: 12.5 }] };
		const model = billingModel("anthropic");
		expect(billUncached(model, { prompt: 100, output: 1_500 })).toEqual({
			input: 100,
			output: 1_500,
			cacheRead: 0,
			cacheWrite: 0,
			prompt: 100,
			cost: (100 * 3 + 1_500 * 15) / 1e6,
			prefixBreak: false,
			expired: false,
		});
		// A model with a cache-write price still bills it as input: nothing is written to the cache.
		expect(billUncached(model, { prompt: 100, output: 10, prices: tiered }).cost).toBeCloseTo(
			(100 * 5 + 10 * 25) / 1e6,
			12,
		);
		expect(billUncached(model, { prompt: 200, output: 10, prices: tiered }).cost).toBeCloseTo(
			(200 * 10 + 10 * 50) / 1e6,
			12,
		);
	});

	test("without prices of its own a request is billed by the preset, as before", () => {
		expect(requestPricing(billingModel("openai"), undefined, 10)).toEqual({
			rates: { ...PRICE_PRESETS.openai },
			style: "uncached",
			caches: true,
		});
	});
});

describe("serialization", () => {
	const m: ViewMessage = {
		role: "toolResult",
		entryId: "e1",
		timestamp: 123,
		toolCallId: "call_1",
		blocks: [
			{ kind: "text", text: 'line "1"\nline 2' },
			{ kind: "image", text: "" },
		],
	};
	test("only what goes on the wire, deterministically; a replaced block contributes its replacement", () => {
		const s = serializeMessage(m);
		expect(s.startsWith('["toolResult","call_1",["text","line \\"1\\"\\nline 2"],"image:')).toBe(true);
		// An image weighs the core's 1,600-token estimate.
		expect(s.length).toBe(
			serializeMessage({ ...m, blocks: [m.blocks[0] as ViewMessage["blocks"][number]] }).length + 1 + 6400,
		);
		expect(serializeMessage(m, new Map([[0, "{#abc FOLDED}"]]))).toContain('["text","{#abc FOLDED}"]');
		expect(serializeMessage({ ...m, timestamp: 999, entryId: "other" })).toBe(s);
	});

	test("shared prefixes count whole equal parts and then characters", () => {
		expect(sharedPrefix(["ab", "cd"], ["ab", "cx", "y"])).toEqual({ chars: 4, parts: 1 });
		expect(sharedPrefix(["ab"], ["ab", "c"])).toEqual({ chars: 3, parts: 1 });
		expect(commonPrefixLength("abc", "abd")).toBe(2);
	});
});
