// FoldTelemetry: fold records and provider usage in branch order, turned into the mask index and the
// accounting events. Layers count once per seq, unfolds once per code, unusable usage as zero, an
// empty prompt not at all; the report is cached until the next event.
import { describe, expect, test } from "bun:test";
import { accountSession } from "../../src/core/accounting.ts";
import { FoldTelemetry } from "../../src/core/fold-telemetry.ts";
import type { FrozenLayer, MaskedBlock, UnfoldRecord } from "../../src/core/layers.ts";

const T = Date.parse("2025-01-01T00:00:00Z");

/** A folded block of `tokens` tokens whose digest is `digestChars` characters (chars/4 tokens). */
function block(code: string, entryId: string, tokens: number, digestChars: number): MaskedBlock {
	return {
		code,
		entryId,
		blockIndex: 0,
		kind: "toolResult",
		sha256: "0".repeat(64),
		chars: tokens * 4,
		bytes: tokens * 4,
		lines: 1,
		tokens,
		digest: "d".repeat(digestChars),
	};
}

function layer(seq: number, blocks: MaskedBlock[]): FrozenLayer {
	return { type: "layer", v: 1, seq, reason: "threshold", lastResponseAt: T, usageBefore: 0, usageAfter: 0, blocks };
}

const unfold = (...codes: string[]): UnfoldRecord => ({ type: "unfold", v: 1, codes });
const usage = (input: number, cacheRead = 0, cacheWrite = 0, output = 10) => ({ input, output, cacheRead, cacheWrite });

