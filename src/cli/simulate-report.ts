/**
 * Text renderings of a simulation: the per-request table, the summary of both arms, the prices and
 * the totals. Plain strings in, plain strings out. The JSON document is simulate-json.ts.
 */
import type { PriceSchedule, Prices } from "../core/accounting.ts";
import type { BilledRequest } from "../core/billing.ts";
import { NATIVE_SUMMARY_TOKENS } from "../core/simulate/native-summary.ts";
import type { CostCheck, ModelPrices } from "../core/simulate/pricing.ts";
import type {
	ArmTotals,
	ImpossibleBaseline,
	SimulatedRow,
	Simulation,
	SimulationSummary,
	SummaryTotals,
} from "../core/simulate/summary.ts";
import { groupDigits } from "../core/tokens.ts";
import { formatDollars, plural } from "../core/wording.ts";
import { formatPct, renderTable } from "./format.ts";
import { MARK_WORDS } from "./simulate-chart.ts";

/** A model's prices as resolved for this session, and how many requests went to it. */
export interface PricedModel extends ModelPrices {
	requests: number;
}

export interface SimulatedSession {
	id: string | null;
	path: string;
	/** The model most requests went to, the window used and where it came from. */
	model: string;
	window: number;
	windowSource: string;
	malformed: number;
	/** The prices each model was billed at, most requests first. */
	prices: PricedModel[];
	/** The estimate against the costs the session states, or null when it states none. */
	costCheck: CostCheck | null;
	simulation: Simulation;
}

export interface SimulateOptions {
	/** "per-model", or the preset given with --price. */
	price: string;
	ttl: string;
}

export function renderRequestTable(rows: readonly SimulatedRow[]): string {
	return renderTable(
		[
			{ title: "req", align: "right" },
			{ title: "reported", align: "right" },
			{ title: "no fold", align: "right" },
			{ title: "folded", align: "right" },
			{ title: "read", align: "right" },
			{ title: "read fold", align: "right" },
			{ title: "$ no fold", align: "right" },
			{ title: "$ folded", align: "right" },
			{ title: "event" },
		],
		rows.map((r) => [
			String(r.request.index + 1),
			r.request.billed ? groupDigits(r.request.reported) : "—",
			tokens(r.baseline),
			tokens(r.folded),
			r.baseline === null ? "—" : groupDigits(r.baseline.cacheRead),
			r.folded === null ? "—" : groupDigits(r.folded.cacheRead),
			r.baseline === null ? "—" : r.baseline.cost.toFixed(4),
			r.folded === null ? "—" : r.folded.cost.toFixed(4),
			events(r),
		]),
	);
}

function tokens(b: BilledRequest | null): string {
	return b === null ? "—" : groupDigits(b.prompt);
}

/** What happened at a request, in words: fold events, prefix breaks, cache expiry, compaction, floor. */
export function events(r: SimulatedRow): string {
	const out: string[] = [];
	const f = r.request.fold;
	if (f !== null)
		out.push(
			`fold #${f.seq} ${f.reason} (${plural(f.blocks, "block")}, ~${groupDigits(f.usageBefore - f.usageAfter)} tok)`,
		);
	if (r.request.compacted) out.push(MARK_WORDS.compaction);
	if (r.request.armCompacted) out.push(MARK_WORDS["arm-compaction"]);
	if (r.request.baseCompacted) {
		const cost = r.baselineSummaries.reduce((n, s) => n + s.cost, 0);
		out.push(
			`compaction without folding (${plural(r.baselineSummaries.length, "summary request")}, ${formatDollars(cost)})`,
		);
	}
	if (r.request.state === "floor") out.push("floor");
	if (r.folded?.expired) out.push("cache expired");
	else if (r.folded?.prefixBreak) out.push(f !== null ? "prefix rewritten" : "prefix changed");
	if (!r.request.billed) out.push(r.request.stopReason ?? "no usage");
	return out.join("; ");
}

