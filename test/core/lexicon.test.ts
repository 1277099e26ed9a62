import { describe, expect, test } from "bun:test";
import { findRiskLines, isRiskLine, splitLines } from "../../src/core/lexicon.ts";

describe("risk lexicon", () => {
	const risky = [
		"error TS2345: Argument of type 'string' is not assignable",
		"ERROR in ./src/index.ts",
		"Error: Cannot find module 'x'",
		"1 test failed",
		"FAILED tests/test_api.py::test_login",
		"FAIL src/app.test.ts",
		"npm ERR! code ELIFECYCLE",
		"npm err! missing script: build",
		"fatal: not a git repository",
		"Traceback (most recent call last):",
		"thread 'main' panicked at src/main.rs:4:5",
		"panic: runtime error: index out of range",
		"Permission denied (publickey)",
		"connect ECONNREFUSED 127.0.0.1:5432",
		"Error: ENOENT: no such file or directory, open 'a.txt'",
		"Command exited with code 2",
		"process exited with status 1",
		"AssertionError: expected 3 to equal 4",
		"Assertion failed: x > 0",
		"java.lang.NullPointerException",
		"Segmentation fault (core dumped)",
		"error[E0308]: mismatched types",
		"  ✗ should render the footer",
		"WARNING: deprecated option",
		"Could not resolve host",
		"Unable to locate package foo",
		"TypeError: undefined is not a function",
		"request timed out after 30s",
		"Killed",
		"make: *** [all] Error 1",
	];
	test.each(risky)("risky: %s", (line) => {
		expect(isRiskLine(line)).toBe(true);
	});
	const benign = [
		"",
		"Compiled successfully in 2.3s",
		"All 42 tests passed",
		"exit code 0",
		"src/terror.ts",
		"function handleFailover() {",
		"const errorsRef = useRef(null)",
		"Done in 1.2s.",
	];
	test.each(benign)("benign: %s", (line) => {
		expect(isRiskLine(line)).toBe(false);
	});
	test("findRiskLines numbers lines from 1 and handles CRLF", () => {
		expect(findRiskLines("ok\r\nerror: one\r\nfine\nFAILED two\n")).toEqual([
			{ line: 2, text: "error: one" },
			{ line: 4, text: "FAILED two" },
		]);
	});
	test("splitLines", () => {
		expect(splitLines("")).toEqual([]);
		expect(splitLines("a")).toEqual(["a"]);
		expect(splitLines("a\n")).toEqual(["a"]);
		expect(splitLines("a\r\nb")).toEqual(["a", "b"]);
		expect(splitLines("\n\n")).toEqual(["", ""]);
	});
});

describe("whole-text scan equals the per-line test", () => {
	const fc = require("fast-check") as typeof import("fast-check");
	const lineArb = fc.oneof(
		fc.constantFrom(
			"error: x",
			"ENOENT",
			"ENOENT: y",
			"  FAIL a",
			"ok",
			"",
			"\r",
			"exit code 3",
			"TS2345",
			"x ✗",
			"Killed",
		),
		fc.string({ maxLength: 30 }),
		fc.string({ unit: "grapheme", maxLength: 20 }),
	);
	test("property", () => {
		fc.assert(
			fc.property(
				fc.array(lineArb, { maxLength: 30 }),
				fc.constantFrom("\n", "\r\n"),
				fc.boolean(),
				(lines, eol, trailing) => {
					const text = lines.join(eol) + (trailing ? eol : "");
					const expected = splitLines(text)
						.map((l, i) => ({ line: i + 1, text: l }))
						.filter((l) => isRiskLine(l.text));
					expect(findRiskLines(text)).toEqual(expected);
				},
			),
			{ numRuns: 2000 },
		);
	});
});
