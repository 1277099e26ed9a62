/**
 * The demo's report, as plain text for a terminal. Pure: numbers in, lines out.
 */
import { RECALL_TOOLS_TOKENS } from "../../src/core/recall-tools.ts";
import type { Check, RawCheck, RecallCheck } from "./checks.ts";
import { type Column, type FoldEvent, PRICES, type Totals } from "./measure.ts";

export interface Report {
	pi: string;
	node: string;
	window: number;
	settings: { budget: number; tail: number };
	session: { seed: string; prompts: number; toolCalls: Record<string, number>; recallCalls: number; turns: number };
	columns: Column[];
	/** Column index where each user prompt starts. */
	promptStarts: number[];
	labels: Map<string, string>;
	with: Totals;
	without: Totals;
	events: FoldEvent[];
	recall: RecallCheck;
	raw: RawCheck;
	footer: { last: string | undefined; count: number };
	checks: Check[];
	notices: string[];
	/** Extra prompt tokens of the first request with context-fold (its tool definitions). */
	overhead: number;
	/** Pi compaction (summary) requests per run. */
	compactions: { with: number; without: number };
	ms: { wall: number; with: number; without: number };
}

export function tok(n: number): string {
	if (n >= 1_000_000) return `${(n / 1_000_000).toFixed(2)}M`;
	if (n >= 10_000) return `${Math.round(n / 1000)}k`;
	if (n >= 1000) return `${(n / 1000).toFixed(1)}k`;
	return String(Math.round(n));
}

function usd(n: number): string {
	return `$${n.toFixed(2)}`;
}

function ratio(a: number, b: number): string {
	return b > 0 ? (a / b).toFixed(2) : "n/a";
}

function pct(f: number): string {
	return `${Math.round(f * 100)}%`;
}

/** Prompt tokens per request as a bar chart: █ with context-fold, ░ the extra the same turn cost without it. */
export function chart(columns: readonly Column[], promptStarts: readonly number[], rows = 8): string[] {
	const peak = Math.max(...columns.map((c) => Math.max(c.with ?? 0, c.without ?? 0)));
	const unit = Math.ceil(peak / rows / 10_000) * 10_000;
	const out: string[] = [];
	for (let r = rows - 1; r >= 0; r--) {
		const mid = r * unit + unit / 2;
		const cells = columns.map((c) => ((c.with ?? 0) >= mid ? "█" : (c.without ?? 0) >= mid ? "░" : " "));
		out.push(`${tok((r + 1) * unit).padStart(6)} ┤${cells.join("")}`);
	}
	out.push(`${"0".padStart(6)} └${"─".repeat(columns.length)}`);
	const marks = columns.map((c, i) =>
		c.fold !== undefined ? String(c.fold % 10) : promptStarts.includes(i) ? "u" : " ",
	);
	out.push(`${" ".repeat(8)}${marks.join("")}`);
	return out;
}

function table(header: string[], rows: string[][], align: Array<"l" | "r">): string[] {
	const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
	const fmt = (cells: string[]) =>
		`  ${cells.map((c, i) => (align[i] === "r" ? c.padStart(widths[i] ?? 0) : c.padEnd(widths[i] ?? 0))).join("  ")}`.trimEnd();
	return [fmt(header), ...rows.map(fmt)];
}

function requestRows(r: Report): string[] {
	const rows: string[][] = [];
	r.columns.forEach((c, i) => {
		const last = i === r.columns.length - 1;
		if (!(i === 0 || (i + 1) % 10 === 0 || c.fold !== undefined || last || r.promptStarts.includes(i))) return;
		const saved = c.with !== undefined && c.without !== undefined ? tok(c.without - c.with) : "";
		const note = c.fold !== undefined ? `fold #${c.fold}` : r.promptStarts.includes(i) ? "user prompt" : "";
		const label = r.labels.get(c.turn) ?? "";
		rows.push([
			String(i + 1),
			label.length > 46 ? `${label.slice(0, 45)}…` : label,
			c.with !== undefined ? tok(c.with) : "-",
			c.without !== undefined ? tok(c.without) : "-",
			saved,
			note,
		]);
	});
	return table(["req", "turn", "with", "without", "saved", ""], rows, ["r", "l", "r", "r", "r", "l"]);
}

