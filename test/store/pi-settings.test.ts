// Pi's settings files as context-fold reads them (the CLI's session directory, the extension's
// compaction settings on Pi 0.80.6): bounded, regular files only, anything unusable reads as empty.

import { describe, expect, test } from "bun:test";
import { execFileSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readPiSettings } from "../../src/store/sessions.ts";

describe("readPiSettings", () => {
	const dir = mkdtempSync(join(tmpdir(), "cf-pi-settings-"));
	const file = (name: string, text: string) => {
		const path = join(dir, name);
		writeFileSync(path, text);
		return path;
	};

	test("an object is read as written", () => {
		expect(readPiSettings(file("ok.json", '{"compaction":{"reserveTokens":8000}}'))).toEqual({
			compaction: { reserveTokens: 8000 },
		});
	});

	test("missing, malformed, not an object, or a directory: empty", () => {
		expect(readPiSettings(join(dir, "none.json"))).toEqual({});
		expect(readPiSettings(file("bad.json", "{not json"))).toEqual({});
		expect(readPiSettings(file("array.json", "[1,2]"))).toEqual({});
		expect(readPiSettings(file("null.json", "null"))).toEqual({});
		expect(readPiSettings(dir)).toEqual({});
	});

	test("a FIFO is refused without blocking on it", () => {
		const fifo = join(dir, "fifo.json");
		execFileSync("mkfifo", [fifo]);
		expect(readPiSettings(fifo)).toEqual({});
	});
});
