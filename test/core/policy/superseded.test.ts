import { describe, expect, test } from "bun:test";
import {
	findStaleBlocks,
	normalizePath,
	type StaleBlock,
	type ToolEvent,
} from "../../../src/core/policy/superseded.ts";

let n = 0;
/** One call with its result; ids follow the order of creation. */
function ev(
	toolName: string,
	args: Record<string, unknown>,
	result: { text?: string; isError?: boolean; truncated?: boolean } | null = {},
	settled = true,
): ToolEvent {
	n += 1;
	const id = `call_${n}`;
	return {
		toolCallId: id,
		toolName,
		args,
		callEntryId: `a${n}`,
		callBlockIndex: 1,
		...(result !== null && {
			result: {
				entryId: `r${n}`,
				text: result.text ?? `output of ${id}`,
				isError: result.isError ?? false,
				...(result.truncated !== undefined && { truncated: result.truncated }),
			},
		}),
		settled,
	};
}

function stale(events: ToolEvent[], cwd?: string): string[] {
	return findStaleBlocks({ events, ...(cwd !== undefined && { cwd }) }).map(
		(b: StaleBlock) => `${b.block} ${b.toolCallId}: ${b.reason}`,
	);
}

describe("superseded reads", () => {
	test("a read, then the same file read in full: the first is superseded", () => {
		n = 0;
		expect(stale([ev("read", { path: "src/a.ts" }), ev("read", { path: "src/a.ts" })])).toEqual([
			"result call_1: superseded by read src/a.ts (call_2)",
		]);
	});
	test("a later partial, truncated or failed read does not supersede", () => {
		n = 0;
		expect(
			stale([
				ev("read", { path: "a" }),
				ev("read", { path: "a", offset: 10 }),
				ev("read", { path: "a", limit: 5 }),
				ev("read", { path: "a" }, { truncated: true }),
				ev("read", { path: "a" }, { isError: true, text: "ENOENT" }),
			]),
		).toEqual([]);
	});
	test("an edit or write of the file supersedes every earlier read of it, partial ones too", () => {
		n = 0;
		expect(
			stale([
				ev("read", { path: "a", offset: 1, limit: 20 }),
				ev("read", { path: "b" }),
				ev("edit", { path: "a", edits: [{ oldText: "x", newText: "y" }] }),
				ev("write", { path: "b", content: "new" }),
			]),
		).toEqual(["result call_1: superseded by edit a (call_3)", "result call_2: superseded by write b (call_4)"]);
	});
	test("a failed edit changes nothing", () => {
		n = 0;
		expect(
			stale([ev("read", { path: "a" }), ev("edit", { path: "a", oldText: "x", newText: "y" }, { isError: true })]),
		).toEqual([]);
	});
	test("the newest later call is the one named", () => {
		n = 0;
		expect(stale([ev("read", { path: "a" }), ev("edit", { path: "a", edits: [] }), ev("read", { path: "a" })])).toEqual(
			["result call_1: superseded by read a (call_3)"],
		);
	});
	test("paths match across ./, @, repeated slashes and the session's cwd", () => {
		n = 0;
		expect(
			stale(
				[
					ev("read", { path: "./src//a.ts" }),
					ev("read", { path: "@src/x/../a.ts" }),
					ev("write", { path: "/p/src/a.ts", content: "z" }),
				],
				"/p",
			),
		).toEqual([
			"result call_1: superseded by write /p/src/a.ts (call_3)",
			"result call_2: superseded by write /p/src/a.ts (call_3)",
		]);
		expect(normalizePath("src/a.ts")).toBe("src/a.ts");
		expect(normalizePath("../a/./b/")).toBe("../a/b");
		expect(normalizePath("/x/../../y")).toBe("/y");
		expect(normalizePath("a", "/w/v/..")).toBe("/w/a");
	});
});

