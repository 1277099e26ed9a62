// The seed index and handoff seeds on disk: user-only files in a user-only directory, appended and
// read back exactly, bad lines counted, and every failure (a file where the directory should be, a
// directory where the file should be, permission denied) a SeedIndexError naming the path and code.
import { describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { emptyOmitted, type SeedRecord, serializeSeedRecord } from "../../src/core/seed/schema.ts";
import {
	appendSeedRecord,
	fileStamp,
	readSeedIndex,
	SEED_INDEX_FILE,
	SeedIndexError,
	seedIndexPath,
	writeHandoff,
} from "../../src/store/seed-index.ts";
import { tempDirs } from "../helpers/temp-dirs.ts";
import { asUnprivileged, openToOthers } from "../helpers/unprivileged.ts";

const tempDir = tempDirs("cf-seed-index-");

const mode = (path: string) => statSync(path).mode & 0o777;
const AT = Date.parse("2026-11-29T14:30:05.250Z");

function record(seq: number, kind: SeedRecord["kind"] = "fold"): SeedRecord {
	return {
		type: "seed-record",
		v: 1,
		kind,
		seq,
		at: AT + seq,
		source: { messages: 2, blocks: 1, chars: 40 },
		files: [{ path: "src/a.ts", ops: ["read"] }],
		commands: ["npm test"],
		errors: [{ text: "error: boom", ref: "k3f" }],
		identifiers: ["planFold"],
		numbers: ["404"],
		userLines: ["fix the build"],
		spans: [
			{
				code: "k3f",
				entryId: "e1",
				blockIndex: 0,
				kind: "toolResult",
				sha256: "ab".repeat(32),
				chars: 40,
				bytes: 40,
				lines: 2,
			},
		],
		secrets: 0,
		omitted: emptyOmitted(),
	};
}

/** The SeedIndexError a call throws, as [class, message, code]. */
function thrown(call: () => unknown): [string, string, string] {
	try {
		call();
	} catch (error) {
		if (!(error instanceof SeedIndexError)) throw error;
		return ["SeedIndexError", error.message, error.code];
	}
	throw new Error("expected a throw");
}

describe("appendSeedRecord", () => {
	test("creates the directory (0700) and the file (0600); each record is one exact line, appended", () => {
		const dir = join(tempDir(), "context-fold", "session-1");
		const path = appendSeedRecord(dir, record(1));
		expect(path).toBe(join(dir, SEED_INDEX_FILE));
		expect(path).toBe(seedIndexPath(dir));
		expect(mode(dir)).toBe(0o700);
		expect(mode(join(dir, ".."))).toBe(0o700);
		expect(mode(path)).toBe(0o600);
		expect(appendSeedRecord(dir, record(2, "compaction"))).toBe(path);
		expect(readFileSync(path, "utf8")).toBe(
			`${serializeSeedRecord(record(1))}\n${serializeSeedRecord(record(2, "compaction"))}\n`,
		);
	});

	test("an existing index is appended to, never rewritten", () => {
		const dir = tempDir();
		writeFileSync(seedIndexPath(dir), "kept as it was\n");
		appendSeedRecord(dir, record(1));
		expect(readFileSync(seedIndexPath(dir), "utf8")).toBe(`kept as it was\n${serializeSeedRecord(record(1))}\n`);
	});

	test("a file where the directory should be: cannot create (EEXIST), or below it (ENOTDIR)", () => {
		const base = tempDir();
		const file = join(base, "file");
		writeFileSync(file, "x");
		expect(thrown(() => appendSeedRecord(file, record(1)))).toEqual([
			"SeedIndexError",
			`cannot create ${file} (EEXIST)`,
			"EEXIST",
		]);
		const below = join(file, "session");
		expect(thrown(() => appendSeedRecord(below, record(1)))).toEqual([
			"SeedIndexError",
			`cannot create ${below} (ENOTDIR)`,
			"ENOTDIR",
		]);
		expect(readFileSync(file, "utf8")).toBe("x");
	});

	test("a directory where the index should be: cannot write (EISDIR)", () => {
		const dir = tempDir();
		mkdirSync(seedIndexPath(dir));
		expect(thrown(() => appendSeedRecord(dir, record(1)))).toEqual([
			"SeedIndexError",
			`cannot write ${seedIndexPath(dir)} (EISDIR)`,
			"EISDIR",
		]);
	});

	test("permission denied: a read-only directory (cannot write), a read-only parent (cannot create)", () => {
		const base = tempDir();
		const dir = join(base, "session");
		mkdirSync(dir);
		chmodSync(dir, 0o555);
		chmodSync(base, 0o555);
		expect(asUnprivileged(() => thrown(() => appendSeedRecord(dir, record(1))))).toEqual([
			"SeedIndexError",
			`cannot write ${seedIndexPath(dir)} (EACCES)`,
			"EACCES",
		]);
		expect(existsSync(seedIndexPath(dir))).toBe(false);
		const nested = join(base, "new-session");
		expect(asUnprivileged(() => thrown(() => appendSeedRecord(nested, record(1))))).toEqual([
			"SeedIndexError",
			`cannot create ${nested} (EACCES)`,
			"EACCES",
		]);
		expect(existsSync(nested)).toBe(false);
	});
});

describe("readSeedIndex", () => {
	test("a missing index (and directory) is an empty index, not an error", () => {
		const dir = join(tempDir(), "never-written");
		expect(readSeedIndex(dir)).toEqual({
			path: seedIndexPath(dir),
			missing: true,
			records: [],
			invalid: 0,
			truncatedTail: false,
			problems: [],
		});
	});

	test("what was appended reads back equal", () => {
		const dir = tempDir();
		appendSeedRecord(dir, record(1));
		appendSeedRecord(dir, record(2, "compaction"));
		expect(readSeedIndex(dir)).toEqual({
			path: seedIndexPath(dir),
			missing: false,
			records: [record(1), record(2, "compaction")],
			invalid: 0,
			truncatedTail: false,
			problems: [],
		});
	});

	test("bad lines are counted with their line numbers and reasons; a cut last line is a truncated tail", () => {
		const dir = tempDir();
		const good = serializeSeedRecord(record(1));
		const lines = [
			good,
			"not json",
			JSON.stringify({ type: "other" }),
			"",
			serializeSeedRecord(record(2)),
			good.slice(0, 30),
		];
		writeFileSync(seedIndexPath(dir), lines.join("\n"));
		expect(readSeedIndex(dir)).toEqual({
			path: seedIndexPath(dir),
			missing: false,
			records: [record(1), record(2)],
			invalid: 3,
			truncatedTail: true,
			problems: [
				{ line: 2, error: "not JSON" },
				{ line: 3, error: 'type is not "seed-record"' },
				{ line: 4, error: "blank line" },
			],
		});
	});

	test("a directory where the index should be: cannot read (EISDIR)", () => {
		const dir = tempDir();
		mkdirSync(seedIndexPath(dir));
		expect(thrown(() => readSeedIndex(dir))).toEqual([
			"SeedIndexError",
			`cannot read ${seedIndexPath(dir)} (EISDIR)`,
			"EISDIR",
		]);
	});

	test("an unreadable index (permission denied): cannot read (EACCES)", () => {
		const dir = tempDir();
		appendSeedRecord(dir, record(1));
		chmodSync(seedIndexPath(dir), 0o000);
		openToOthers(dir);
		expect(asUnprivileged(() => thrown(() => readSeedIndex(dir)))).toEqual([
			"SeedIndexError",
			`cannot read ${seedIndexPath(dir)} (EACCES)`,
			"EACCES",
		]);
	});
});

describe("fileStamp", () => {
	test("UTC, to the second, with no characters a file name cannot hold", () => {
		expect(fileStamp(AT)).toBe("2026-11-29T14-30-05Z");
		expect(fileStamp(0)).toBe("1970-01-01T00-00-00Z");
		expect(fileStamp(Date.parse("2026-01-02T03:04:05.999Z"))).toBe("2026-01-02T03-04-05Z");
	});

	test("a time that is not a date throws", () => {
		expect(() => fileStamp(Number.NaN)).toThrow(RangeError);
	});
});

describe("writeHandoff", () => {
	test("handoff-<stamp>.md, exactly the text, 0600, in a directory it creates 0700", () => {
		const dir = join(tempDir(), "session");
		const path = writeHandoff(dir, "# Handoff\nline two\n", AT);
		expect(path).toBe(join(dir, "handoff-2026-11-29T14-30-05Z.md"));
		expect(readFileSync(path, "utf8")).toBe("# Handoff\nline two\n");
		expect(mode(path)).toBe(0o600);
		expect(mode(dir)).toBe(0o700);
	});

	test("never overwrites: a second seed in the same second gets -1, then -2", () => {
		const dir = tempDir();
		expect(writeHandoff(dir, "first", AT)).toBe(join(dir, "handoff-2026-11-29T14-30-05Z.md"));
		expect(writeHandoff(dir, "second", AT + 500)).toBe(join(dir, "handoff-2026-11-29T14-30-05Z-1.md"));
		// Whatever holds a name (here a directory) makes the writer move on to the next.
		mkdirSync(join(dir, "handoff-2026-11-29T14-30-05Z-2.md"));
		expect(writeHandoff(dir, "third", AT)).toBe(join(dir, "handoff-2026-11-29T14-30-05Z-3.md"));
		expect(readFileSync(join(dir, "handoff-2026-11-29T14-30-05Z.md"), "utf8")).toBe("first");
		expect(readFileSync(join(dir, "handoff-2026-11-29T14-30-05Z-1.md"), "utf8")).toBe("second");
	});

	test("a hundred seeds in one second: the hundred-and-first is refused (EEXIST)", () => {
		const dir = tempDir();
		for (let n = 0; n < 100; n++) writeHandoff(dir, `seed ${n}`, AT);
		expect(thrown(() => writeHandoff(dir, "one too many", AT))).toEqual([
			"SeedIndexError",
			`too many handoff seeds at 2026-11-29T14-30-05Z in ${dir}`,
			"EEXIST",
		]);
		expect(readdirSync(dir)).toHaveLength(100);
		expect(readFileSync(join(dir, "handoff-2026-11-29T14-30-05Z-99.md"), "utf8")).toBe("seed 99");
	});

	test("a file where the directory should be: cannot create (EEXIST)", () => {
		const file = join(tempDir(), "file");
		writeFileSync(file, "x");
		expect(thrown(() => writeHandoff(file, "seed", AT))).toEqual([
			"SeedIndexError",
			`cannot create ${file} (EEXIST)`,
			"EEXIST",
		]);
	});

	test("a read-only directory (permission denied): cannot write (EACCES), nothing left behind", () => {
		const dir = tempDir();
		chmodSync(dir, 0o555);
		const path = join(dir, "handoff-2026-11-29T14-30-05Z.md");
		expect(asUnprivileged(() => thrown(() => writeHandoff(dir, "seed", AT)))).toEqual([
			"SeedIndexError",
			`cannot write ${path} (EACCES)`,
			"EACCES",
		]);
		expect(readdirSync(dir)).toEqual([]);
	});
});
