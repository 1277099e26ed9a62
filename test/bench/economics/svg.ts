/**
 * The chart: prompt tokens per turn request for each arm, with context-fold's fold events (dots on
 * its line) and compactions (triangles above the plot, one row per arm), against the budget, Pi's
 * compaction threshold and the window. Plain SVG, no dependencies, deterministic output.
 */
import type { RequestRow } from "./metrics.ts";

export interface ChartSeries {
	id: string;
	label: string;
	color: string;
	dashed?: boolean;
	/** Fold events as hollow dots (a series drawn under another with the same events). */
	hollow?: boolean;
	rows: readonly RequestRow[];
}

export interface ChartLines {
	budget: number;
	threshold: number;
	window: number;
}

const W = 1120;
const H = 460;
const M = { left: 70, right: 270, top: 66, bottom: 44 };

export function promptChart(title: string, series: readonly ChartSeries[], lines: ChartLines): string {
	const turns = series.map((s) => s.rows.filter((r) => r.kind !== "summary"));
	const maxK = Math.max(1, ...turns.flatMap((rows) => rows.map((r) => r.k)));
	const peak = Math.max(lines.window, ...turns.flatMap((rows) => rows.map((r) => r.prompt)));
	const yMax = Math.ceil(peak / 50_000) * 50_000;
	const plotW = W - M.left - M.right;
	const plotH = H - M.top - M.bottom;
	const x = (k: number) => M.left + (k / maxK) * plotW;
	const y = (v: number) => M.top + plotH - (v / yMax) * plotH;
	const out: string[] = [
		`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">`,
		`<rect width="${W}" height="${H}" fill="#fff"/>`,
		`<text x="${M.left}" y="20" font-size="15" font-weight="bold">${esc(title)}</text>`,
	];
	for (let v = 0; v <= yMax; v += 50_000) {
		out.push(
			`<line x1="${M.left}" x2="${M.left + plotW}" y1="${f(y(v))}" y2="${f(y(v))}" stroke="#eee"/>`,
			`<text x="${M.left - 6}" y="${f(y(v) + 4)}" text-anchor="end" fill="#555">${v / 1000}k</text>`,
		);
	}
	const step = niceStep(maxK);
	for (let k = 0; k <= maxK; k += step) {
		out.push(`<text x="${f(x(k))}" y="${H - M.bottom + 16}" text-anchor="middle" fill="#555">${k}</text>`);
	}
	out.push(
		`<text x="${M.left + plotW / 2}" y="${H - 8}" text-anchor="middle" fill="#333">turn request (same trajectory in every arm)</text>`,
		`<text transform="translate(16 ${M.top + plotH / 2}) rotate(-90)" text-anchor="middle" fill="#333">prompt tokens</text>`,
		`<rect x="${M.left}" y="${M.top}" width="${plotW}" height="${plotH}" fill="none" stroke="#999"/>`,
	);
	const refs: Array<[number, string, string]> = [
		[lines.window, "#777", "window"],
		[lines.threshold, "#d62728", "Pi compacts above"],
		[lines.budget, "#1f77b4", "context-fold budget"],
	];
	for (const [v, color, label] of refs) {
		out.push(
			`<line x1="${M.left}" x2="${M.left + plotW}" y1="${f(y(v))}" y2="${f(y(v))}" stroke="${color}" stroke-dasharray="2 4" stroke-opacity="0.7"/>`,
			`<text x="${M.left + 4}" y="${f(y(v) - 3)}" fill="${color}" font-size="10">${esc(label)} ${Math.round(v / 100) / 10}k</text>`,
		);
	}
	series.forEach((s, i) => {
		const rows = turns[i] ?? [];
		const points = rows.map((r) => `${f(x(r.k))},${f(y(r.prompt))}`).join(" ");
		out.push(
			`<polyline fill="none" stroke="${s.color}" stroke-width="1.4"${s.dashed ? ' stroke-dasharray="5 3"' : ""} points="${points}"/>`,
		);
		for (const r of rows) {
			if (!r.foldEvent) continue;
			const fill = s.hollow ? `fill="none" stroke="${s.color}"` : `fill="${s.color}"`;
			out.push(`<circle cx="${f(x(r.k))}" cy="${f(y(r.prompt))}" r="${s.hollow ? 4.5 : 3}" ${fill}/>`);
		}
		const rowY = M.top - 6 - 8 * compactionRow(series, i);
		for (const r of rows) {
			if (!r.compactionBefore) continue;
			const cx = x(r.k);
			out.push(
				`<line x1="${f(cx)}" x2="${f(cx)}" y1="${M.top}" y2="${M.top + plotH}" stroke="${s.color}" stroke-opacity="0.35" stroke-dasharray="1 3"/>`,
				`<path d="M${f(cx - 5)},${f(rowY - 6)} L${f(cx + 5)},${f(rowY - 6)} L${f(cx)},${f(rowY + 2)} Z" fill="${s.color}"/>`,
			);
		}
		const ly = M.top + 10 + i * 20;
		const lx = W - M.right + 16;
		out.push(
			`<line x1="${lx}" x2="${lx + 24}" y1="${ly}" y2="${ly}" stroke="${s.color}" stroke-width="2"${s.dashed ? ' stroke-dasharray="5 3"' : ""}/>`,
			`<text x="${lx + 30}" y="${ly + 4}">${esc(s.label)}</text>`,
		);
	});
	const ly = M.top + 10 + series.length * 20 + 10;
	const lx = W - M.right + 16;
	out.push(
		`<circle cx="${lx + 12}" cy="${ly}" r="3" fill="#333"/>`,
		`<text x="${lx + 30}" y="${ly + 4}">fold event</text>`,
		`<path d="M${lx + 7},${ly + 14} L${lx + 17},${ly + 14} L${lx + 12},${ly + 22} Z" fill="#333"/>`,
		`<text x="${lx + 30}" y="${ly + 22}">compaction (above the plot)</text>`,
		"</svg>",
	);
	return `${out.join("\n")}\n`;
}

/** Each series with compactions gets its own row of triangles above the plot, so they never hide each other. */
function compactionRow(series: readonly ChartSeries[], index: number): number {
	let row = 0;
	for (let i = 0; i < index; i++) if (series[i]?.rows.some((r) => r.compactionBefore)) row++;
	return row;
}

function niceStep(max: number): number {
	for (const s of [10, 20, 25, 50, 100, 200, 250, 500, 1000]) if (max / s <= 12) return s;
	return 2000;
}

function f(n: number): string {
	return (Math.round(n * 10) / 10).toString();
}

function esc(s: string): string {
	return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}