describe("duplicates", () => {
	test("same tool, same arguments (in any key order), byte-identical result: the earlier is the same as the newest", () => {
		n = 0;
		expect(
			stale([
				ev("bash", { command: "ls", timeout: 5 }, { text: "a\nb" }),
				ev("bash", { timeout: 5, command: "ls" }, { text: "a\nb" }),
				ev("bash", { command: "ls", timeout: 5 }, { text: "a\nb" }),
			]),
		).toEqual(["result call_1: same as bash `ls` (call_3)", "result call_2: same as bash `ls` (call_3)"]);
	});
	test("a different byte, different arguments or a different tool: no duplicate", () => {
		n = 0;
		expect(
			stale([
				ev("bash", { command: "ls" }, { text: "a\nb" }),
				ev("bash", { command: "ls" }, { text: "a\nb\n" }),
				ev("bash", { command: "ls -a" }, { text: "a\nb" }),
				ev("shell", { command: "ls" }, { text: "a\nb" }),
			]),
		).toEqual([]);
	});
	test("a long command is shown on one line, clipped", () => {
		n = 0;
		const command = `echo one\necho ${"x".repeat(80)}`;
		expect(stale([ev("bash", { command }, { text: "same" }), ev("bash", { command }, { text: "same" })])).toEqual([
			`result call_1: same as bash \`echo one echo ${"x".repeat(46)}…[+34 chars]\` (call_2)`,
		]);
	});
});

describe("failed calls", () => {
	test("a failed edit, then the same tool succeeds on the same path: its result and its input are superseded", () => {
		n = 0;
		expect(
			stale([
				ev("edit", { path: "a", oldText: "nope", newText: "y" }, { isError: true, text: "oldText not found" }),
				ev("edit", { path: "a", oldText: "x", newText: "y" }),
			]),
		).toEqual(["result call_1: superseded by edit a (call_2)", "input call_1: superseded by edit a (call_2)"]);
	});
	test("another tool succeeding, another path, or a later failure: nothing", () => {
		n = 0;
		expect(
			stale([
				ev("edit", { path: "a", oldText: "nope", newText: "y" }, { isError: true }),
				ev("write", { path: "b", content: "c" }),
				ev("edit", { path: "b", oldText: "x", newText: "y" }),
				ev("edit", { path: "a", oldText: "again", newText: "y" }, { isError: true }),
			]),
		).toEqual([]);
	});
});

describe("write inputs", () => {
	test("a write read back or written again: its input is superseded (the call's result is not)", () => {
		n = 0;
		expect(
			stale([
				ev("write", { path: "a", content: "one" }),
				ev("read", { path: "a", offset: 3 }),
				ev("write", { path: "b", content: "two" }),
				ev("write", { path: "b", content: "three" }),
			]),
		).toEqual(["input call_1: superseded by read a (call_2)", "input call_3: superseded by write b (call_4)"]);
	});
	test("an edit after a write does not supersede the write's input; a failed read back does not either", () => {
		n = 0;
		expect(
			stale([
				ev("write", { path: "a", content: "one" }),
				ev("edit", { path: "a", edits: [] }),
				ev("read", { path: "a" }, { isError: true }),
			]),
		).toEqual([]);
	});
});

describe("eligibility", () => {
	test("a call not settled (not yet delivered in full, or in the running tool loop) is never reported", () => {
		n = 0;
		expect(stale([ev("read", { path: "a" }, {}, false), ev("read", { path: "a" })])).toEqual([]);
	});
	test("the later call need not be settled, and a call without a result can still supersede", () => {
		n = 0;
		expect(
			stale([ev("write", { path: "a", content: "x" }), ev("write", { path: "a", content: "y" }, {}, false)]),
		).toEqual(["input call_1: superseded by write a (call_2)"]);
		n = 0;
		expect(stale([ev("read", { path: "a" }), ev("edit", { path: "a", edits: [] }, null)])).toEqual([]);
	});
	test("an empty branch, and a single call, report nothing", () => {
		expect(stale([])).toEqual([]);
		expect(stale([ev("read", { path: "a" })])).toEqual([]);
	});
	test("block identities: a result by its entry, an input by the call's entry and content index", () => {
		n = 0;
		const blocks = findStaleBlocks({
			events: [
				ev("edit", { path: "a", oldText: "o", newText: "n" }, { isError: true }),
				ev("edit", { path: "a", oldText: "x", newText: "y" }),
			],
		});
		expect(blocks.map((b) => [b.block, b.entryId, b.blockIndex, b.kind, b.byToolCallId])).toEqual([
			["result", "r1", undefined, "superseded", "call_2"],
			["input", "a1", 1, "superseded", "call_2"],
		]);
	});
});
