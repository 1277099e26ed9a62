/**
 * How much the fuzz suite runs. The normal suite (`bun test`) runs CF_FUZZ_RUNS cases per property
 * (default 10,000) with small sizes; `npm run fuzz` raises the count and switches to large sizes.
 * fast-check prints the seed and the shrunk counterexample on failure; CF_FUZZ_SEED replays a seed.
 * Every property adds its case count to CF_FUZZ_REPORT (a JSON file), for docs/RELIABILITY.md.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import fc from "fast-check";

/** A positive whole count from the environment, or the default; anything else is a clear error. */
function count(name: string, fallback: number): number {
	const raw = process.env[name];
	if (raw === undefined || raw === "") return fallback;
	const n = Number(raw);
	if (!Number.isSafeInteger(n) || n < 1)
		throw new Error(`${name} must be a whole number of runs, at least 1 (got ${raw})`);
	return n;
}

export const RUNS = count("CF_FUZZ_RUNS", 10_000);
/** Random sessions are the expensive cases; `npm run fuzz` runs fewer of them, each much larger. */
export const SESSION_RUNS = count("CF_FUZZ_SESSION_RUNS", RUNS);
export const LARGE = process.env.CF_FUZZ_SCALE === "large";
/** Per-test timeout: generous, since `npm run fuzz` runs for minutes. */
export const TIMEOUT = 3_600_000;

export interface Sizes {
	/** Ops (growth, unfold, resume, …) per random session. */
	maxOps: number;
	/** Characters of an ordinary random tool output. */
	maxChars: number;
	/** Characters of a "huge" output (rare). */
	hugeChars: number;
	/** Nesting depth of JSON in tool output. */
	maxDepth: number;
}

export const SIZES: Sizes = LARGE
	? { maxOps: 60, maxChars: 24_000, hugeChars: 400_000, maxDepth: 400 }
	: { maxOps: 10, maxChars: 3_000, hugeChars: 12_000, maxDepth: 40 };

/** fast-check parameters for one property: the run count, a replayable seed, a verbose failure report. */
export function params<T>(runs: number = RUNS): fc.Parameters<T> {
	const seed = process.env.CF_FUZZ_SEED;
	return {
		numRuns: runs,
		verbose: 0,
		...(seed !== undefined && seed !== "" && { seed: Number(seed) }),
	};
}

/** Record the cases one property ran (and anything else worth counting) in CF_FUZZ_REPORT. */
export function report(property: string, counts: Record<string, number>): void {
	const path = process.env.CF_FUZZ_REPORT;
	if (!path) return;
	let all: Record<string, Record<string, number>> = {};
	if (existsSync(path)) {
		try {
			all = JSON.parse(readFileSync(path, "utf8"));
		} catch {
			all = {};
		}
	}
	const before = all[property] ?? {};
	for (const [k, v] of Object.entries(counts)) before[k] = (before[k] ?? 0) + v;
	all[property] = before;
	writeFileSync(path, `${JSON.stringify(all, null, 2)}\n`);
}

/**
 * fc.assert with a report that fits a terminal: the seed and path to replay (CF_FUZZ_SEED), the
 * property's own error message, and the shrunk counterexample cut to a readable length.
 */
export function check<Ts extends [unknown, ...unknown[]]>(
	property: fc.IProperty<Ts>,
	parameters: fc.Parameters<Ts>,
): void {
	const out = fc.check(property, parameters);
	if (!out.failed) return;
	const error = out.errorInstance instanceof Error ? out.errorInstance.message : String(out.errorInstance);
	const example = fc.stringify(out.counterexample);
	throw new Error(
		[
			`property failed after ${out.numRuns} case(s); replay with CF_FUZZ_SEED=${out.seed} (path ${out.counterexamplePath})`,
			`error: ${error}`,
			`counterexample (${example.length} chars): ${example.length > 3000 ? `${example.slice(0, 3000)}…` : example}`,
		].join("\n"),
	);
}