export function renderSummary(s: SimulatedSession, o: SimulateOptions): string {
	const { summary } = s.simulation;
	const b = summary.baseline;
	const f = summary.folded;
	const rows: Array<[string, string, string, string]> = [
		["prompt tokens", groupDigits(b.prompt), groupDigits(f.prompt), delta(b.prompt, f.prompt)],
		["  cache read", groupDigits(b.cacheRead), groupDigits(f.cacheRead), ""],
		[unreadWords(b, f), groupDigits(b.cacheWrite + b.input), groupDigits(f.cacheWrite + f.input), ""],
		["cache hit ratio", formatPct(b.hitRatio), formatPct(f.hitRatio), ""],
		["peak prompt", groupDigits(b.peak), groupDigits(f.peak), delta(b.peak, f.peak)],
		["compactions", String(summary.compactions.baseline), String(summary.compactions.folded), ""],
		["prefix breaks", String(b.prefixBreaks), String(f.prefixBreaks), ""],
		["cache expiries", String(b.expired), String(f.expired), ""],
		["est. cost", formatDollars(b.cost), formatDollars(f.cost), delta(b.cost, f.cost)],
	];
	// Native Pi's summary requests, where the arm without folding answers its compactions as Pi does.
	if (summary.compactions.baselineBy === "pi-rule")
		rows.splice(rows.findIndex((r) => r[0] === "compactions") + 1, 0, [
			"  summary requests",
			summaryCell(b.summaries),
			summaryCell(f.summaries),
			"",
		]);
	const table = renderTable(
		[{ title: "" }, { title: "no folding", align: "right" }, { title: "with folding", align: "right" }, { title: "" }],
		rows,
	);
	const rec = summary.recorded;
	const lines = [
		`session ${s.id ?? "(no id)"}  ${s.path}`,
		`  ${summary.requests} requests (${summary.billed} with usage) · model ${s.model} · window ${groupDigits(s.window)} (${s.windowSource})`,
		...renderPrices(s.prices, o),
		`  cache lifetime ${o.ttl} · system prompt and tools ~${groupDigits(summary.overhead.tokens)} tok (${overheadWords(summary.overhead.source)}), +${groupDigits(summary.overhead.extension)} with context-fold's tools`,
		...(summary.overhead.measure === "content"
			? []
			: [`  measured as ${summary.overhead.measure}: chars/4 of the request body, reported back as usage`]),
		`  fold events: ${summary.foldEvents} (${plural(summary.foldedBlocks, "block")})${rec.layers > 0 ? ` · recorded by the extension: ${rec.layers}, identical in the replay: ${rec.identicalLayers}` : ""}`,
		...(summary.impossibleBaseline === null
			? []
			: wrap(`warning: ${impossibleWords(summary.impossibleBaseline)}`, 96, "  ", "           ")),
		table,
		`  saved: ${groupDigits(summary.saved.prompt)} prompt tokens, ${formatDollars(summary.saved.cost)} (${formatPct(summary.saved.costRatio)} of the cost)`,
		`  recorded: ${groupDigits(rec.prompt)} prompt tokens reported by the provider${rec.cost === null ? "" : `, ${formatDollars(rec.cost)} stated in the session`}`,
		...(s.costCheck === null ? [] : costCheckLines(s.costCheck)),
		summary.compactions.foldedBy === "pi-rule"
			? "  (with folding, Pi compacts by its own rule on the folded context, answered deterministically with no model call)"
			: "  (with folding, the recorded compactions are kept)",
		...(summary.compactions.baselineBy === "pi-rule" ? nativeCompactionLines(summary) : []),
		"  (estimates: chars/4 tokens and the provider model above; the recorded figures are the real ones)",
	];
	if (s.malformed > 0) lines.push(`  ${s.malformed} unreadable line(s) in the session file were skipped`);
	return lines.join("\n");
}

/** Summary requests in a cell: how many, and what they cost. */
function summaryCell(s: SummaryTotals): string {
	return s.requests === 0 ? "0" : `${groupDigits(s.requests)} (${formatDollars(s.cost)})`;
}

/** Where the cost of native Pi's compactions comes from, when the arm without folding re-decides them. */
function nativeCompactionLines(summary: SimulationSummary): string[] {
	const s = summary.baseline.summaries;
	const text = `(without folding too, Pi's rule decides when to compact on this measure: ${plural(summary.compactions.baseline, "compaction")} (${summary.compactions.recorded} in the recording), each answered as native Pi answers it, with summary requests to the model: ${plural(s.requests, "request")} in all, ${groupDigits(s.prompt)} prompt tokens billed as uncached input, plus ${groupDigits(NATIVE_SUMMARY_TOKENS)} output tokens each (an assumed summary size; a real model's varies), ${formatDollars(s.cost)} of the cost without folding. The summary then in the context is of that size too.)`;
	return wrap(text, 96, "  ", "   ");
}

/** What the part of a prompt not read from cache was billed as: cache writes, plain input, or both (per model). */
function unreadWords(b: ArmTotals, f: ArmTotals): string {
	const writes = b.cacheWrite + f.cacheWrite > 0;
	const input = b.input + f.input > 0;
	return writes && input ? "  cache write + input" : writes ? "  cache write" : "  uncached input";
}

/** The baseline cannot have happened in the window it is replayed in: said in words. */
export function impossibleWords(b: ImpossibleBaseline): string {
	return `the baseline cannot have happened in this window: the provider reported prompts of up to ${groupDigits(b.peak)} tokens in a ${groupDigits(b.window)}-token window (${plural(b.requests, "request")} over it, the first is request ${b.first + 1}) with ${plural(b.compactions, "compaction")}. It was recorded with a larger window; "no folding" below is that recording, not Pi in this window.`;
}

