import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { extractSeedRecord } from "../../../src/core/seed/extract.ts";
import { parseSeedIndex, renderSeed } from "../../../src/core/seed/render.ts";
import { type SeedRecord, serializeSeedRecord } from "../../../src/core/seed/schema.ts";
import { compactionInput, foldInput } from "./fixtures.ts";
import { sha256 } from "./trace.ts";

const fold = (): SeedRecord => extractSeedRecord(foldInput());
const compaction = (): SeedRecord => extractSeedRecord(compactionInput());

/** A minimal valid record with the given list fields. */
function record(seq: number, fields: Partial<SeedRecord>): SeedRecord {
	return {
		...extractSeedRecord({ kind: "fold", seq, at: seq * 1000, messages: [], hash: sha256 }),
		...fields,
	};
}

describe("renderSeed", () => {
	test("no records", () => {
		expect(renderSeed([], { maxChars: 1000 })).toBe(
			"# context-fold seed index\nNo fold or compaction has been indexed yet.\n",
		);
	});
	test("deterministic; newest first means last appended first, whatever seq says", () => {
		const a = renderSeed([fold(), compaction()], { maxChars: 3000 });
		expect(renderSeed([fold(), compaction()], { maxChars: 3000 })).toBe(a);
		const older = record(9, { commands: ["older"] });
		const newer = record(1, { commands: ["newer"] });
		expect(renderSeed([older, newer], { maxChars: 3000 })).toContain("## Commands\n- $ newer\n- $ older\n");
	});
	test("never longer than maxChars, whatever the bound", () => {
		const records = [fold(), compaction(), record(3, { commands: ["x".repeat(400)], identifiers: ["fooBar"] })];
		for (let max = 0; max <= 2500; max += 7) {
			expect(renderSeed(records, { maxChars: max, invalid: 3, truncatedTail: true }).length).toBeLessThanOrEqual(max);
		}
	});
	test("items merge across records: newest first, once each, file ops united", () => {
		const older = record(1, {
			files: [{ path: "src/a.ts", ops: ["edit"] }],
			commands: ["npm test", "npm run build"],
			identifiers: ["sharedName", "oldName"],
		});
		const newer = record(2, {
			files: [
				{ path: "src/b.ts", ops: ["output"] },
				{ path: "src/a.ts", ops: ["read"] },
			],
			commands: ["git status", "npm test"],
			identifiers: ["newName", "sharedName"],
		});
		const text = renderSeed([older, newer], { maxChars: 5000 });
		expect(text).toContain(
			"## Files\n- src/a.ts (edit, read)\n- src/b.ts (output)\n\n## Commands\n- $ npm test\n- $ git status\n- $ npm run build\n\n## Identifiers\nnewName, sharedName, oldName\n",
		);
	});
	test("over the bound, the footer says what was omitted and what per-record bounds dropped", () => {
		const many = record(1, {
			identifiers: Array.from({ length: 60 }, (_, i) => `identifier_${i}`),
			omitted: { files: 0, commands: 0, errors: 0, identifiers: 1234, numbers: 0, userLines: 0, spans: 0 },
		});
		const text = renderSeed([many], { maxChars: 600 });
		expect(text.length).toBeLessThanOrEqual(600);
		const shown = /## Identifiers\n(.*)\n/.exec(text)?.[1]?.split(", ").length ?? 0;
		expect(shown).toBeGreaterThan(0);
		expect(text).toContain(`Omitted for size: ${60 - shown} identifiers. The complete index is seed-index.jsonl.`);
		expect(text.endsWith("Dropped by per-record bounds when indexed: 1,234 identifiers.\n")).toBe(true);
	});
	test("a secret in a record from a foreign writer is re-redacted, or withheld without a hash", () => {
		const leaked = `${"ghp_"}abcdefghijklmnopqrstuvwxyz0123456789`;
		const bad = record(1, { commands: [`git clone https://${leaked}@github.com/o/r`, "ls"] });
		const withHash = renderSeed([bad], { maxChars: 2000, hash: sha256 });
		expect(withHash).not.toContain(leaked);
		expect(withHash).toMatch(/\$ git clone https:\/\/\[secret:[0-9a-f]{8}\]@github\.com\/o\/r/);
		const without = renderSeed([bad], { maxChars: 2000 });
		expect(without).not.toContain(leaked);
		expect(without).toContain("- $ ls\n");
		expect(without).toContain("Withheld: 1 item that looked like a secret.");
	});
	test("property: bounded and deterministic for any bound and any subset of records", () => {
		const pool = [
			fold(),
			compaction(),
			record(5, { userLines: ["a\nb"], errors: [{ text: "Error: x", ref: "abc123" }] }),
			record(6, { numbers: ["1.2.3", "4096"], files: [{ path: "a/b/c", ops: ["command"] }] }),
		];
		fc.assert(
			fc.property(fc.subarray(pool), fc.integer({ min: 0, max: 4000 }), fc.boolean(), (records, maxChars, torn) => {
				const options = { maxChars, invalid: torn ? 1 : 0, truncatedTail: torn };
				const text = renderSeed(records, options);
				expect(text.length).toBeLessThanOrEqual(maxChars);
				expect(renderSeed(records, options)).toBe(text);
			}),
			{ numRuns: 300 },
		);
	});
});

