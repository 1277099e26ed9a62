/**
 * The recorded Pi sessions vendored in test/fixtures/traces (gzip-compressed; origin and MIT licence
 * in that directory's README and LICENSE). Every test, benchmark and script reads them through here.
 * `traceDir()` decompresses all of them, once per process, into a private temporary directory that
 * is removed at the end (test/setup.ts after a test run, an exit handler otherwise): a real file path
 * for code that needs one (the built CLI, Pi's session layout, a benchmark that times reading the
 * file).
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { gunzipSync } from "node:zlib";

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
