import { describe, expect, test } from "bun:test";
import {
	clip,
	deriveCode,
	digestFacts,
	foldMarker,
	RISK_LINE_CAP,
	RISK_LINE_MAX_CHARS,
	renderDigest,
	utf8Length,
} from "../../src/core/digest.ts";
import { splitLines } from "../../src/core/lexicon.ts";
import { sha256 } from "../helpers/session.ts";

describe("codes", () => {
	test("derived from identity, stable, 6 hex chars", () => {
		const a = deriveCode(sha256, "abc12345", 0, new Set());
		expect(a).toMatch(/^[0-9a-f]{6}$/);
		expect(deriveCode(sha256, "abc12345", 0, new Set())).toBe(a);
		expect(deriveCode(sha256, "abc12345", 1, new Set())).not.toBe(a);
		expect(a).toBe(sha256("context-fold:abc12345:0").slice(0, 6));
	});
	test("a collision grows the code by two characters", () => {
		const a = deriveCode(sha256, "e1", 0, new Set());
		const b = deriveCode(sha256, "e1", 0, new Set([a]));
		expect(b).toHaveLength(8);
		expect(b.startsWith(a)).toBe(true);
	});
	test("marker", () => {
		expect(foldMarker("a1b2c3")).toBe("{#a1b2c3 FOLDED}");
	});
});

describe("renderDigest golden", () => {
	test("bash output with errors", () => {
		const text = [
			"> app@1.0.0 test",
			"> vitest run",
			"",
			" ✓ src/a.test.ts (3 tests)",
			" FAIL src/b.test.ts > adds",
			"AssertionError: expected 3 to equal 4",
			"Tests  1 failed | 3 passed (4)",
			"Command exited with code 1",
		].join("\n");
		const r = renderDigest({
			code: "a1b2c3",
			kind: "toolResult",
			toolName: "bash",
			callSummary: "npm  test\n--run",
			text,
		});
		expect(r.digest).toBe(
			[
				"{#a1b2c3 FOLDED} bash `npm test --run` · 180 chars, 8 lines",
				"> > app@1.0.0 test",
				"! L5:  FAIL src/b.test.ts > adds",
				"! +3 more risk lines (recall_folded a1b2c3 grep=…)",
			].join("\n"),
		);
		expect(r.riskLines).toBe(4);
		expect(r.riskLinesKept).toBe(1);
	});
	test("risk lines are capped at RISK_LINE_CAP and the overflow is marked", () => {
		const lines: string[] = [];
		for (let i = 0; i < 20; i++) lines.push(`error: failure number ${i}`, "x".repeat(200));
		const r = renderDigest({ code: "ffffff", kind: "toolResult", toolName: "bash", text: lines.join("\n") });
		const kept = r.digest.split("\n").filter((l) => l.startsWith("! L"));
		expect(kept).toHaveLength(RISK_LINE_CAP);
		expect(kept[0]).toBe("! L1: error: failure number 0");
		expect(r.digest.endsWith(`! +${20 - RISK_LINE_CAP} more risk lines (recall_folded ffffff grep=…)`)).toBe(true);
	});
	test("a long risk line keeps its head and marks the cut", () => {
		const long = `error: ${"y".repeat(400)}`;
		const r = renderDigest({
			code: "000000",
			kind: "toolResult",
			toolName: "read",
			text: `${long}\n${"z".repeat(2000)}`,
		});
		expect(r.digest).toContain(
			`! L1: ${long.slice(0, RISK_LINE_MAX_CHARS)}…[+${long.length - RISK_LINE_MAX_CHARS} chars]`,
		);
	});
	test("thinking", () => {
		const r = renderDigest({ code: "abcdef", kind: "thinking", text: "Let me think.\nThe test failed because of X." });
		expect(r.digest).toBe(
			"{#abcdef FOLDED} thinking · 43 chars, 2 lines\n> Let me think.\n! L2: The test failed because of X.",
		);
	});
	test("empty text", () => {
		expect(renderDigest({ code: "abcdef", kind: "toolResult", text: "" }).digest).toBe(
			"{#abcdef FOLDED} tool · 0 chars, 0 lines",
		);
	});
	test("deterministic", () => {
		const input = { code: "123456", kind: "toolResult" as const, toolName: "bash", text: "a\nerror b\nc" };
		expect(renderDigest(input)).toEqual(renderDigest({ ...input }));
	});
});

describe("helpers", () => {
	test("clip", () => {
		expect(clip("abc", 3)).toBe("abc");
		expect(clip("abcdef", 3)).toBe("abc…[+3 chars]");
	});
	test("clip never splits a surrogate pair", () => {
		// "ab😀cd": the emoji is two UTF-16 units at 2..3; a cut at 3 would leave a lone high surrogate.
		expect(clip("ab😀cd", 3)).toBe("ab…[+4 chars]");
		expect(clip("ab😀cd", 4)).toBe("ab😀…[+2 chars]");
		expect(clip("ab😀cd", 2)).toBe("ab…[+4 chars]");
	});
	test.each([
		["", 0],
		["abc", 3],
		["é", 2],
		["€", 3],
		["😀", 4],
		["a😀b", 6],
		["\ud800", 3],
		["ab\ud800", 5],
		["\udc00x", 4],
		["\ud800x", 4],
		["x".repeat(1000), 1000],
		[`${"x".repeat(999)}é`, 1001],
		[`é${"x".repeat(999)}`, 1001],
		["\x00\x7f\x80", 4],
	])("utf8Length(%p) = %p", (s, n) => {
		expect(utf8Length(s)).toBe(n);
		// Node writes a lone surrogate as U+FFFD (3 bytes), as utf8Length counts it.
		expect(utf8Length(s)).toBe(Buffer.byteLength(s, "utf8"));
	});
});

describe("digest facts", () => {
	const fc = require("fast-check") as typeof import("fast-check");
	test("line count and first line agree with splitLines on any text", () => {
		fc.assert(
			fc.property(
				fc.string({ unit: fc.constantFrom("a", " ", "\n", "\r", "é", "x") as never, maxLength: 60 }),
				(text) => {
					const facts = digestFacts(text);
					const lines = splitLines(text);
					expect(facts.lines).toBe(lines.length);
					expect(facts.first).toBe(lines.find((l) => l.trim().length > 0)?.trim() ?? null);
				},
			),
			{ numRuns: 3000 },
		);
	});
	test("precomputed facts render the same digest", () => {
		const text = "start\nerror: a\nok\nFAILED b\n";
		const a = renderDigest({ code: "abcdef", kind: "toolResult", text });
		const b = renderDigest({ code: "abcdef", kind: "toolResult", text, facts: digestFacts(text) });
		expect(b).toEqual(a);
	});
});
