// Pi's own temporary files (pi-bash-<hex>.log under TMPDIR, named in its truncation note) are no part
// of the project: the seed index leaves them out of files, identifiers and numbers.
import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { extractSeedRecord } from "../../../src/core/seed/extract.ts";
import { isPiTempFile, withoutPiTempFiles } from "../../../src/core/seed/harvest.ts";

/** sha256 in hex, as the store computes it (kept local so this file depends on no store module). */
const sha256Hex = (text: string): string => createHash("sha256").update(text, "utf8").digest("hex");

const LEGACY = "/tmp/pi-bash-0123456789abcdef.log";
const MAC = "/var/folders/49/l4171l3n219_xwq30fmyzr8w0000gn/T/pi-bash-a4cd2460b5b4e0be.log";

describe("Pi's temporary files", () => {
	test.each([
		[LEGACY, true],
		[MAC, true],
		["pi-output-ffeeddccbbaa0099.txt", true],
		["src/pi-bash.ts", false],
		["docs/api-bash-0123456789abcdef.log", false],
		["/tmp/pi-bash-notes.log", false],
	])("%p is Pi's: %p", (path, expected) => {
		expect(isPiTempFile(path)).toBe(expected);
	});

	test("the truncation note and the paths are taken out of harvested text, nothing else", () => {
		expect(
			withoutPiTempFiles(
				`ok 12 tests\n\n[Showing lines 1801-3000 of 3000. Full output: ${MAC}]\ncat ${LEGACY} src/a.ts`,
			),
		).toBe("ok 12 tests\n\n \ncat   src/a.ts");
		expect(withoutPiTempFiles("api-bash-0123456789abcdef.log stays")).toBe("api-bash-0123456789abcdef.log stays");
	});

	test("a record of a truncated bash result names no temp file, hash or Pi line count", () => {
		const text = `Error: connect ECONNREFUSED 127.0.0.1:5432 in src/db/pool.ts\n\n[Showing lines 2001-4000 of 4000. Full output: ${MAC}]`;
		const record = extractSeedRecord({
			kind: "compaction",
			seq: 1,
			at: 0,
			messages: [
				{
					role: "toolResult",
					entryId: "e1",
					timestamp: 1,
					toolName: "bash",
					toolCallId: "c1",
					blocks: [{ kind: "text", text }],
				},
			],
			calls: [{ toolCallId: "c1", name: "bash", args: { command: `tail -50 ${LEGACY}` } }],
			hash: sha256Hex,
		});
		expect(record.files.map((f) => f.path)).toEqual(["src/db/pool.ts"]);
		expect(record.identifiers).not.toContain("a4cd2460b5b4e0be");
		expect(record.identifiers).not.toContain("l4171l3n219_xwq30fmyzr8w0000gn");
		expect(record.numbers).toEqual(["127.0.0.1", "5432"]);
		// The command the model ran is kept as it was typed.
		expect(record.commands).toEqual([`tail -50 ${LEGACY}`]);
	});
});
