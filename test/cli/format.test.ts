import { describe, expect, test } from "bun:test";
import { MIN_ID_CHARS, shortId, uniqueIdLength } from "../../src/cli/format.ts";

describe("session ids, shortened the way git shortens hashes", () => {
	test.each([
		[[], MIN_ID_CHARS],
		[["d703a1a9-1b7b", "ffae836b-9420"], 8],
		[["d703a1a9-1b7b", "d703ffff-0000"], 8],
		[["0190cccc-dd11-7", "0190cccc-dd12-7", null], 13],
		[["0190cccc-dd11-7", "0190cccc-dd11-7"], 8],
		[["abcdefgh12", "abcdefgh1"], 10],
	])("%p -> %p characters", (ids, length) => {
		expect(uniqueIdLength(ids as Array<string | null>)).toBe(length);
	});
	test("shortId", () => {
		expect(shortId("0190cccc-dd11-7000", 13)).toBe("0190cccc-dd11");
		expect(shortId(null, 13)).toBe("(no id)");
		expect(shortId("d703a1a9-1b7b-4fb1")).toBe("d703a1a9");
	});
});
