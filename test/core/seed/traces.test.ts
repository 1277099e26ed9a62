/**
 * Golden tests over real recorded Pi sessions (test/fixtures/traces). Simulated fold
 * events (every 40 tool results) and the trace's own compactions go through the extractor; the
 * output must be byte-identical across runs, match a committed summary (counts and hashes), and
 * carry no secret. Regenerate the summary after an intended change with UPDATE_GOLDEN=1.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ViewMessage } from "../../../src/core/blocks.ts";
import { type ExtractInput, extractSeedRecord } from "../../../src/core/seed/extract.ts";
import { containsSecret } from "../../../src/core/seed/redact.ts";
import { DEFAULT_SEED_MAX_CHARS, parseSeedIndex, renderSeed } from "../../../src/core/seed/render.ts";
import { SEED_FIELDS, type SeedRecord, serializeSeedRecord } from "../../../src/core/seed/schema.ts";
import { COMPACTED, compactionInputs, LARGE, readTrace, sha256, simulateFolds, type Trace } from "./trace.ts";

const GOLDEN = join(import.meta.dir, "../../golden/seed-index-traces.json");
const FOLD_EVERY = 40;

/** Fake secrets planted into every 25th tool result, so the check below has something to catch. */
const PLANTED = [
	`OPENAI_API_KEY=${"sk-"}proj-Q7fK2mX9vL4pR8sT1wY6zB3nC5dH0jG8aE2uI9oP`,
	`export GITHUB_TOKEN=${"ghp_"}R4nD0mT0k3nV4lu3F0rT3st1ngPurp0s3sX9`,
	`aws_secret_access_key = ${"wJalrXUtnFEMI"}/K7MDENG/bPxRfiCYzq81kd02LMx`,
	`DATABASE_URL=postgres://app:${"Hunter2"}Secret@db.internal:5432/prod`,
	`-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n-----END OPENSSH PRIVATE KEY-----`,
];
const PLANTED_VALUES = [
	"Q7fK2mX9vL4pR8sT1wY6zB3nC5dH0jG8aE2uI9oP",
	"R4nD0mT0k3nV4lu3F0rT3st1ngPurp0s3sX9",
	"bPxRfiCYzq81kd02LMx",
	"Hunter2Secret",
	"b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ",
];

/** A copy of the trace with a planted secret appended to every 25th tool result. */
function planted(trace: Trace): Trace {
	let n = 0;
	const messages = trace.messages.map((m): ViewMessage => {
		if (m.role !== "toolResult" || n++ % 25 !== 0) return m;
		const secret = PLANTED[((n / 25) % PLANTED.length) | 0] as string;
		return { ...m, blocks: m.blocks.map((b) => (b.kind === "text" ? { ...b, text: `${b.text}\n${secret}` } : b)) };
	});
	return { ...trace, messages };
}

interface Run {
	jsonl: string;
	seed: string;
	records: SeedRecord[];
	chars: number;
}

function run(inputs: ExtractInput[]): Run {
	const records = inputs.map(extractSeedRecord);
	const jsonl = records.map((r) => `${serializeSeedRecord(r)}\n`).join("");
	const chars = records.reduce((n, r) => n + r.source.chars, 0);
	return { jsonl, seed: renderSeed(records, { maxChars: DEFAULT_SEED_MAX_CHARS }), records, chars };
}

function summary(r: Run) {
	const total = (f: (x: SeedRecord) => number) => r.records.reduce((n, x) => n + f(x), 0);
	return {
		records: r.records.length,
		harvestedChars: r.chars,
		items: Object.fromEntries(SEED_FIELDS.map((f) => [f, total((x) => x[f].length)])),
		omitted: Object.fromEntries(SEED_FIELDS.map((f) => [f, total((x) => x.omitted[f])])),
		secrets: total((x) => x.secrets),
		jsonlBytes: Buffer.byteLength(r.jsonl),
		jsonlSha256: sha256(r.jsonl),
		seedChars: r.seed.length,
		seedSha256: sha256(r.seed),
	};
}

describe("seed index over real traces", () => {
	const large = readTrace(LARGE);
	const compacted = readTrace(COMPACTED);
	const runs = () => ({
		folds: run(simulateFolds(large, FOLD_EVERY, true)),
		compactions: run(compactionInputs(compacted)),
		planted: run(simulateFolds(planted(large), FOLD_EVERY, true)),
	});
	const first = runs();

	test("byte-identical output across two runs", () => {
		const second = runs();
		for (const key of ["folds", "compactions", "planted"] as const) {
			expect(second[key].jsonl).toBe(first[key].jsonl);
			expect(second[key].seed).toBe(first[key].seed);
		}
	});

	test("matches the committed golden summary", () => {
		const actual = {
			foldEvery: FOLD_EVERY,
			largeSessionFolds: summary(first.folds),
			beforeCompactionCompactions: summary(first.compactions),
		};
		if (process.env.UPDATE_GOLDEN === "1") writeFileSync(GOLDEN, `${JSON.stringify(actual, null, "\t")}\n`);
		expect(existsSync(GOLDEN), `${GOLDEN} is missing; run with UPDATE_GOLDEN=1 to create it`).toBe(true);
		expect(actual).toEqual(JSON.parse(readFileSync(GOLDEN, "utf8")));
	});

	test("every record is valid and reads back unchanged", () => {
		for (const r of [first.folds, first.compactions, first.planted]) {
			const read = parseSeedIndex(r.jsonl);
			expect([read.invalid, read.truncatedTail]).toEqual([0, false]);
			expect(read.records.map((x) => `${serializeSeedRecord(x)}\n`).join("")).toBe(r.jsonl);
			expect(r.seed.length).toBeLessThanOrEqual(DEFAULT_SEED_MAX_CHARS);
		}
	});

	test("no secret survives into the index or the seed", () => {
		const p = first.planted;
		expect(p.records.reduce((n, r) => n + r.secrets, 0)).toBeGreaterThanOrEqual(Math.floor(373 / 25));
		for (const text of [p.jsonl, p.seed, first.folds.jsonl, first.compactions.jsonl]) {
			for (const value of PLANTED_VALUES) expect(text).not.toContain(value);
			expect(containsSecret(text)).toBe(false);
			// Independent of the redactor's own patterns: common key shapes, spelled out plainly.
			expect(text).not.toMatch(/\bsk-[A-Za-z0-9_-]{20,}|\bgh[pousr]_[A-Za-z0-9]{30,}|\bAKIA[A-Z0-9]{16}\b/);
			expect(text).not.toMatch(/-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]{20}/);
			expect(text).not.toMatch(/:\/\/[^\s/:@]+:[^\s/@[]+@/);
		}
	});
});