/** Which prices were used, one line per model (most requests first). */
export function renderPrices(prices: readonly PricedModel[], o: SimulateOptions): string[] {
	const first = prices[0];
	if (o.price !== "per-model" && first !== undefined)
		return [`  prices: ${o.price} preset for every request (--price): ${rates(first.prices)}`];
	if (prices.length === 1 && first !== undefined) return [`  prices: ${modelPriceWords(first)}`];
	return ["  prices, per model:", ...prices.map((m) => `    ${modelPriceWords(m)} · ${plural(m.requests, "request")}`)];
}

function modelPriceWords(m: PricedModel): string {
	const name = `${m.provider ?? "?"}/${m.model ?? "?"}`;
	const src = m.source;
	switch (src.type) {
		case "catalog": {
			const as = src.match === "exact" ? "" : ` as ${src.entry}, ${src.match === "id" ? "same id" : "same family"}`;
			return `${name} at ${rates(m.prices)} (pi-ai catalog${as})`;
		}
		case "models.json":
			return `${name} at ${rates(m.prices)} (models.json)`;
		case "preset":
			return `${name} at ${rates(m.prices)} (${src.preset} preset: ${
				src.why === "unpriced"
					? `the pi-ai catalog lists no price for ${src.catalogEntry ?? name}`
					: "not in the pi-ai catalog or models.json"
			})`;
	}
}

/** "$5/$25/$0.50/$6.25 per Mtok in/out/read/write", plus tiers. */
export function rates(p: PriceSchedule): string {
	const four = (r: Prices) => [r.input, r.output, r.cacheRead, r.cacheWrite].map(perMtok).join("/");
	const tiers = (p.tiers ?? []).map((t) => `${four(t)} above ${groupDigits(t.above)} tok`);
	const base = `${four(p)} per Mtok in/out/read/write`;
	return tiers.length === 0 ? base : `${base} (${tiers.join("; ")})`;
}

function perMtok(n: number): string {
	if (Number.isInteger(n)) return `$${n}`;
	const cents = n.toFixed(2);
	return `$${Number(cents) === n ? cents : String(n)}`;
}

function costCheckLines(c: CostCheck): string[] {
	return [
		`  check against the costs the session states (${plural(c.responses, "response")}, ${formatDollars(c.stated)}):`,
		`    its recorded usage at these prices ${formatDollars(c.recordedAtPrices)} (${signedDelta(c.stated, c.recordedAtPrices)}), the estimate without folding ${formatDollars(c.estimate)} (${signedDelta(c.stated, c.estimate)})`,
	];
}

/** Words laid out on lines of at most `width` characters (a longer word gets a line of its own). */
function wrap(text: string, width: number, first: string, rest: string): string[] {
	const out: string[] = [];
	let line = first;
	for (const word of text.split(" ")) {
		const prefix = out.length === 0 ? first : rest;
		if (line.length > prefix.length && line.length + 1 + word.length > width) {
			out.push(line);
			line = rest + word;
		} else line += line.length > prefix.length ? ` ${word}` : word;
	}
	out.push(line);
	return out;
}

function _plural(n: number, word: string): string {
	return `${groupDigits(n)} ${word}${n === 1 ? "" : "s"}`;
}

function signedDelta(before: number, after: number): string {
	return before <= 0 ? "—" : delta(before, after);
}

function overheadWords(source: string): string {
	if (source === "given") return "--overhead";
	if (source === "first-response") return "measured from the first response";
	return "unknown";
}

function delta(before: number, after: number): string {
	if (before <= 0) return "";
	const pct = ((after - before) / before) * 100;
	return `${pct <= 0 ? "" : "+"}${pct.toFixed(1)}%`;
}

export function renderTotals(sessions: readonly SimulatedSession[]): string {
	const add = (pick: (s: SimulatedSession) => ArmTotals) =>
		sessions.reduce((n, s) => ({ prompt: n.prompt + pick(s).prompt, cost: n.cost + pick(s).cost }), {
			prompt: 0,
			cost: 0,
		});
	const b = add((s) => s.simulation.summary.baseline);
	const f = add((s) => s.simulation.summary.folded);
	return `${sessions.length === 2 ? "both" : `all ${sessions.length}`} sessions: prompt tokens ${groupDigits(b.prompt)} -> ${groupDigits(f.prompt)} (${delta(b.prompt, f.prompt)}), est. cost ${formatDollars(b.cost)} -> ${formatDollars(f.cost)} (${delta(b.cost, f.cost)})`;
}