function totalsRows(r: Report): string[] {
	const w = r.with;
	const o = r.without;
	const row = (name: string, a: string, b: string, q = "") => [name, a, b, q];
	const masked = r.events.reduce((n, e) => n + e.usageBefore - e.usageAfter, 0);
	return table(
		["", "with context-fold", "without", "ratio"],
		[
			row("requests", String(w.requests), String(o.requests)),
			row("prompt tokens sent", tok(w.prompt), tok(o.prompt), ratio(w.prompt, o.prompt)),
			row("  cache read", tok(w.cacheRead), tok(o.cacheRead), ratio(w.cacheRead, o.cacheRead)),
			row("  cache write", tok(w.cacheWrite), tok(o.cacheWrite), ratio(w.cacheWrite, o.cacheWrite)),
			row("  uncached input", tok(w.input), tok(o.input)),
			row("output tokens", tok(w.output), tok(o.output)),
			row("peak prompt", tok(w.peak), tok(o.peak), ratio(w.peak, o.peak)),
			row("cache hit (read/prompt)", pct(w.cacheRead / w.prompt), pct(o.cacheRead / o.prompt)),
			row("est. cost", usd(w.cost.total), usd(o.cost.total), ratio(w.cost.total, o.cost.total)),
			row("  cache read", usd(w.cost.cacheRead), usd(o.cost.cacheRead)),
			row("  cache write", usd(w.cost.cacheWrite), usd(o.cost.cacheWrite)),
			row("  input + output", usd(w.cost.input + w.cost.output), usd(o.cost.input + o.cost.output)),
			row("fold events", String(r.events.length), "0"),
			row("tokens masked at fold time", tok(masked), "-"),
		],
		["l", "r", "r", "r"],
	);
}

function foldRows(r: Report): string[] {
	return table(
		["#", "req", "reason", "blocks", "usage before → after", "prompt on the wire", "re-prefill (cache write)"],
		r.events.map((e) => [
			String(e.seq),
			String(e.request),
			e.reason,
			String(e.blocks.length),
			`${tok(e.usageBefore)} → ${tok(e.usageAfter)}`,
			`${tok(e.promptBefore)} → ${tok(e.promptAfter)}`,
			tok(e.cacheWrite),
		]),
		["r", "r", "l", "r", "r", "r", "r"],
	);
}

