/**
 * A replay billed twice under one provider model: as recorded (no folding) and with the replay's
 * folds. The system prompt and tool definitions are not in the session file, so their size is
 * measured once: the first billed response's reported prompt minus the estimate of its messages.
 * Where the arm without folding re-decides Pi's compactions, the summary requests native Pi sends
 * for them are billed too, each as uncached input with the assumed summary as output.
 */
import type { PriceSchedule } from "../accounting.ts";
import { type BilledRequest, type BillingModel, billUncached, PromptCache } from "../billing.ts";
import { type FrozenLayer, layerMasks } from "../layers.ts";
import { RECALL_TOOLS_TOKENS } from "../recall-tools.ts";
import type { Replay, ReplayedRequest } from "./replay.ts";
import { overheadFrom, type PromptMeasure } from "./wire.ts";

export interface ArmTotals {
	/** Prompt tokens summed over every billed request (summary requests included). */
	prompt: number;
	input: number;
	cacheRead: number;
	cacheWrite: number;
	output: number;
	/** US dollars, output included (summary requests included). */
	cost: number;
	/** Native Pi's compaction-summary requests, part of the totals above (the arm without folding only). */
	summaries: SummaryTotals;
	/** Largest single prompt of a conversation request (summary requests are not counted). */
	peak: number;
	/** Requests whose prefix was changed (something already sent was rewritten). */
	prefixBreaks: number;
	/** Requests that came after the cache lifetime and were billed in full. */
	expired: number;
	/** Cache reads over prompt tokens. */
	hitRatio: number | null;
}

export interface SummaryTotals {
	requests: number;
	/** Prompt tokens, all billed as uncached input. */
	prompt: number;
	/** Output tokens: the assumed summary size per request. */
	output: number;
	cost: number;
}

export interface SimulatedRow {
	request: ReplayedRequest;
	baseline: BilledRequest | null;
	folded: BilledRequest | null;
	/** The summary requests native Pi sent just before this request, without folding (request.baseSummaries). */
	baselineSummaries: BilledRequest[];
}

export interface Overhead {
	/** System prompt and tool definitions without context-fold. */
	tokens: number;
	source: "given" | "first-response" | "none";
	/** What context-fold adds to every request of the folded arm: its two tools and their prompt lines. */
	extension: number;
	/** How each request's messages were measured (wire.ts): `content` unless asked otherwise. */
	measure: PromptMeasure;
}

export interface SimulationSummary {
	requests: number;
	billed: number;
	foldEvents: number;
	foldedBlocks: number;
	/** Compactions in the recording, and in the folded arm (recorded ones, or re-decided by Pi's rule). */
	compactions: {
		recorded: number;
		/** In the arm without folding: the recorded ones, or re-decided by Pi's rule (ReplayInput.baseline). */
		baseline: number;
		baselineBy: "recorded" | "pi-rule";
		folded: number;
		foldedBy: "recorded" | "pi-rule";
	};
	overhead: Overhead;
	baseline: ArmTotals;
	folded: ArmTotals;
	saved: { prompt: number; cost: number; costRatio: number | null };
	/**
	 * The recording has prompts larger than the window they are replayed in: the baseline is then not
	 * a session that could have happened in this window (it was recorded with a larger one), and the
	 * comparison with it says little. Null when every prompt fits.
	 */
	impossibleBaseline: ImpossibleBaseline | null;
	recorded: {
		prompt: number;
		/** Sum of the costs the recording states, or null when some response states none. */
		cost: number | null;
		layers: number;
		/** Replay layers byte-identical to the recorded layer with the same seq. */
		identicalLayers: number;
	};
}

export interface ImpossibleBaseline {
	/** Billed requests whose recorded prompt is larger than their window. */
	requests: number;
	/** The first of them (0-based request index). */
	first: number;
	/** The largest recorded prompt, and the window of that request. */
	peak: number;
	window: number;
	/** Compactions in the recording. */
	compactions: number;
}

export interface Simulation {
	rows: SimulatedRow[];
	summary: SimulationSummary;
	layers: FrozenLayer[];
}

/**
 * Bill a replay's requests, both arms. `pricesFor` gives the prices of the model a request went to
 * (per-model pricing); without it, or where it gives none, the billing model's preset applies.
 */
