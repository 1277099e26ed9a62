// `context-fold simulate` without folding against the harness's native Pi, on the recorded traces in
// the small windows where native Pi compacts most: simulate run the way the benchmark runs it
// (simulate-agreement.ts), compared with the native arm's totals in the per-request CSVs of the last
// full economics run (docs/bench/economics-*.csv; the native arm runs no extension, so a change of
// context-fold's rule does not move it). The harness bills each summary request native Pi sends when
// it compacts; so must simulate, or it comes out 5-7 % cheaper here.
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { REPO } from "../../e2e/cf.ts";
import { CSV_COLUMNS } from "./csv.ts";
import { SMALL_WINDOWS } from "./sessions.ts";
import { deviation, simulateTrace } from "./simulate-agreement.ts";
import { listRecordedTraces, loadTrace } from "./traces.ts";

/**
 * The harness's system prompt and tools as the benchmark passes them to simulate (`--overhead`):
 * chars/4 of what its Pi sent before the first message, the same for every session of the last run
 * (docs/BENCHMARKS.md, "`context-fold simulate` against this harness").
 */
const HARNESS_OVERHEAD = 1_291;
/** How far apart they may be. The target is 5 %; the last measurement was within 0.3 %. */
const TOLERANCE = 0.02;

interface NativeTotals {
	prompt: number;
	cost: number;
	compactions: number;
	summaries: number;
}

function nativeTotals(session: string, arm = "native"): NativeTotals & { folds: number } {
	const lines = readFileSync(join(REPO, "docs/bench", `economics-${session}.csv`), "utf8")
		.trim()
		.split("\n");
	expect(lines[0]).toBe(CSV_COLUMNS.join(","));
	const col = (name: (typeof CSV_COLUMNS)[number]) => CSV_COLUMNS.indexOf(name);
	const rows = lines
		.slice(1)
		.map((l) => l.split(","))
		.filter((r) => r[col("arm")] === arm);
	const sum = (name: (typeof CSV_COLUMNS)[number]) => rows.reduce((n, r) => n + Number(r[col(name)]), 0);
	return {
		prompt: sum("prompt_tokens"),
		cost: sum("cost_usd"),
		compactions: rows.filter((r) => r[col("compaction_before")] === "1").length,
		summaries: rows.filter((r) => r[col("kind")] === "summary").length,
		folds: rows.filter((r) => r[col("fold_event")] === "1").length,
	};
}

describe("simulate without folding against the harness's native Pi", () => {
	for (const source of listRecordedTraces().sources) {
		for (const window of SMALL_WINDOWS) {
			const name = `${source.name}-w${window / 1000}k`;
			test(`${name}: the same compactions and summary requests; prompt tokens and cost within ${TOLERANCE * 100} %`, () => {
				const harness = nativeTotals(name);
				const sim = simulateTrace({ ...loadTrace(source), name }, HARNESS_OVERHEAD, window).baseline;
				expect(harness.summaries).toBeGreaterThan(0);
				expect(sim.compactions).toBe(harness.compactions);
				expect(sim.summaries.requests).toBe(harness.summaries);
				expect(Math.abs(deviation(sim.prompt, harness.prompt))).toBeLessThan(TOLERANCE);
				expect(Math.abs(deviation(sim.cost, harness.cost))).toBeLessThan(TOLERANCE);
			});
		}
	}
});

// The folded arm against the harness's context-fold arm (defaults) on the same sessions: the context
// hovers near Pi's threshold there, so when Pi checks it (before a new prompt, without it) and what
// the extension does after an aborted run decide which compactions happen. The CSVs are the last
// economics run's: a change of the rule re-runs the benchmark, or this fails.
describe("simulate with folding against the harness's context-fold", () => {
	for (const source of listRecordedTraces().sources) {
		for (const window of SMALL_WINDOWS) {
			const name = `${source.name}-w${window / 1000}k`;
			test(`${name}: the same fold events; prompt tokens and cost within ${TOLERANCE * 100} %`, () => {
				const harness = nativeTotals(name, "cf-default");
				const sim = simulateTrace({ ...loadTrace(source), name }, HARNESS_OVERHEAD, window).folded;
				expect(harness.folds).toBeGreaterThan(0);
				expect(sim.foldEvents).toBe(harness.folds);
				expect(Math.abs(deviation(sim.prompt, harness.prompt))).toBeLessThan(TOLERANCE);
				expect(Math.abs(deviation(sim.cost, harness.cost))).toBeLessThan(TOLERANCE);
			});
		}
	}
});
