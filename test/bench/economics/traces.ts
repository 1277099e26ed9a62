/**
 * Which traces the benchmark replays: every recorded session vendored in test/fixtures/traces (the
 * .v3.jsonl migration where one exists, else the original; decompressed by test/helpers/traces.ts),
 * plus the generated session.
 */
import { readdirSync } from "node:fs";
import { join, relative } from "node:path";
import { REPO } from "../../e2e/cf.ts";
import { TRACE_FIXTURES, traceDir } from "../../helpers/traces.ts";
import { readTrace, type Trace } from "./trace-read.ts";

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

export function listRecordedTraces(dir = traceDir()): { sources: TraceSource[]; note: string } {
	const files = readdirSync(dir).filter((f) => f.endsWith(".jsonl"));
	const originals = files.filter((f) => !/\.v\d+\.jsonl$/.test(f)).sort();
	const sources = originals.map((f) => {
		const v3 = f.replace(/\.jsonl$/, ".v3.jsonl");
		const chosen = files.includes(v3) ? v3 : f;
		return { name: shortName(f), path: join(dir, chosen) };
	});
	const from = relative(REPO, TRACE_FIXTURES);
	return {
		sources,
		note: `${sources.length} recorded traces from ${from} (gzip; each sha256 below is of the decompressed session).`,
	};
}

export function loadTrace(source: TraceSource): Trace {
	return readTrace(source.path, source.name);
}
