/**
 * The recorded Pi sessions vendored in test/fixtures/traces (gzip-compressed; origin and MIT licence
 * in that directory's README and LICENSE). Every test, benchmark and script reads them through here.
 * `traceDir()` decompresses all of them, once per process, into a private temporary directory that
 * is removed at the end (test/setup.ts after a test run, an exit handler otherwise): a real file path
 * for code that needs one (the built CLI, Pi's session layout, a benchmark that times reading the
 * file). Also a copy of a trace carrying the fold records the extension would have written. Shared by
 * the core tests of session reading and replay, the CLI tests and the benchmarks.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { gunzipSync } from "node:zlib";
import { parseSessionText } from "../../src/core/session/entries.ts";
import type { PiEntry } from "../../src/core/session/view.ts";
import { DEFAULT_SETTINGS } from "../../src/core/settings.ts";
import { replaySession } from "../../src/core/simulate/replay.ts";
import { sha256 } from "../../src/store/hash.ts";
import { parseIsoTime } from "../../src/store/session-file.ts";

const REPO = join(import.meta.dir, "../..");
export const TRACE_FIXTURES = join(REPO, "test/fixtures/traces");

/** The decompressed file names: the format-1 originals and their format-3 migrations. */
export const TRACE_FILES = {
	largeV1: "pi__pi-mono__large-session.jsonl",
	largeV3: "pi__pi-mono__large-session.v3.jsonl",
	compactV1: "pi__pi-mono__before-compaction.jsonl",
	compactV3: "pi__pi-mono__before-compaction.v3.jsonl",
} as const;

let decompressed: string | undefined;

/** Removes the decompressed copies (the test preload calls this after the run; scripts on exit). */
export function removeTraceDir(): void {
	if (decompressed !== undefined) rmSync(decompressed, { recursive: true, force: true });
	decompressed = undefined;
}

/** The directory holding every vendored trace, decompressed (created on the first call). */
export function traceDir(): string {
	if (decompressed !== undefined) return decompressed;
	const dir = mkdtempSync(join(tmpdir(), "cf-traces-"));
	process.once("exit", removeTraceDir);
	const archives = readdirSync(TRACE_FIXTURES).filter((f) => f.endsWith(".jsonl.gz"));
	if (archives.length !== Object.keys(TRACE_FILES).length) {
		throw new Error(`${TRACE_FIXTURES} holds ${archives.length} traces, expected ${Object.keys(TRACE_FILES).length}`);
	}
	for (const gz of archives)
		writeFileSync(join(dir, gz.slice(0, -".gz".length)), gunzipSync(readFileSync(join(TRACE_FIXTURES, gz))));
	decompressed = dir;
	return dir;
}

/** The decompressed path of one trace, e.g. `tracePath(TRACE_FILES.largeV3)`. */
export function tracePath(file: string): string {
	return join(traceDir(), file);
}

/** The repository-relative fixture a decompressed trace came from, for reports and docs. */
export function traceFixture(path: string): string {
	const file = path.slice(path.lastIndexOf("/") + 1);
	return relative(REPO, join(TRACE_FIXTURES, `${file}.gz`));
}

export const TRACE = {
	largeV1: tracePath(TRACE_FILES.largeV1),
	largeV3: tracePath(TRACE_FILES.largeV3),
	compactV1: tracePath(TRACE_FILES.compactV1),
	compactV3: tracePath(TRACE_FILES.compactV3),
} as const;

/**
 * A trace as if it had been recorded with context-fold: the replay's layers written as the custom
 * entries the extension appends, each just before the response to the request that committed it
 * (where Pi puts an entry appended from the context hook), and every reported prompt made smaller by
 * what the folds took out of it. v2/v3 traces only (they have ids).
 */
export function withFoldRecords(source: string, dest: string): { layers: number; blocks: number } {
	const text = readFileSync(source, "utf8");
	const parsed = parseSessionText(text);
	const replay = replaySession({
		entries: parsed.entries,
		settings: DEFAULT_SETTINGS,
		windowFor: () => 200_000,
		hash: sha256,
		parseTime: parseIsoTime,
		// The written file keeps the trace's compactions, so its folds are planned against those.
		compaction: "recorded",
	});
	const byResponse = new Map<string, (typeof replay.layers)[number]>();
	const masked = new Map<string, number>();
	let n = 0;
	for (const r of replay.requests) {
		if (r.fold !== null) byResponse.set(r.entryId, replay.layers[n++] as (typeof replay.layers)[number]);
		masked.set(r.entryId, r.maskedTokens);
	}
	const lines = text.split("\n").filter((l) => l.trim() !== "");
	const out: string[] = [lines[0] as string];
	let blocks = 0;
	for (const line of lines.slice(1)) {
		const entry = JSON.parse(line) as PiEntry;
		const layer = byResponse.get(entry.id);
		if (layer !== undefined) {
			const id = `cf${String(layer.seq).padStart(6, "0")}`;
			out.push(
				JSON.stringify({
					type: "custom",
					customType: "context-fold",
					data: layer,
					id,
					parentId: entry.parentId,
					timestamp: entry.timestamp,
				}),
			);
			entry.parentId = id;
			blocks += layer.blocks.length;
		}
		// The provider would have reported a prompt smaller by what the folds took out.
		const usage = entry.message?.usage;
		let cut = masked.get(entry.id) ?? 0;
		if (usage !== undefined && cut > 0) {
			for (const field of ["cacheRead", "cacheWrite", "input"] as const) {
				const take = Math.min(cut, usage[field] ?? 0);
				usage[field] = (usage[field] ?? 0) - take;
				cut -= take;
			}
		}
		out.push(JSON.stringify(entry));
	}
	writeFileSync(dest, `${out.join("\n")}\n`);
	return { layers: byResponse.size, blocks };
}
