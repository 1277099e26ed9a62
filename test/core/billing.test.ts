// The provider billing model: longest common prefix read from cache, the rest written (Anthropic) or
// billed as input (OpenAI, Gemini), cache lifetime from timestamps, chars/4 tokens, preset prices.
import { describe, expect, test } from "bun:test";
import { PRICE_PRESETS } from "../../src/core/accounting.ts";
import {
	type BillableRequest,
	billingModel,
	billRequests,
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