describe("parseSeedIndex", () => {
	const a = `${serializeSeedRecord(fold())}\n`;
	const b = `${serializeSeedRecord(compaction())}\n`;
	const line = (r: SeedRecord) => `${serializeSeedRecord(r)}\n`;

	test("a clean file", () => {
		const read = parseSeedIndex(a + b);
		expect(read.records.map(line)).toEqual([a, b]);
		expect([read.invalid, read.truncatedTail, read.problems]).toEqual([0, false, []]);
	});
	test("empty text", () => {
		expect(parseSeedIndex("")).toEqual({ records: [], invalid: 0, truncatedTail: false, problems: [] });
	});
	test("corrupt, blank and invalid lines are counted with their reasons; valid ones are kept", () => {
		const future = `${a.replace('"v":1', '"v":9')}`;
		const read = parseSeedIndex(`${a}not json\n\n${future}${b}`);
		expect(read.records.map(line)).toEqual([a, b]);
		expect(read.invalid).toBe(3);
		expect(read.truncatedTail).toBe(false);
		expect(read.problems).toEqual([
			{ line: 2, error: "not JSON" },
			{ line: 3, error: "blank line" },
			{ line: 4, error: "unsupported version 9" },
		]);
	});
	test("a truncated last line is counted separately", () => {
		const read = parseSeedIndex(a + b.slice(0, 80));
		expect(read.records).toHaveLength(1);
		expect([read.invalid, read.truncatedTail]).toEqual([0, true]);
	});
	test("a complete last record missing only its newline is kept", () => {
		expect(parseSeedIndex(a + b.trimEnd()).records).toHaveLength(2);
	});
	test("a torn write followed by an append: the record is kept, the fragment counted", () => {
		const read = parseSeedIndex(a.slice(0, 50) + b + a);
		expect(read.records.map(line)).toEqual([b, a]);
		expect(read.invalid).toBe(1);
		expect(read.problems).toEqual([{ line: 1, error: "torn record before a valid one" }]);
	});
	test("CRLF line ends are accepted", () => {
		expect(parseSeedIndex(a.replace("\n", "\r\n") + b).records).toHaveLength(2);
	});
	test("at most ten problems are listed, all are counted", () => {
		const read = parseSeedIndex("x\n".repeat(25));
		expect(read.invalid).toBe(25);
		expect(read.problems).toHaveLength(10);
	});
	test("render from what is valid, and say so", () => {
		const read = parseSeedIndex(`${a}garbage\n${b.slice(0, 30)}`);
		const text = renderSeed(read.records, { maxChars: 4000, invalid: read.invalid, truncatedTail: read.truncatedTail });
		expect(text).toContain(
			"Note: seed-index.jsonl had 1 unreadable line and a truncated last line, skipped; this seed is rendered from the 1 valid record.\n",
		);
		expect(text).toContain("1 record (1 fold, 0 compactions), newest first.");
	});
});
