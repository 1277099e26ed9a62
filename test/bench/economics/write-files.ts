/**
 * Writes one trace's per-request CSV (every arm, the floor included) and its chart under docs/bench/
 * (generated files, committed). The chart draws the headline arms, the reference and the floor; the
 * sweep arms would only hide them, and are in the CSV and the report's tables.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { requestsCsv } from "./csv.ts";
import type { ArmResult } from "./metrics.ts";
import { type ChartLines, type ChartSeries, promptChart } from "./svg.ts";

const STYLE: Record<string, Omit<ChartSeries, "id" | "rows">> = {
	raw: { label: "no extension, no compaction", color: "#9a9a9a", dashed: true },
	native: { label: "Pi native compaction", color: "#d62728" },
	floor: { label: "floor (computed)", color: "#111111" },
	"cf-compact-native": { label: "context-fold, COMPACT=native", color: "#2ca02c", dashed: true, hollow: true },
	"cf-default": { label: "context-fold defaults", color: "#1f77b4" },
};
/** Drawing order: references first, context-fold's defaults last (on top). */
const ORDER = Object.keys(STYLE);

export function writeTraceFiles(
	dir: string,
	trace: string,
	arms: ReadonlyArray<{ id: string; result: ArmResult }>,
	lines: ChartLines,
): { csv: string; svg: string } {
	const shown = arms.filter((a) => STYLE[a.id] !== undefined).sort((a, b) => ORDER.indexOf(a.id) - ORDER.indexOf(b.id));
	const csv = join(dir, `economics-${trace}.csv`);
	const svg = join(dir, `economics-${trace}.svg`);
	writeFileSync(csv, requestsCsv(arms.flatMap((a) => a.result.rows)));
	const series = shown.map((a) => ({
		id: a.id,
		rows: a.result.rows,
		...(STYLE[a.id] as Omit<ChartSeries, "id" | "rows">),
	}));
	writeFileSync(svg, promptChart(`${trace}: prompt tokens per request`, series, lines));
	return { csv, svg };
}
