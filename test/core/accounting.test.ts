import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import {
	type AccountingEvent,
	accountSession,
	costOf,
	foldValue,
	PRICE_PRESETS,
	promptOf,
} from "../../src/core/accounting.ts";
import type { Usage } from "../../src/core/tokens.ts";
import { TRACE_FILES, tracePath } from "../helpers/traces.ts";

const u = (input: number, cacheRead: number, cacheWrite: number, output = 10): Usage => ({
	input,
	cacheRead,
	cacheWrite,
	output,
});
const r = (usage: Usage, timestamp = 0): AccountingEvent => ({ type: "response", usage, timestamp });

describe("accountSession", () => {
	test("ratios and totals", () => {
		const rep = accountSession([r(u(100, 0, 900)), r(u(50, 1000, 200)), r(u(0, 1200, 100))]);
		expect(rep.responses).toBe(3);
		expect(rep.perTurn).toEqual([0, 1000 / 1250, 1200 / 1300]);
		expect(rep.sessionRatio).toBe(2200 / (1000 + 1250 + 1300));
		expect(rep.writesReported).toBe(true);
		expect(rep.changes).toEqual([]);
	});

	test("a fold is charged to the response that carried it: re-prefill = old prompt - removed - read", () => {
		const rep = accountSession([
			r(u(0, 9_000, 1_000)), // prompt 10,000
			{ type: "fold", seq: 1, saved: 6_000 },
			r(u(0, 2_000, 2_500)), // read the 2k before the first masked block; rewrote the rest
			r(u(0, 4_500, 500)),
		]);
		expect(rep.changes).toEqual([{ kind: "fold", seq: 1, delta: 6_000, reprefilled: 2_000, onWire: true }]);
		expect(rep.reprefilled).toBe(2_000);
		// Both responses after the fold went out 6,000 tokens lighter.
		expect(rep.maskedSent).toBe(12_000);
		expect(rep.offWire).toBe(false);
	});

	test("the watchdog fires when the whole pre-fold prompt was still read from cache", () => {
		const rep = accountSession([r(u(0, 9_000, 1_000)), { type: "fold", seq: 1, saved: 6_000 }, r(u(0, 10_000, 600))]);
		expect(rep.changes[0]?.onWire).toBe(false);
		expect(rep.offWire).toBe(true);
	});

	test("back-to-back folds that reached the wire do not cry wolf (the baseline includes cache writes)", () => {
		const rep = accountSession([
			r(u(0, 19_000, 1_000)),
			{ type: "fold", seq: 1, saved: 12_000 },
			r(u(0, 3_000, 6_000)), // 9k prompt, mostly rewritten
			{ type: "fold", seq: 2, saved: 4_000 },
			r(u(0, 4_000, 1_500)), // read the unchanged head of the last prompt (writes included)
		]);
		expect(rep.changes.map((c) => c.onWire)).toEqual([true, true]);
		expect(rep.offWire).toBe(false);
	});

	test("an unfold moves the prefix like a fold and puts tokens back", () => {
		const rep = accountSession([
			r(u(0, 5_000, 0)),
			{ type: "fold", seq: 1, saved: 3_000 },
			r(u(0, 1_000, 1_200)),
			{ type: "unfold", code: "abcdef", restored: 1_000 },
			r(u(0, 900, 1_500)),
			r(u(0, 2_400, 50)),
		]);
		expect(rep.changes[1]).toEqual({ kind: "unfold", seq: "abcdef", delta: 1_000, reprefilled: 1_300, onWire: true });
		expect(rep.maskedSent).toBe(3_000 + 2_000 + 2_000);
	});

	test("cache warm-ups count in the session ratio but never as a turn or a fold's carrier", () => {
		const rep = accountSession([
			r(u(0, 8_000, 2_000)),
			{ type: "fold", seq: 1, saved: 5_000 },
			{ type: "response", usage: u(0, 10_000, 0, 0), timestamp: 1, warm: true },
			r(u(0, 2_000, 3_000)),
		]);
		expect(rep.perTurn).toHaveLength(2);
		expect(rep.responses).toBe(3);
		expect(rep.changes[0]?.reprefilled).toBe(3_000);
	});

	test("writes unreported: the cost side uses the uncached-input premium, and the report says so", () => {
		const rep = accountSession([
			r(u(1_000, 9_000, 0)),
			{ type: "fold", seq: 1, saved: 6_000 },
			r(u(3_000, 2_000, 0)),
			r(u(500, 4_500, 0)),
		]);
		expect(rep.writesReported).toBe(false);
		const v = foldValue(rep, PRICE_PRESETS.openai);
		expect(v.saved).toBeCloseTo((12_000 * 0.125) / 1e6, 12);
		expect(v.cost).toBeCloseTo((2_000 * (1.25 - 0.125)) / 1e6, 12);
	});

	test("garbage usage never yields NaN or negative totals", () => {
		const rep = accountSession([r(u(Number.NaN, -5, Number.POSITIVE_INFINITY)), r(u(-1, -1, -1)), r(u(10, 0, 0))]);
		expect(rep.responses).toBe(1);
		expect(rep.sessionRatio).toBe(0);
		expect(costOf(u(Number.NaN, 1e6, -3), PRICE_PRESETS.anthropic)).toBeCloseTo(0.3 + 10 * 15e-6, 9);
	});
});

const traceFile = tracePath(TRACE_FILES.largeV3);

describe("accounting on a real recorded session (test/fixtures/traces)", () => {
	const usages: Usage[] = [];
	for (const line of readFileSync(traceFile, "utf8").split("\n")) {
		if (!line.trim()) continue;
		try {
			const e = JSON.parse(line);
			if (e.type === "message" && e.message?.role === "assistant" && e.message.usage) usages.push(e.message.usage);
		} catch {
			// A real session may hold a malformed line; the accounting only reads usage.
		}
	}
	test("ratios, totals and costs agree with an independent sum", () => {
		const rep = accountSession(usages.map((x) => r(x)));
		const withPrompt = usages.filter((x) => promptOf(x) > 0);
		const read = withPrompt.reduce((n, x) => n + x.cacheRead, 0);
		const prompt = withPrompt.reduce((n, x) => n + promptOf(x), 0);
		expect(rep.responses).toBe(withPrompt.length);
		expect(rep.responses).toBe(439);
		expect(rep.sessionRatio).toBe(read / prompt);
		expect(rep.sessionRatio).toBeGreaterThan(0.9);
		expect(rep.writesReported).toBe(true);
		const cost = usages.reduce((n, x) => n + costOf(x, PRICE_PRESETS.anthropic), 0);
		const recorded = usages.reduce((n, x) => n + ((x as unknown as { cost?: { total?: number } }).cost?.total ?? 0), 0);
		// The preset reproduces what Pi itself recorded for this session, to the cent ($30.33).
		expect(cost).toBeCloseTo(recorded, 6);
		expect(cost).toBeCloseTo(30.33, 2);
	});
	test("the writes-unreported path on the same sequence (writes folded into input, as the Codex route reports)", () => {
		const codex = usages.map((x) => ({ ...x, input: x.input + x.cacheWrite, cacheWrite: 0 }));
		const rep = accountSession(codex.map((x) => r(x)));
		expect(rep.writesReported).toBe(false);
		expect(rep.sessionRatio).toBe(accountSession(usages.map((x) => r(x))).sessionRatio);
	});
});
