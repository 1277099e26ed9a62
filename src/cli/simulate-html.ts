/**
 * The --html page of `simulate`: one self-contained file (no scripts, no network), with a chart of
 * context size over the session per session replayed: prompt tokens without and with folding, the
 * recorded prompt, fold events and compactions marked, the budget and the entry threshold drawn.
 * Deterministic: the same simulation renders the same bytes.
 */
import { groupDigits } from "../core/tokens.ts";
import { chartData, type MarkKind } from "./simulate-chart.ts";
import { impossibleWords, renderSummary, type SimulatedSession, type SimulateOptions } from "./simulate-report.ts";

const W = 960;
const H = 340;
const PAD = { left: 70, right: 20, top: 20, bottom: 40 };

export function renderSimulationHtml(
	sessions: readonly SimulatedSession[],
	o: SimulateOptions,
	version: string,
): string {
	const body = sessions
		.map(
			(s) =>
				`<section>\n<h2>${esc(s.id ?? s.path)}</h2>\n${warning(s)}${renderChart(s)}\n<pre>${esc(renderSummary(s, o))}</pre>\n</section>`,
		)
		.join("\n");
	return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>context-fold simulate</title>
<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 24px; color: #222; }
pre { font: 12px/1.35 ui-monospace, monospace; background: #f6f6f6; padding: 12px; overflow-x: auto; }
svg text { font: 11px system-ui, sans-serif; fill: #444; }
.legend span { display: inline-block; margin-right: 16px; }
.warning { background: #fff8c5; border: 1px solid #d4a72c; padding: 8px 12px; }
.legend i { display: inline-block; width: 18px; height: 3px; vertical-align: middle; margin-right: 6px; }
</style>
</head>
<body>
<h1>context-fold simulate</h1>
<p>Replay of recorded Pi sessions through the fold ladder (context-fold ${esc(version)}), offline. Prices: ${o.price === "per-model" ? "each request's model (listed under each chart)" : `${esc(o.price)} preset (--price)`}, cache lifetime ${esc(o.ttl)}. Token counts are characters/4 estimates.</p>
<p class="legend"><span><i style="background:#999"></i>prompt without folding</span><span><i style="background:#1f6feb"></i>prompt with folding</span><span><i style="background:#bbb;height:1px;border-top:1px dotted #555"></i>reported by the provider</span><span><i style="background:${MARK_COLOR.fold}"></i>fold event</span><span><i style="background:${MARK_COLOR.compaction}"></i>compaction (recorded)</span><span><i style="background:${MARK_COLOR["arm-compaction"]}"></i>compaction (folded arm)</span><span><i style="background:#cf222e"></i>budget</span><span><i style="background:#d4a72c"></i>fold-at threshold</span></p>
${body}
</body>
</html>
`;
}

export function renderChart(s: SimulatedSession): string {
	const d = chartData(s);
	const n = Math.max(1, d.requests);
	const max = d.max;
	const x = (i: number) => PAD.left + ((W - PAD.left - PAD.right) * i) / Math.max(1, n - 1);
	const y = (v: number) => H - PAD.bottom - ((H - PAD.top - PAD.bottom) * v) / max;
	const line = (values: ReadonlyArray<number | null>, attrs: string) => {
		const pts: string[] = [];
		values.forEach((v, i) => {
			if (v !== null) pts.push(`${x(i).toFixed(1)},${y(v).toFixed(1)}`);
		});
		return pts.length === 0 ? "" : `<polyline fill="none" ${attrs} points="${pts.join(" ")}"/>`;
	};
	const parts: string[] = [];
	for (let k = 0; k <= 4; k++) {
		const v = (max * k) / 4;
		parts.push(
			`<line x1="${PAD.left}" x2="${W - PAD.right}" y1="${y(v).toFixed(1)}" y2="${y(v).toFixed(1)}" stroke="#eee"/>`,
			`<text x="${PAD.left - 6}" y="${(y(v) + 4).toFixed(1)}" text-anchor="end">${esc(groupDigits(v))}</text>`,
		);
	}
	parts.push(
		`<text x="${PAD.left}" y="${H - 8}">request 1</text>`,
		`<text x="${W - PAD.right}" y="${H - 8}" text-anchor="end">request ${n}</text>`,
	);
	if (d.budget !== null) parts.push(hline(y(d.budget), "#cf222e", `budget ${groupDigits(d.budget)}`));
	if (d.threshold !== null) parts.push(hline(y(d.threshold), "#d4a72c", `fold-at ${groupDigits(d.threshold)}`));
	for (const m of d.marks) parts.push(vline(x(m.index), MARK_COLOR[m.kind], m.label));
	parts.push(
		line(d.reported, `stroke="#555" stroke-width="1" stroke-dasharray="2 3"`),
		line(d.baseline, `stroke="#999" stroke-width="2"`),
		line(d.folded, `stroke="#1f6feb" stroke-width="2"`),
	);
	return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" role="img" aria-label="prompt tokens per request">\n${parts.filter((p) => p !== "").join("\n")}\n</svg>`;
}

const MARK_COLOR: Record<MarkKind, string> = { fold: "#2da44e", compaction: "#8250df", "arm-compaction": "#bf3989" };

function warning(s: SimulatedSession): string {
	const b = s.simulation.summary.impossibleBaseline;
	return b === null ? "" : `<p class="warning"><strong>Warning:</strong> ${esc(impossibleWords(b))}</p>\n`;
}

function hline(yy: number, color: string, label: string): string {
	return `<line x1="${PAD.left}" x2="${W - PAD.right}" y1="${yy.toFixed(1)}" y2="${yy.toFixed(1)}" stroke="${color}" stroke-dasharray="6 4"/><text x="${W - PAD.right - 4}" y="${(yy - 4).toFixed(1)}" text-anchor="end">${esc(label)}</text>`;
}

function vline(xx: number, color: string, label: string): string {
	return `<line x1="${xx.toFixed(1)}" x2="${xx.toFixed(1)}" y1="${PAD.top}" y2="${H - PAD.bottom}" stroke="${color}" stroke-opacity="0.7"><title>${esc(label)}</title></line>`;
}

function esc(s: string): string {
	return s.replace(/[&<>"]/g, (c) => (c === "&" ? "&amp;" : c === "<" ? "&lt;" : c === ">" ? "&gt;" : "&quot;"));
}
