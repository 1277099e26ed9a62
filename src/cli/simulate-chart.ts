/**
 * The chart of a simulation, once as data and once as plain text: prompt tokens per request without
 * and with folding, fold events and compactions marked, the budget and the fold-at threshold. The
 * --html page draws the same data (simulate-html.ts), so both charts show the same series, scale and
 * marks. The text chart is ASCII, needs no colour and fits 80 columns.
 */
import { formatTokens } from "../core/tokens.ts";
import type { SimulatedSession } from "./simulate-report.ts";

export type MarkKind = "fold" | "compaction" | "arm-compaction";

/** As the request table says it (simulate-report.ts events). */
export const MARK_WORDS: Record<MarkKind, string> = {
	fold: "fold event",
	compaction: "compaction (recorded)",
	"arm-compaction": "compaction (folded arm)",
};

export interface ChartMark {
	/** 0-based request index. */
	index: number;
	kind: MarkKind;
	/** The words the request table uses for the event. */
	label: string;
}

export interface ChartData {
	requests: number;
	/** Top of the scale: a round number above every value drawn. */
	max: number;
	budget: number | null;
	threshold: number | null;
	/** Per request; null where a request has no value (no bill, or no usage reported). */
	baseline: Array<number | null>;
	folded: Array<number | null>;
	reported: Array<number | null>;
	marks: ChartMark[];
}

export function chartData(s: SimulatedSession): ChartData {
	const rows = s.simulation.rows;
	const budget = rows.find((r) => r.request.budget !== null)?.request.budget ?? null;
	const threshold = rows.at(-1)?.request.threshold ?? null;
	const baseline = rows.map((r) => r.baseline?.prompt ?? null);
	const folded = rows.map((r) => r.folded?.prompt ?? null);
	const reported = rows.map((r) => (r.request.billed ? r.request.reported : null));
	let max = budget ?? 0;
	for (const v of [...baseline, ...folded, ...reported]) max = Math.max(max, v ?? 0);
	const marks: ChartMark[] = [];
	rows.forEach((r, index) => {
		if (r.request.compacted) marks.push({ index, kind: "compaction", label: MARK_WORDS.compaction });
		if (r.request.armCompacted) marks.push({ index, kind: "arm-compaction", label: MARK_WORDS["arm-compaction"] });
		if (r.request.fold !== null) marks.push({ index, kind: "fold", label: `fold #${r.request.fold.seq}` });
	});
	return { requests: rows.length, max: niceCeil(max * 1.05), budget, threshold, baseline, folded, reported, marks };
}

/** A round number at or above v: 1, 1.5, 2, 2.5, 3, 4, 5, 6 or 8 times a power of ten. */
export function niceCeil(v: number): number {
	if (v <= 0) return 1;
	const p = 10 ** Math.floor(Math.log10(v));
	for (const m of [1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10]) if (m * p >= v) return m * p;
	return 10 * p;
}

const HEIGHT = 10;
const MAX_COLUMNS = 56;
const LABEL = 6;
const MARK_CHAR: Record<MarkKind, string> = { fold: "F", compaction: "c", "arm-compaction": "C" };
/** Where marks share a column, the rarer event shows. */
const MARK_RANK: Record<MarkKind, number> = { fold: 0, compaction: 1, "arm-compaction": 2 };

/**
 * The chart as text. Each column is one request or an equal run of requests (showing their largest
 * prompt); each row a tenth of the scale. `.` is a prompt without folding, `*` with folding, `#`
 * where both fall in the same cell. Below the axis: F a fold event, c a compaction in the recording,
 * C a compaction with folding.
 */
export function renderTextChart(s: SimulatedSession): string {
	const d = chartData(s);
	const n = d.requests;
	if (n === 0) return "  (no requests to chart)";
	const width = Math.min(n, MAX_COLUMNS);
	const from = (c: number) => Math.floor((c * n) / width);
	const peak = (values: ReadonlyArray<number | null>, c: number) => {
		let m: number | null = null;
		for (let i = from(c); i < from(c + 1); i++) {
			const v = values[i];
			if (v !== null && v !== undefined && (m === null || v > m)) m = v;
		}
		return m;
	};
	const level = (v: number) => Math.min(HEIGHT, Math.max(1, Math.ceil((v / d.max) * HEIGHT)));
	const grid: string[][] = Array.from({ length: HEIGHT + 1 }, () => new Array<string>(width).fill(" "));
	const lineRow = (v: number | null) => (v === null || v <= 0 ? null : level(v));
	const lines = [
		{ row: lineRow(d.threshold), label: "fold-at" },
		{ row: lineRow(d.budget), label: "budget" },
	];
	for (const l of lines) if (l.row !== null) (grid[l.row] as string[]).fill("-");
	for (let c = 0; c < width; c++) {
		const b = peak(d.baseline, c);
		const f = peak(d.folded, c);
		const bl = b === null ? null : level(b);
		const fl = f === null ? null : level(f);
		if (bl !== null) (grid[bl] as string[])[c] = ".";
		if (fl !== null) (grid[fl] as string[])[c] = fl === bl ? "#" : "*";
	}
	const marks = new Array<string>(width).fill(" ");
	const rank = new Array<number>(width).fill(-1);
	for (const m of d.marks) {
		const c = Math.min(width - 1, Math.floor((m.index * width) / n));
		if (MARK_RANK[m.kind] > (rank[c] ?? -1)) {
			rank[c] = MARK_RANK[m.kind];
			marks[c] = MARK_CHAR[m.kind];
		}
	}
	const out = [`  context per request (prompt tokens): . without folding, * with folding, # both`];
	for (let k = HEIGHT; k >= 1; k--) {
		const tick = k === HEIGHT ? formatTokens(d.max) : k === HEIGHT / 2 ? formatTokens(d.max / 2) : "";
		const label = lines
			.filter((l) => l.row === k)
			.map((l) => l.label)
			.join(", ");
		out.push(`${tick.padStart(LABEL)} |${(grid[k] as string[]).join("")}${label === "" ? "" : ` ${label}`}`.trimEnd());
	}
	out.push(`${"0".padStart(LABEL)} +${"-".repeat(width)}`);
	const pad = " ".repeat(LABEL + 2);
	if (d.marks.length > 0) out.push(`${pad}${marks.join("")}`.trimEnd());
	const last = String(n);
	out.push(`${pad}${n === 1 ? "1" : width >= last.length + 2 ? `1${last.padStart(width - 1)}` : `1 ${last}`}`);
	const per = n > width ? ` (${(n / width).toFixed(1)} per column, the largest shown)` : "";
	out.push(`${pad}request${per}`);
	const seen = new Set(d.marks.map((m) => m.kind));
	const legend = (["fold", "compaction", "arm-compaction"] as const)
		.filter((k) => seen.has(k))
		.map((k) => `${MARK_CHAR[k]} ${MARK_WORDS[k]}`);
	if (legend.length > 0) out.push(`${pad}${legend.join(", ")}`);
	const levels = [
		d.budget === null ? "" : `budget ${formatTokens(d.budget)}`,
		d.threshold === null ? "" : `fold-at ${formatTokens(d.threshold)}`,
	].filter((w) => w !== "");
	if (levels.length > 0) out.push(`${pad}lines: ${levels.join(", ")}`);
	return out.join("\n");
}
