import { describe, expect, test } from "bun:test";
import { formatDollars, plural } from "../../src/core/wording.ts";

describe("plural", () => {
	test.each([
		[0, "event", undefined, "0 events"],
		[1, "event", undefined, "1 event"],
		[2, "block", undefined, "2 blocks"],
		[1, "match", "matches", "1 match"],
		[3, "match", "matches", "3 matches"],
		[1, "entry", "entries", "1 entry"],
	])("%p %p -> %p", (n, one, many, expected) => {
		expect(plural(n, one, many)).toBe(expected);
	});
});

describe("formatDollars: one format for every amount the CLI and status show", () => {
	test.each([
		[0, {}, "$0.0000"],
		[0.00512, {}, "$0.0051"],
		[-0.00512, {}, "-$0.0051"],
		[0.00512, { signed: true }, "+$0.0051"],
		[-0.00512, { signed: true }, "-$0.0051"],
		[12.345, {}, "$12.35"],
		[12.345, { signed: true }, "+$12.35"],
		[-1234.5, {}, "-$1235"],
		[-0.00001, {}, "$0.0000"],
	])("%p %p -> %p", (n, options, expected) => {
		expect(formatDollars(n, options)).toBe(expected);
	});
});
