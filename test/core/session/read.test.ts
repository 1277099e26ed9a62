// Reading sessions the way Pi does: formats v1 to v3, malformed lines counted, the branch, and the
// context the hook would see at every request, checked against Pi's own session code on the traces.
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import type { SessionEntry } from "@earendil-works/pi-coding-agent";
// Pi's own session code, straight from its module (the package index pulls in far more than this needs).
import { buildSessionContext } from "../../../node_modules/@earendil-works/pi-coding-agent/dist/core/session-manager.js";
import { ContextTracker } from "../../../src/core/session/context.ts";
import { branchPath, parseSessionText } from "../../../src/core/session/entries.ts";
import type { PiEntry, PiMessage } from "../../../src/core/session/view.ts";
import { parseIsoTime } from "../../../src/store/session-file.ts";
import { TRACE } from "../../helpers/traces.ts";

const T = "2025-01-01T00:00:00.000Z";
const msg = (role: string, text: string, ts: number) => ({ role, content: [{ type: "text", text }], timestamp: ts });

describe("parseSessionText", () => {
	test("v1: ids are line numbers, entry order is the tree, firstKeptEntryIndex becomes an id", () => {
		const lines = [
			{ type: "session", id: "s1", timestamp: T, cwd: "/p" },
			{ type: "message", timestamp: T, message: msg("user", "hi", 1) },
			"not json",
			{ type: "message", timestamp: T, message: msg("assistant", "yo", 2) },
			{ type: "compaction", timestamp: T, summary: "sum", firstKeptEntryIndex: 2, tokensBefore: 9 },
		].map((l) => (typeof l === "string" ? l : JSON.stringify(l)));
		const parsed = parseSessionText(`${lines.join("\n")}\n`);
		expect(parsed.header).toEqual({ id: "s1", version: 1, cwd: "/p", timestamp: T, parentSession: null });
		expect(parsed.malformed).toBe(1);
		expect(parsed.problems).toEqual([{ line: 3, reason: "not valid JSON" }]);
		expect(parsed.entries.map((e) => [e.id, e.parentId])).toEqual([
			["line:2", null],
			["line:4", "line:2"],
			["line:5", "line:4"],
		]);
		// Index 2 of the parsed entries (header = 0; the bad line is not one) is the assistant on line 4, as in Pi's migration.
		expect(parsed.entries[2]?.firstKeptEntryId).toBe("line:4");
	});

	test("v2: hookMessage becomes custom; v3 ids and parents are kept; a glued line is counted", () => {
		const lines = [
			JSON.stringify({ type: "session", version: 2, id: "s2", timestamp: T, cwd: "/p" }),
			JSON.stringify({ type: "message", id: "a", parentId: null, timestamp: T, message: msg("hookMessage", "x", 1) }),
			`${JSON.stringify({ type: "label", id: "b", parentId: "a", timestamp: T })}${JSON.stringify({ type: "label", id: "c", parentId: "b", timestamp: T })}`,
			JSON.stringify({ type: "message", parentId: "a", timestamp: T, message: msg("user", "no id", 2) }),
		];
		const parsed = parseSessionText(lines.join("\n"));
		expect(parsed.entries.map((e) => e.message?.role ?? e.type)).toEqual(["custom"]);
		expect(parsed.malformed).toBe(2);
		expect(parsed.problems.map((p) => p.reason)).toEqual([
			"two JSON objects glued on one line",
			"an entry without an id",
		]);
		expect(parsed.unterminated).toBe(true);
	});

	test("a file that does not start with a session header is not a session", () => {
		expect(parseSessionText(`${JSON.stringify({ type: "message", id: "a" })}\n`).header).toBeNull();
		expect(parseSessionText("").header).toBeNull();
	});

	test("branchPath follows parents from the last entry; other branches are left out", () => {
		const e = (id: string, parentId: string | null): PiEntry => ({ type: "label", id, parentId });
		const entries = [e("a", null), e("b", "a"), e("c", "a"), e("d", "b")];
		expect(branchPath(entries).map((x) => x.id)).toEqual(["a", "b", "d"]);
		expect(branchPath(entries, "c").map((x) => x.id)).toEqual(["a", "c"]);
	});
});

describe("ContextTracker", () => {
	test("compaction keeps its firstKeptEntryId onward; custom messages and branch summaries join; edits apply", () => {
		const entries: PiEntry[] = [
			{ type: "message", id: "1", parentId: null, timestamp: T, message: msg("user", "one", 1) },
			{ type: "message", id: "2", parentId: "1", timestamp: T, message: { role: "system", content: "", timestamp: 2 } },
			{ type: "message", id: "3", parentId: "2", timestamp: T, message: msg("user", "three", 3) },
			{
				type: "compaction",
				id: "4",
				parentId: "3",
				timestamp: T,
				summary: "S",
				firstKeptEntryId: "3",
				tokensBefore: 1,
			},
			{ type: "custom_message", id: "5", parentId: "4", timestamp: T, customType: "x", content: "note", display: true },
			{ type: "message", id: "6", parentId: "5", timestamp: T, message: msg("toolResult", "big", 6) },
			{ type: "context_edit", id: "7", parentId: "6", timestamp: T, targetId: "6", replacement: { content: "small" } },
		];
		const tracker = new ContextTracker(parseIsoTime);
		for (const e of entries) tracker.consume(e);
		expect(tracker.messages.map((m) => [m.role, JSON.stringify(m.content ?? m.summary)])).toEqual([
			["compactionSummary", '"S"'],
			["user", '[{"type":"text","text":"three"}]'],
			["custom", '"note"'],
			["toolResult", '[{"type":"text","text":"small"}]'],
		]);
	});

	for (const [name, file] of [
		["large-session.v3", TRACE.largeV3],
		["before-compaction.v3", TRACE.compactV3],
	] as const) {
		test(`${name}: before every response, the context equals Pi's buildSessionContext`, () => {
			const parsed = parseSessionText(readFileSync(file, "utf8"));
			const tracker = new ContextTracker(parseIsoTime);
			const piEntries = parsed.entries as unknown as SessionEntry[];
			let checked = 0;
			for (const entry of parsed.entries) {
				if (entry.type === "message" && entry.message?.role === "assistant") {
					const pi = buildSessionContext(piEntries, entry.parentId ?? null).messages as unknown as PiMessage[];
					expect(tracker.messages).toEqual(pi.filter((m) => m.role !== "system"));
					checked++;
				}
				tracker.consume(entry);
			}
			expect(checked).toBeGreaterThan(400);
		});
	}

	test("v1 and its v3 migration give the same contexts (ids aside)", () => {
		// Length plus the first and last message per request: the context only grows between compactions.
		const strip = (ms: readonly PiMessage[]) => `${ms.length}|${JSON.stringify(ms[0])}|${JSON.stringify(ms.at(-1))}`;
		for (const [v1, v3] of [
			[TRACE.largeV1, TRACE.largeV3],
			[TRACE.compactV1, TRACE.compactV3],
		]) {
			const contexts = (path: string) => {
				const parsed = parseSessionText(readFileSync(path, "utf8"));
				const tracker = new ContextTracker(parseIsoTime);
				const out: string[] = [];
				for (const e of branchPath(parsed.entries)) {
					if (e.type === "message" && e.message?.role === "assistant") out.push(strip(tracker.messages));
					tracker.consume(e);
				}
				return out;
			};
			expect(contexts(v1 as string)).toEqual(contexts(v3 as string));
		}
	});
});