describe("FoldTelemetry", () => {
	test("nothing yet: an empty index, no cache read, the report of no events", () => {
		const t = new FoldTelemetry();
		expect(t.index.layers).toEqual([]);
		expect(t.index.byCode.size).toBe(0);
		expect(t.everCacheRead).toBe(false);
		expect(t.accounting()).toEqual(accountSession([]));
		expect(t.accounting().sessionRatio).toBeNull();
	});

	test("a layer is indexed and saves each block's tokens less its digest's, never below zero", () => {
		const t = new FoldTelemetry();
		// 100 - ceil(40/4) = 90; 5 - ceil(40/4) < 0 counts 0; 30 - ceil(1/4) = 29.
		const l = layer(1, [block("aaa", "e1", 100, 40), block("bbb", "e2", 5, 40), block("ccc", "e3", 30, 1)]);
		expect(t.commit(l)).toBe(true);
		expect(t.index.layers).toEqual([l]);
		expect([...t.index.byKey.keys()]).toEqual(["e1:0", "e2:0", "e3:0"]);
		expect(t.accounting().changes).toEqual([{ kind: "fold", seq: 1, delta: 119, reprefilled: null, onWire: null }]);
	});

	test("a layer whose seq was seen is refused and changes nothing", () => {
		const t = new FoldTelemetry();
		t.commit(layer(1, [block("aaa", "e1", 100, 40)]));
		const before = t.accounting();
		expect(t.commit(layer(1, [block("zzz", "e9", 500, 4)]))).toBe(false);
		expect(t.index.layers).toHaveLength(1);
		expect(t.index.byCode.has("zzz")).toBe(false);
		expect(t.accounting()).toBe(before);
	});

	test("an unfold restores what its blocks saved; a code already unfolded is not counted again", () => {
		const t = new FoldTelemetry();
		t.commit(layer(1, [block("aaa", "e1", 100, 40), block("bbb", "e2", 50, 8)]));
		expect(t.commit(unfold("aaa"))).toBe(true);
		expect(t.commit(unfold("aaa"))).toBe(false);
		expect(t.commit(unfold("aaa", "bbb"))).toBe(true);
		expect([...t.index.unfolded]).toEqual(["aaa", "bbb"]);
		expect(t.index.byKey.size).toBe(0);
		expect(t.accounting().changes.map((c) => [c.kind, c.seq, c.delta])).toEqual([
			["fold", 1, 138],
			["unfold", "aaa", 90],
			["unfold", "bbb", 48],
		]);
	});

	test("an unfold of a code never folded is recorded (it pins nothing) but restores nothing", () => {
		const t = new FoldTelemetry();
		expect(t.commit(unfold("nope"))).toBe(true);
		expect([...t.index.unfolded]).toEqual(["nope"]);
		expect(t.accounting().changes).toEqual([]);
		expect(t.commit(unfold("nope"))).toBe(false);
	});

	test("usage: a fold charged to the next response, exactly as the accounting computes it", () => {
		const t = new FoldTelemetry();
		t.countUsage(usage(1000), T, false);
		t.commit(layer(1, [block("aaa", "e1", 100, 40)]));
		t.countUsage(usage(10, 500, 400, 5), T + 1000, false);
		const report = t.accounting();
		expect(report).toMatchObject({
			responses: 2,
			perTurn: [0, 500 / 910],
			prompt: 1910,
			cacheRead: 500,
			cacheWrite: 400,
			input: 1010,
			output: 15,
			writesReported: true,
			maskedSent: 90,
			reprefilled: 410,
			offWire: false,
		});
		// before 1000, minus the 90 folded, minus the 500 read from cache.
		expect(report.changes).toEqual([{ kind: "fold", seq: 1, delta: 90, reprefilled: 410, onWire: true }]);
		expect(t.everCacheRead).toBe(true);
	});

	test("a warm-up counts in the totals but not per turn, and sets everCacheRead", () => {
		const t = new FoldTelemetry();
		t.countUsage(usage(0, 300, 0, 1), T, true);
		expect(t.everCacheRead).toBe(true);
		expect(t.accounting()).toMatchObject({ responses: 1, perTurn: [], prompt: 300, cacheRead: 300, sessionRatio: 1 });
	});

	const ignored: Array<[string, unknown]> = [
		["no usage", undefined],
		["null", null],
		["a number", 42],
		["a string", "1000"],
		["an empty prompt (output only)", { input: 0, output: 50, cacheRead: 0, cacheWrite: 0 }],
		["every prompt field unusable", { input: -5, cacheRead: Number.NaN, cacheWrite: Number.POSITIVE_INFINITY }],
		["counts above 10^9", { input: 1e15, cacheRead: 1_000_000_001 }],
		["counts as strings", { input: "100", cacheRead: "50" }],
	];
	for (const [name, value] of ignored) {
		test(`${name}: no response is counted`, () => {
			const t = new FoldTelemetry();
			t.countUsage(value as Parameters<FoldTelemetry["countUsage"]>[0], T, false);
			expect(t.accounting()).toEqual(accountSession([]));
			expect(t.everCacheRead).toBe(false);
		});
	}

	test("unusable fields count as zero beside usable ones; a missing field is zero", () => {
		const t = new FoldTelemetry();
		t.countUsage({ input: 200, output: Number.NaN, cacheRead: -1, cacheWrite: 1e12 }, T, false);
		t.countUsage({ cacheRead: 100 }, T, false);
		expect(t.accounting()).toMatchObject({
			responses: 2,
			prompt: 300,
			input: 200,
			output: 0,
			cacheRead: 100,
			cacheWrite: 0,
			perTurn: [0, 1],
			writesReported: false,
		});
		expect(t.everCacheRead).toBe(true);
	});

	test("the report is cached until the next event, and recomputed after it", () => {
		const t = new FoldTelemetry();
		t.countUsage(usage(100), T, false);
		const first = t.accounting();
		expect(t.accounting()).toBe(first);
		t.countUsage(usage(0, 0, 0, 5), T, false);
		expect(t.accounting()).toBe(first);
		t.countUsage(usage(100, 100), T, false);
		const second = t.accounting();
		expect(second).not.toBe(first);
		expect(second.responses).toBe(2);
		t.commit(layer(1, [block("aaa", "e1", 100, 40)]));
		expect(t.accounting()).not.toBe(second);
		expect(t.accounting().changes).toHaveLength(1);
	});
});
