// The incremental session parser against the whole-text parser it replaced: fed the same text in
// random chunks (cut inside multibyte characters' surrogate pairs, between "\r" and "\n", anywhere),
// it gives byte-identical results, and so does parseSessionText, which is now built on it.
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { parseSessionText, SessionParser, SessionTextFeed } from "../../src/core/session/entries.ts";
import type { PiEntry } from "../../src/core/session/view.ts";
import { cuts, referenceParse, sessionTextArb } from "../helpers/session-text.ts";

function chunked(text: string, at: readonly number[]): string {
	const entries: PiEntry[] = [];
	const feed = new SessionTextFeed(new SessionParser((e) => entries.push(e)));
	let from = 0;
	for (const to of [...at, text.length]) {
		feed.write(text.slice(from, to));
		from = to;
	}
	const { header, malformed, problems, unterminated, entryCount } = feed.end();
	expect(entryCount).toBe(entries.length);
	return JSON.stringify({ header, entries, malformed, problems, unterminated });
}

describe("SessionParser", () => {
	test("random chunks give the whole-text parser's result, byte for byte", () => {
		fc.assert(
			fc.property(
				sessionTextArb,
				fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 40 }),
				(text, points) => {
					const expected = JSON.stringify(referenceParse(text));
					expect(JSON.stringify(parseSessionText(text))).toBe(expected);
					expect(chunked(text, cuts(text.length, points))).toBe(expected);
					// One code unit at a time: every boundary at once.
					expect(
						chunked(
							text,
							Array.from({ length: Math.max(0, text.length - 1) }, (_, i) => i + 1),
						),
					).toBe(expected);
				},
			),
			{ numRuns: 400 },
		);
	});

	test("a v1 compaction pointing forward gets its id once the later line is read", () => {
		const lines = [
			JSON.stringify({ type: "session", id: "s" }),
			JSON.stringify({ type: "compaction", summary: "s", firstKeptEntryIndex: 2 }),
			JSON.stringify({ type: "message", message: { role: "user", content: [] } }),
		];
		const parsed = parseSessionText(lines.join("\n"));
		expect(parsed.entries[0]?.firstKeptEntryId).toBe("line:3");
		expect(JSON.stringify(parsed)).toBe(JSON.stringify(referenceParse(lines.join("\n"))));
	});

	test("problems keep the old order: unreadable lines first, then entries refused", () => {
		const text = [
			JSON.stringify({ type: "session", version: 3, id: "s" }),
			JSON.stringify({ type: "label" }),
			"nope",
		].join("\n");
		expect(parseSessionText(text).problems.map((p) => p.line)).toEqual([3, 2]);
	});

	test("nothing is emitted after a first line that is not a header", () => {
		const seen: string[] = [];
		const parser = new SessionParser((e) => seen.push(e.id));
		parser.line(JSON.stringify({ type: "message", id: "a" }));
		expect(parser.notASession).toBe(true);
		parser.line(JSON.stringify({ type: "session", id: "s" }));
		parser.line(JSON.stringify({ type: "message", id: "b" }));
		expect(seen).toEqual([]);
		expect(parser.finish().header).toBeNull();
	});
});
