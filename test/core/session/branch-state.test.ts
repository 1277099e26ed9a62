// The one branch state the extension (LiveBranch) and the CLI (BranchReplay) drive: what a branch's
// entries add up to. The counts the status flags read come from the branch, so they survive a restart.
import { describe, expect, test } from "bun:test";
import { LiveBranch } from "../../../src/adapters/pi/state.ts";
import {
	BranchReplay,
	BranchState,
	COMPACTION_NOTE_TYPE,
	FOLD_ENTRY_TYPE,
	usageProblem,
} from "../../../src/core/session/branch-state.ts";
import type { PiEntry } from "../../../src/core/session/view.ts";

const parseTime = (iso: string) => Date.parse(iso);
let n = 0;
const id = () => `e${++n}`;
const at = (ms: number) => new Date(ms).toISOString();

const recall = (code: string, t: number): PiEntry => ({
	type: "message",
	id: id(),
	parentId: null,
	timestamp: at(t),
	message: {
		role: "assistant",
		timestamp: t,
		stopReason: "toolUse",
		usage: { input: 100, output: 5, cacheRead: 900, cacheWrite: 0 },
		content: [{ type: "toolCall", id: `c${t}`, name: "recall_folded", arguments: { code } }],
	},
});
const compaction = (cid: string, reason?: string): PiEntry => ({
	type: "compaction",
	id: cid,
	parentId: null,
	timestamp: at(1),
	summary: "s",
	firstKeptEntryId: cid,
	tokensBefore: 1,
	...(reason !== undefined && { details: { contextFold: { v: 1, reason } } }),
});
const note = (compactionId: string, reason: string): PiEntry => ({
	type: "custom",
	id: id(),
	parentId: null,
	timestamp: at(2),
	customType: COMPACTION_NOTE_TYPE,
	data: { v: 1, reason, compactionId },
});

function consumed(entries: PiEntry[]): BranchState {
	const s = new BranchState(parseTime);
	for (const e of entries) s.consume(e);
	return s;
}

describe("BranchState", () => {
	test("forced compactions: context-fold's own (its details) and Pi's own (noted on the branch), each once", () => {
		const s = consumed([
			compaction("k1", "threshold"),
			compaction("k2"), // Pi's own, forced: noted below
			note("k2", "overflow"),
			compaction("k3"), // Pi's own, a manual /compact: no note
			compaction("k4", "manual"),
			note("k1", "threshold"), // a stray second note for one already counted
		]);
		expect(s.compactions).toBe(4);
		expect(s.forcedCompactions).toBe(2);
	});

	test("a note for a manual compaction does not count", () => {
		expect(consumed([compaction("k1"), note("k1", "manual")]).forcedCompactions).toBe(0);
	});

	test("recall_folded calls per code, normalized", () => {
		const s = consumed([recall("abc123", 10), recall("{#ABC123}", 20), recall("def456", 30), recall("  ", 40)]);
		expect([...s.recallCalls]).toEqual([
			["abc123", 2],
			["def456", 1],
		]);
		expect(s.responses).toBe(4);
		expect(s.lastResponseAt).toBe(40);
	});

	test("an invalid fold record is counted, never applied", () => {
		const s = consumed([
			{
				type: "custom",
				id: id(),
				parentId: null,
				timestamp: at(3),
				customType: FOLD_ENTRY_TYPE,
				data: { type: "layer", v: 99 },
			},
		]);
		expect(s.invalidRecords).toBe(1);
		expect(s.index.layers).toEqual([]);
	});

	test.each([
		[undefined, "no usage"],
		[{ input: 0, output: 3, cacheRead: 0, cacheWrite: 0 }, "no usage"],
		[{ input: -1, output: 3, cacheRead: 0, cacheWrite: 0 }, "negative"],
		[{ input: null, output: 3 }, "not a number"],
		[{ input: Number.NaN, output: 3 }, "not a number"],
		[{ input: 2e9, output: 3 }, "absurdly large"],
		[{ input: 10, output: 3, cacheRead: 5, cacheWrite: 0 }, undefined],
	])("usageProblem(%j) = %j", (usage, expected) => {
		expect(usageProblem(usage)).toBe(expected as string | undefined);
	});

	test("the extension's LiveBranch and the CLI's BranchReplay hold the very same state", () => {
		const entries = [recall("abc123", 10), compaction("k9"), note("k9", "threshold"), recall("abc123", 20)];
		const live = new LiveBranch();
		live.sync(entries);
		const replay = new BranchReplay(parseTime);
		for (const e of entries) replay.consume(e);
		expect(live.branch.forcedCompactions).toBe(replay.forcedCompactions);
		expect([...live.branch.recallCalls]).toEqual([...replay.recallCalls]);
		expect(live.accounting()).toEqual(replay.accounting());
		// A restart rebuilds from the branch: the counts come back.
		const restarted = new LiveBranch();
		restarted.sync(entries);
		expect(restarted.branch.forcedCompactions).toBe(1);
		expect(restarted.branch.recallCalls.get("abc123")).toBe(2);
	});
});