export function renderReport(r: Report): string {
	const s = r.settings;
	const calls = Object.entries(r.session.toolCalls)
		.map(([name, n]) => `${name} ${n}`)
		.join(", ");
	const total = Object.values(r.session.toolCalls).reduce((a, b) => a + b, 0);
	const shown = (line: string) => line.replace(/\t/g, "\\t");
	const ok = r.checks.every((c) => c.ok);
	const lines = [
		"context-fold demo: one generated coding session, played twice through real Pi, offline",
		"=".repeat(88),
		"",
		`Pi            ${r.pi} in RPC mode on Node ${r.node}; the model is the test harness's fake OpenAI-compatible`,
		"              endpoint on 127.0.0.1 (scripted replies, no network, no API key)",
		"context-fold  dist/index.js from this checkout, loaded in both runs; the second run sets CONTEXTFOLD=0",
		`window        ${tok(r.window)} tokens; budget ${tok(s.budget)}, protected tail ${tok(s.tail)}; folds priced at the model's`,
		"              prices (rent or buy; context-fold defaults; Pi's own auto-compaction left at its default)",
		"cache model   prefix cache, Anthropic style: the prefix shared with the previous request is a cache read,",
		"              everything after it a cache write (4 chars per token)",
		`prices        $${PRICES.input}/M input, $${PRICES.cacheWrite}/M cache write, $${PRICES.cacheRead.toFixed(2)}/M cache read, $${PRICES.output}/M output (Sonnet-class list prices)`,
		`session       seed ${r.session.seed}: fix a broken build after a dependency upgrade, ${r.session.prompts} user prompts, ${r.session.turns} model turns,`,
		`              ${total} tool calls (${calls}), plus ${r.session.recallCalls} recall_folded calls when context-fold is on`,
		"              npm/npx/gh/git/docker are replay shims printing generated logs; cat, grep, ls, wc run for real",
		"",
		"Prompt tokens per request (one column per request; █ with context-fold, ░ the same turn without it;",
		"digits mark fold events, u a user prompt)",
		...chart(r.columns, r.promptStarts),
		"",
		"Requests (the first, every 10th, each user prompt and fold event, and the last)",
		...requestRows(r),
		"",
		"Fold events (records context-fold appended to the session file, placed where they reached the wire)",
		...foldRows(r),
		"",
		"Totals",
		...totalsRows(r),
		`  The first request with context-fold carries ~${tok(r.overhead)} tokens more than without it: its recall_folded`,
		`  and unfold tools are declared only from the request before its first fold (~${tok(RECALL_TOOLS_TOKENS)} tokens on each`,
		"  request from then on). Fold events trade a cache write (the rewritten suffix) for every later",
		"  request reading a much shorter prefix.",
		`  Pi's own compaction ran ${times(r.compactions.with)} with context-fold and ${times(r.compactions.without)} without.`,
		"",
		`Recall check: ${r.recall.ok ? "PASS" : "FAIL"}`,
		`  buried in      the first tool output (gh run view 4812 --log-failed), line ${r.recall.lineNumber}`,
		`  before recall  the request that asked for it showed the line nowhere: ${r.recall.hiddenBeforeRecall ? "yes (folded)" : "NO"}`,
		`  search=7f3a9c21 answered`,
		`                 ${shown(r.recall.searchAnswer.trim())}`,
		`  code=${r.recall.code || "(no code found)"} answered`,
		`                 ${r.recall.codeHeader}`,
		`                 its first ${r.recall.identicalLines} lines are byte-identical to the original; line ${r.recall.lineNumber} is`,
		`                 ${shown(r.recall.line)}`,
		`  CHANGELOG.md   quotes the line (the model copied it from the recall answer): ${r.recall.changelog ? "yes" : "NO"}`,
		...(r.recall.ok ? [] : [`  problem        ${r.recall.detail}`]),
		"",
		`Raw bytes: ${r.raw.ok ? "PASS" : "FAIL"}. The folded run's session file holds all ${r.raw.compared} tool results of the unfolded run,`,
		`  byte for byte (${tok(r.raw.bytes)} bytes of output), plus its ${r.raw.extra.length} recall_folded results.${r.raw.ok ? "" : ` ${r.raw.detail}`}`,
		"",
		`Footer status (last of ${r.footer.count} setStatus events for key "context-fold"):`,
		`  ${r.footer.last ?? "(none)"}`,
		...(r.notices.length > 0 ? ["", "Notices from extensions:", ...r.notices.map((n) => `  ${n}`)] : []),
		"",
		"Checks",
		...r.checks.map((c) => `  ${c.ok ? "PASS" : "FAIL"}  ${c.name}: ${c.detail}`),
		"",
		`Result: ${ok ? "PASS" : "FAIL"}. Wall time ${(r.ms.wall / 1000).toFixed(1)} s (both runs in parallel: ${(r.ms.with / 1000).toFixed(1)} s with, ${(r.ms.without / 1000).toFixed(1)} s without).`,
	];
	return `${lines.join("\n")}\n`;
}

function times(n: number): string {
	return n === 0 ? "no times" : n === 1 ? "once" : n === 2 ? "twice" : `${n} times`;
}
