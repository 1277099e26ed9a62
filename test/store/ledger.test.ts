import { afterEach, describe, expect, test } from "bun:test";
import { execFileSync } from "node:child_process";
import { appendFileSync, mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Ledger, LedgerError } from "../../src/store/ledger.ts";

const dirs: string[] = [];
afterEach(() => {
	for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function file(lines: string[], trailingNewline = true): string {
	const dir = mkdtempSync(join(tmpdir(), "cf-ledger-"));
	dirs.push(dir);
	const path = join(dir, "s.jsonl");
	writeFileSync(path, lines.join("\n") + (trailingNewline ? "\n" : ""));
	return path;
}
const header = JSON.stringify({
	type: "session",
	version: 3,
	id: "sess-1",
	timestamp: "2025-01-01T00:00:00Z",
	cwd: "/p",
});
const entry = (id: string, text: string) =>
	JSON.stringify({
		type: "message",
		id,
		parentId: null,
		timestamp: "2025-01-01T00:00:00Z",
		message: { role: "toolResult", content: [{ type: "text", text }] },
	});

describe("Ledger", () => {
	test("indexes entries by id and reads them back", () => {
		const l = new Ledger(file([header, entry("a1", "hello"), entry("b2", "world")]));
		const stats = l.refresh();
		expect(stats).toMatchObject({ entries: 2, malformed: 0, version: 3, sessionId: "sess-1", pendingBytes: 0 });
		const message = l.read("b2")?.message as { content: Array<{ text: string }> } | undefined;
		expect(message?.content[0]?.text).toBe("world");
		expect(l.read("zz")).toBeUndefined();
		expect(l.ids()).toEqual(["a1", "b2"]);
	});

	test("malformed lines, glued objects and a truncated last line are skipped and counted", () => {
		const glued = `${entry("g1", "x")}${entry("g2", "y")}`;
		const path = file(
			[header, entry("a1", "ok"), "{not json", glued, "[1,2]", "", entry("c3", "fine"), '{"type":"message","id":"t1"'],
			false,
		);
		const l = new Ledger(path);
		const stats = l.refresh();
		expect(stats.entries).toBe(2);
		expect(stats.malformed).toBe(3);
		// The last line has no newline yet: pending, not malformed (Pi may still be writing it).
		expect(stats.pendingBytes).toBeGreaterThan(0);
		appendFileSync(path, ',"message":{"role":"user","content":"later"}}\n');
		expect(l.refresh()).toMatchObject({ entries: 3, malformed: 3, pendingBytes: 0 });
		expect(l.has("t1")).toBe(true);
	});

	test("reads only what is new on append", () => {
		const path = file([header, entry("a1", "one")]);
		const l = new Ledger(path);
		l.refresh();
		const before = l.stats.bytesIndexed;
		appendFileSync(path, `${entry("a2", "two")}\n`);
		l.refresh();
		expect(l.stats.bytesIndexed).toBeGreaterThan(before);
		expect(l.stats.rebuilds).toBe(0);
		expect(l.ids()).toEqual(["a1", "a2"]);
	});

	test("a rewritten file is detected (shrunk, replaced, or changed at a known offset) and reindexed", () => {
		const path = file([header, entry("a1", "one"), entry("a2", "two")]);
		const l = new Ledger(path);
		l.refresh();
		// Shrunk.
		writeFileSync(path, `${header}\n${entry("a1", "one")}\n`);
		l.refresh();
		expect(l.stats.rebuilds).toBe(1);
		expect(l.has("a2")).toBe(false);
		// Replaced by another file (new inode), same size class.
		const other = `${path}.new`;
		writeFileSync(other, `${header}\n${entry("b1", "one")}\n${entry("b2", "tw0")}\n`);
		renameSync(other, path);
		l.refresh();
		expect(l.stats.rebuilds).toBe(2);
		expect(l.ids()).toEqual(["b1", "b2"]);
		// Same inode, grown, but the bytes at the last indexed offset changed (rewritten in place).
		writeFileSync(path, `${header}\n${entry("c1", "one")}\n${entry("c2", "two")}\n${entry("c3", "three")}\n`);
		l.refresh();
		expect(l.stats.rebuilds).toBe(3);
		expect(l.ids()).toEqual(["c1", "c2", "c3"]);
	});

	test("v1 sessions (no ids) are indexed by line", () => {
		const l = new Ledger(
			file([
				JSON.stringify({ type: "session", id: "old", timestamp: "t", cwd: "/" }),
				JSON.stringify({ type: "message", message: { role: "user", content: "hi" } }),
			]),
		);
		expect(l.refresh()).toMatchObject({ entries: 1, version: 1 });
		expect(l.ids()).toEqual(["line:2"]);
	});

	test("missing and unreadable files raise a coded LedgerError", () => {
		const l = new Ledger("/nonexistent/dir/s.jsonl");
		expect(() => l.refresh()).toThrow(LedgerError);
		try {
			l.refresh();
		} catch (error) {
			expect((error as LedgerError).code).toBe("missing");
			expect((error as Error).message).toContain("session file not found");
		}
	});

	test("a line longer than the longest decodable one is counted as malformed, the rest indexed (issue 16)", () => {
		const path = file([header, entry("a", "one"), entry("h", "x".repeat(3_000_000)), entry("b", "two")]);
		const ledger = new Ledger(path, 1_000_000);
		const stats = ledger.refresh();
		expect([stats.entries, stats.malformed]).toEqual([2, 1]);
		expect(ledger.has("h")).toBe(false);
		expect(ledger.read("b")?.id).toBe("b");
		// Appended after the long line: indexed on the next refresh.
		appendFileSync(path, `${entry("c", "three")}\n`);
		expect(ledger.refresh().entries).toBe(3);
		expect(new Ledger(path).refresh().entries).toBe(4);
	});

	test("a FIFO in the session file's place is unreadable at once, never a blocking read (issue 16)", () => {
		const path = file([header]);
		rmSync(path);
		execFileSync("mkfifo", [path]);
		const ledger = new Ledger(path);
		expect(() => ledger.refresh()).toThrow(
			new LedgerError(
				`the session file is not a regular file now (a FIFO, a device or a socket): ${path}`,
				"unreadable",
			),
		);
	});
});
