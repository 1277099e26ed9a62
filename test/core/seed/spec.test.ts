/**
 * docs/SEED_INDEX_SPEC.md is the contract: its examples must parse, validate and be exactly what the
 * code produces, and its tables must match the code's constants.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { extractSeedRecord } from "../../../src/core/seed/extract.ts";
import { SECRET_MARKER_HEX } from "../../../src/core/seed/redact.ts";
import { DEFAULT_SEED_MAX_CHARS, renderSeed } from "../../../src/core/seed/render.ts";
import {
	SEED_FIELDS,
	SEED_ID_MAX_CHARS,
	SEED_INDEX_VERSION,
	SEED_LIMITS,
	serializeSeedRecord,
	validateSeedRecord,
} from "../../../src/core/seed/schema.ts";
import { compactionInput, foldInput } from "./fixtures.ts";

const SPEC = readFileSync(join(import.meta.dir, "../../../docs/SEED_INDEX_SPEC.md"), "utf8");

/** Fenced blocks whose info string starts with `lang tag`, with the rest of the info string. */
function blocks(lang: string, tag: string): Array<{ info: string; body: string }> {
	const out: Array<{ info: string; body: string }> = [];
	const re = new RegExp(`^\`\`\`${lang} ${tag}([^\\n]*)\\n([\\s\\S]*?)\\n\`\`\`$`, "gm");
	for (const m of SPEC.matchAll(re)) out.push({ info: (m[1] ?? "").trim(), body: m[2] ?? "" });
	return out;
}

const records = () => [extractSeedRecord(foldInput()), extractSeedRecord(compactionInput())];

describe("spec examples", () => {
	const examples = blocks("json", "seed-record");
	test("there is a fold example and a compaction example", () => {
		expect(examples.map((e) => (JSON.parse(e.body) as { kind: string }).kind)).toEqual(["fold", "compaction"]);
	});
	test.each(examples.map((e, i) => [i, e.body] as const))(
		"example %d parses, validates, keeps key order",
		(_i, body) => {
			const data = JSON.parse(body) as unknown;
			const v = validateSeedRecord(data);
			expect(v.ok).toBe(true);
			if (v.ok) expect(serializeSeedRecord(v.record)).toBe(JSON.stringify(data));
		},
	);
	test("the examples are exactly what the extractor produces for the fixtures", () => {
		expect(examples.map((e) => JSON.stringify(JSON.parse(e.body)))).toEqual(records().map(serializeSeedRecord));
	});
	test("the rendering examples are exactly what renderSeed produces", () => {
		const renderings = blocks("text", "seed-rendering");
		expect(renderings).toHaveLength(2);
		for (const r of renderings) {
			const maxChars = Number(/maxChars=(\d+)/.exec(r.info)?.[1]);
			const invalid = Number(/invalid=(\d+)/.exec(r.info)?.[1] ?? 0);
			const truncatedTail = /\btruncatedTail\b/.test(r.info);
			expect(renderSeed(records(), { maxChars, invalid, truncatedTail })).toBe(`${r.body}\n`);
		}
	});
});

describe("spec tables match the code", () => {
	test("version", () => {
		expect(SPEC).toContain(`Format version: **${SEED_INDEX_VERSION}**`);
	});
	test("every record and span field is documented", () => {
		const [fold] = records();
		const keys = [
			...Object.keys(JSON.parse(serializeSeedRecord(fold as never))),
			"code",
			"entryId",
			"blockIndex",
			"call",
		];
		for (const key of keys) expect(SPEC, key).toContain(`| \`${key}\` |`);
	});
	test("bounds", () => {
		for (const field of SEED_FIELDS) {
			const row = new RegExp(`^\\| \`${field}\` \\| (\\d+) \\| (\\d+)`, "m").exec(SPEC);
			expect(row, field).not.toBeNull();
			expect([Number(row?.[1]), Number(row?.[2])], field).toEqual([SEED_LIMITS[field].items, SEED_LIMITS[field].chars]);
		}
		expect(SPEC).toContain(`are at most ${SEED_ID_MAX_CHARS} characters`);
		expect(SPEC).toContain(`\`DEFAULT_SEED_MAX_CHARS\` is ${DEFAULT_SEED_MAX_CHARS.toLocaleString("en-US")}`);
		expect(SPEC).toContain(`first ${SECRET_MARKER_HEX} hex digits`);
	});
});
