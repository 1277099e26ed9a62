// The CLI's streamed session reader against the whole-text parser: random session files (multibyte
// text, CRLF, malformed and glued lines, invalid UTF-8, no last newline, several branches) read in
// random chunk sizes, so boundaries fall inside characters and between "\r" and "\n", give exactly
// the header, counts, problems and active branch that parsing the whole text gives. And its errors.
import { afterAll, describe, expect, test } from "bun:test";
import { execFileSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { branchPath } from "../../src/core/session/entries.ts";
import { readSessionFile, SessionFileError } from "../../src/store/session-file.ts";
import { cuts, referenceParse, sessionTextArb } from "../helpers/session-text.ts";
import { asUnprivileged, openToOthers } from "../helpers/unprivileged.ts";

const dir = mkdtempSync(join(tmpdir(), "cf-session-file-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The bytes with a few invalid UTF-8 sequences spliced in (never a newline byte). */
function withBadBytes(bytes: Buffer, at: readonly number[], kinds: readonly number[]): Buffer {
	const bad = [Buffer.from([0xff]), Buffer.from([0xe2, 0x82]), Buffer.from([0xf0, 0x9f, 0x98]), Buffer.from([0x80])];
	const parts: Buffer[] = [];
	let from = 0;
	for (const [i, to] of at.entries()) {
		parts.push(bytes.subarray(from, to), bad[(kinds[i] ?? 0) % bad.length] as Buffer);
		from = to;
	}
	parts.push(bytes.subarray(from));
	return Buffer.concat(parts);
}

function expected(path: string) {
	const ref = referenceParse(readFileSync(path, "utf8"));
	if (ref.header === null) return null;
	return JSON.stringify({
		header: ref.header,
		malformed: ref.malformed,
		problems: ref.problems,
		unterminated: ref.unterminated,
		entryCount: ref.entries.length,
		branch: branchPath(ref.entries),
	});
}

const passes = { 1: 0, 2: 0 };

function actual(path: string, chunkBytes: number) {
	try {
		const f = readSessionFile(path, { chunkBytes });
		passes[f.passes]++;
		return JSON.stringify({
			header: f.header,
			malformed: f.malformed,
			problems: f.problems,
			unterminated: f.unterminated,
			entryCount: f.entryCount,
			branch: f.branch,
		});
	} catch (error) {
		if (error instanceof SessionFileError && error.code === "not-a-session") return null;
		throw error;
	}
}

describe("readSessionFile (streamed)", () => {
	test("any chunk size gives what the whole text parses to, byte for byte", () => {
		const path = join(dir, "random.jsonl");
		fc.assert(
			fc.property(
				sessionTextArb,
				fc.integer({ min: 1, max: 48 }),
				fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 3 }),
				fc.array(fc.nat(), { maxLength: 3 }),
				(text, chunkBytes, badAt, kinds) => {
					let bytes: Buffer = Buffer.from(text, "utf8");
					if (badAt.length > 0) {
						const spots = cuts(bytes.length, badAt).filter((p) => bytes[p] !== 10);
						bytes = withBadBytes(bytes, spots, kinds);
					}
					writeFileSync(path, bytes);
					const want = expected(path);
					expect(actual(path, chunkBytes)).toBe(want);
					expect(actual(path, 1 << 20)).toBe(want);
				},
			),
			// 600 runs: pass two is rare (about 4 runs in a hundred), and at 300 runs its count ranged from
			// 4 to 50 over 1,000 seeds (median 22), so the bound below failed about 1 seed in 1,200.
			{ numRuns: 600 },
		);
		// Both ways to get the branch were taken: held while reading, and built again in pass two.
		// Of the 1,200 reads (the rest are not sessions), over 1,000 seeds: 486 to 632 in one pass
		// (median 554), 20 to 88 in two (median 44): the bound fails about 1 seed in 30 million.
		expect(passes[1]).toBeGreaterThan(100);
		expect(passes[2]).toBeGreaterThan(4);
	});

	test("keep: only the accepted branch entries are built, in branch order", () => {
		const path = join(dir, "keep.jsonl");
		fc.assert(
			fc.property(sessionTextArb, fc.integer({ min: 1, max: 48 }), (text, chunkBytes) => {
				writeFileSync(path, text);
				const ref = referenceParse(text);
				if (ref.header === null) return;
				const isLabel = (e: { type: string }) => e.type === "compaction" || e.type === "custom";
				const f = readSessionFile(path, { chunkBytes, keep: isLabel });
				expect(JSON.stringify(f.branch)).toBe(JSON.stringify(branchPath(ref.entries).filter(isLabel)));
			}),
			{ numRuns: 200 },
		);
	});

	test("a line longer than many chunks, and a file that ends inside a character", () => {
		const path = join(dir, "long.jsonl");
		const big = "ü€😀".repeat(5000);
		const lines = [
			JSON.stringify({ type: "session", version: 3, id: "s", cwd: "/p" }),
			JSON.stringify({ type: "message", id: "a", parentId: null, message: { role: "user", content: big } }),
		];
		writeFileSync(path, Buffer.concat([Buffer.from(`${lines.join("\r\n")}\r\n`), Buffer.from([0xf0, 0x9f])]));
		for (const chunkBytes of [1, 3, 7, 4096]) expect(actual(path, chunkBytes)).toBe(expected(path));
		expect(readSessionFile(path).branch[0]?.message?.content).toBe(big);
	});

	test("errors: missing, a directory, not a session, unreadable", () => {
		const code = (path: string) => {
			try {
				readSessionFile(path);
				return "ok";
			} catch (error) {
				return `${(error as SessionFileError).code}: ${(error as Error).message}`;
			}
		};
		expect(code(join(dir, "nope.jsonl"))).toBe(`missing: session file not found: ${join(dir, "nope.jsonl")}`);
		const sub = join(dir, "sub");
		mkdirSync(sub, { recursive: true });
		expect(code(sub)).toBe(`unreadable: ${sub} is a directory, not a session file`);
		const notSession = join(dir, "not.jsonl");
		writeFileSync(notSession, `${JSON.stringify({ type: "message", id: "a" })}\n`);
		expect(code(notSession)).toBe(
			`not-a-session: ${notSession} is not a Pi session file: its first readable line is not a session header`,
		);
		writeFileSync(join(dir, "empty.jsonl"), "");
		expect(code(join(dir, "empty.jsonl"))).toStartWith("not-a-session:");
		const locked = join(dir, "locked.jsonl");
		writeFileSync(locked, `${JSON.stringify({ type: "session", id: "s" })}\n`);
		chmodSync(locked, 0o000);
		openToOthers(dir);
		expect(asUnprivileged(() => code(locked))).toBe(`unreadable: session file unreadable (EACCES): ${locked}`);
		chmodSync(locked, 0o600);
	});

	test("a FIFO, a device or a socket is refused at once as unreadable, never read (issue 16)", () => {
		const fifo = join(dir, "fifo.jsonl");
		execFileSync("mkfifo", [fifo]);
		// A blocking open would wait here for a writer that never comes.
		for (const path of [fifo, "/dev/zero", "/dev/null"]) {
			expect(() => readSessionFile(path)).toThrow(
				`${path} is not a regular file (a FIFO, a device or a socket), not a session file; it was not read`,
			);
			try {
				readSessionFile(path);
			} catch (error) {
				expect((error as SessionFileError).code).toBe("unreadable");
			}
		}
	});

	test("a line longer than the longest decodable one is skipped and counted; the branch around it is intact (issue 16)", () => {
		const path = join(dir, "huge-line.jsonl");
		const entry = (id: string, parentId: string | null, text: string) =>
			JSON.stringify({ type: "message", id, parentId, message: { role: "user", content: text } });
		const huge = entry("h", "a", "x".repeat(5000));
		writeFileSync(
			path,
			`${[JSON.stringify({ type: "session", version: 3, id: "s", cwd: "/p" }), entry("a", null, "one"), huge, entry("b", "a", "two")].join("\n")}\n`,
		);
		for (const chunkBytes of [7, 64, 1 << 20]) {
			const f = readSessionFile(path, { chunkBytes, maxLineBytes: 4096 });
			expect(f.malformed).toBe(1);
			expect(f.problems).toEqual([{ line: 3, reason: "longer than 4096 bytes, skipped unread" }]);
			expect(f.branch.map((e) => e.id)).toEqual(["a", "b"]);
			expect(f.entryCount).toBe(2);
		}
		// The same file, the line as the last one without its newline.
		writeFileSync(path, `${JSON.stringify({ type: "session", version: 3, id: "s", cwd: "/p" })}\n${huge}`);
		const last = readSessionFile(path, { chunkBytes: 100, maxLineBytes: 4096 });
		expect([last.malformed, last.unterminated]).toEqual([1, true]);
	});
});
