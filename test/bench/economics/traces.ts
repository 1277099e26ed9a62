/**
 * Which traces the benchmark replays: every session in ../shared/traces/ (relative to the repo; the
 * .v3.jsonl migration where one exists, else the original), plus the generated session. The recorded
 * traces are read in place and never copied into the repository.
 */
import { existsSync, readdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { REPO } from "../../e2e/cf.ts";
import { readTrace, type Trace } from "./trace-read.ts";

export const SHARED_TRACES = resolve(REPO, "../shared/traces");

export interface TraceSource {
	/** Short name used in tables and file names. */
	name: string;
	path: string;
}

/** Short, stable names: the file name without its owner prefix and extensions. */
export function shortName(file: string): string {
	return file
		.replace(/\.v\d+\.jsonl$|\.jsonl$/, "")
		.replace(/^.*__/, "")
		.replace(/[^A-Za-z0-9-]+/g, "-");
}

export function listSharedTraces(dir = SHARED_TRACES): { sources: TraceSource[]; note: string } {
	if (!existsSync(dir)) {
		return { sources: [], note: `${dir} is absent: only the generated session is replayed.` };
	}
	const files = readdirSync(dir).filter((f) => f.endsWith(".jsonl"));
	const originals = files.filter((f) => !/\.v\d+\.jsonl$/.test(f)).sort();
	const sources = originals.map((f) => {
		const v3 = f.replace(/\.jsonl$/, ".v3.jsonl");
		const chosen = files.includes(v3) ? v3 : f;
		return { name: shortName(f), path: join(dir, chosen) };
	});
	return { sources, note: `${sources.length} recorded traces from ${dir}.` };
}

export function loadTrace(source: TraceSource): Trace {
	return readTrace(source.path, source.name);
}