export function billReplay(
	replay: Replay,
	model: BillingModel,
	overheadTokens?: number,
	pricesFor?: (request: ReplayedRequest) => PriceSchedule | undefined,
): Simulation {
	const measured = measureOverhead(replay.requests, overheadTokens ?? replay.overhead);
	// A recording made with context-fold loaded already carries its tools in the measured prompt, unless
	// it declared them lazily (its first request went without them).
	const overhead: Overhead = {
		...measured,
		tokens:
			replay.recordedWithExtension && !replay.recordedToolsLazily && measured.source === "first-response"
				? Math.max(0, measured.tokens - RECALL_TOOLS_TOKENS)
				: measured.tokens,
		extension: RECALL_TOOLS_TOKENS,
		measure: replay.measure,
	};
	const base = new PromptCache(model);
	const folded = new PromptCache(model);
	// Every request was sent; one without usage (aborted, failed) is billed with no output.
	const rows: SimulatedRow[] = replay.requests.map((r) => {
		const prices = pricesFor?.(r);
		const common = {
			at: r.at,
			output: r.output,
			...(prices !== undefined && { prices }),
			...(r.model !== null && { cacheKey: `${r.provider ?? "?"}/${r.model}` }),
		};
		return {
			request: r,
			baseline: base.bill({ ...common, fixedTokens: overhead.tokens, parts: r.baseParts }),
			// The recall tools go out from the request that declares them on (all of them under the fixed ladder).
			folded: folded.bill({
				...common,
				fixedTokens: overhead.tokens + (r.toolsDeclared ? overhead.extension : 0),
				parts: r.foldedParts,
			}),
			// Sent before the request, outside the conversation's cache: they do not change its bill.
			baselineSummaries: r.baseSummaries.map((s) =>
				billUncached(model, { prompt: s.prompt, output: s.output, ...(prices !== undefined && { prices }) }),
			),
		};
	});
	const baselineTotals = totals(
		rows.map((r) => r.baseline),
		rows.flatMap((r) => r.baselineSummaries),
	);
	const foldedTotals = totals(rows.map((r) => r.folded));
	const recordedCosts = replay.requests.filter((r) => r.billed).map((r) => r.recordedCost);
	const summary: SimulationSummary = {
		requests: replay.requests.length,
		billed: replay.requests.filter((r) => r.billed).length,
		foldEvents: replay.layers.length,
		foldedBlocks: replay.layers.reduce((n, l) => n + layerMasks(l).length, 0),
		compactions: {
			recorded: replay.requests.filter((r) => r.compacted).length,
			baseline:
				replay.baseline === "recorded"
					? replay.requests.filter((r) => r.compacted).length
					: replay.requests.filter((r) => r.baseCompacted).length,
			baselineBy: replay.baseline === "recorded" ? "recorded" : "pi-rule",
			folded:
				replay.compaction === "recorded"
					? replay.requests.filter((r) => r.compacted).length
					: replay.requests.filter((r) => r.armCompacted).length,
			foldedBy: replay.compaction === "recorded" ? "recorded" : "pi-rule",
		},
		overhead,
		baseline: baselineTotals,
		folded: foldedTotals,
		saved: {
			prompt: baselineTotals.prompt - foldedTotals.prompt,
			cost: baselineTotals.cost - foldedTotals.cost,
			costRatio: baselineTotals.cost > 0 ? (baselineTotals.cost - foldedTotals.cost) / baselineTotals.cost : null,
		},
		impossibleBaseline: impossibleBaseline(replay.requests),
		recorded: {
			prompt: replay.requests.reduce((n, r) => n + r.reported, 0),
			cost: recordedCosts.every((c) => c !== null) ? recordedCosts.reduce((n: number, c) => n + (c ?? 0), 0) : null,
			layers: replay.recordedLayers.length,
			identicalLayers: identicalLayers(replay.layers, replay.recordedLayers),
		},
	};
	return { rows, summary, layers: replay.layers };
}

/** Recorded prompts that do not fit the window their request is replayed in (see SimulationSummary). */
export function impossibleBaseline(requests: readonly ReplayedRequest[]): ImpossibleBaseline | null {
	let out: ImpossibleBaseline | null = null;
	for (const r of requests) {
		if (!r.billed || r.window === null || r.reported <= r.window) continue;
		out ??= { requests: 0, first: r.index, peak: 0, window: r.window, compactions: 0 };
		out.requests++;
		if (r.reported > out.peak) {
			out.peak = r.reported;
			out.window = r.window;
		}
	}
	if (out !== null) out.compactions = requests.filter((r) => r.compacted).length;
	return out;
}

function measureOverhead(
	requests: readonly ReplayedRequest[],
	given: number | undefined,
): Omit<Overhead, "extension" | "measure"> {
	if (given !== undefined) return { tokens: Math.max(0, Math.round(given)), source: "given" };
	const first = requests.find((r) => r.billed && r.reported > 0);
	if (first === undefined) return { tokens: 0, source: "none" };
	return { tokens: overheadFrom(first.reported, first.baseParts), source: "first-response" };
}

function totals(bills: ReadonlyArray<BilledRequest | null>, summaries: readonly BilledRequest[] = []): ArmTotals {
	const t: ArmTotals = {
		prompt: 0,
		input: 0,
		cacheRead: 0,
		cacheWrite: 0,
		output: 0,
		cost: 0,
		summaries: { requests: 0, prompt: 0, output: 0, cost: 0 },
		peak: 0,
		prefixBreaks: 0,
		expired: 0,
		hitRatio: null,
	};
	for (const b of bills) {
		if (b === null) continue;
		t.prompt += b.prompt;
		t.input += b.input;
		t.cacheRead += b.cacheRead;
		t.cacheWrite += b.cacheWrite;
		t.output += b.output;
		t.cost += b.cost;
		t.peak = Math.max(t.peak, b.prompt);
		if (b.prefixBreak) t.prefixBreaks++;
		if (b.expired) t.expired++;
	}
	for (const s of summaries) {
		t.summaries.requests++;
		t.summaries.prompt += s.prompt;
		t.summaries.output += s.output;
		t.summaries.cost += s.cost;
		t.prompt += s.prompt;
		t.input += s.input;
		t.output += s.output;
		t.cost += s.cost;
	}
	t.hitRatio = t.prompt > 0 ? t.cacheRead / t.prompt : null;
	return t;
}

/** Replay layers equal, block for block (identity, sha256 and digest bytes), to the recorded layer of the same seq. */
export function identicalLayers(replayed: readonly FrozenLayer[], recorded: readonly FrozenLayer[]): number {
	const bySeq = new Map(recorded.map((l) => [l.seq, l]));
	let same = 0;
	for (const l of replayed) {
		const r = bySeq.get(l.seq);
		const blocks = layerMasks(l);
		const other = r === undefined ? [] : layerMasks(r);
		if (r === undefined || r.reason !== l.reason || other.length !== blocks.length) continue;
		const equal = blocks.every((b, i) => {
			const o = other[i];
			return (
				o !== undefined &&
				o.code === b.code &&
				o.entryId === b.entryId &&
				o.blockIndex === b.blockIndex &&
				o.sha256 === b.sha256 &&
				o.digest === b.digest
			);
		});
		if (equal) same++;
	}
	return same;
}
