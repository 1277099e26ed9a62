/**
 * Per-request rows and per-arm totals, for one billing model. Replayed arms and the computed floor
 * go through the same code, so every column means the same thing in every row.
 */
import { type BillingModel, billAll, type RequestShape, tokensOf } from "./billing.ts";
import type { FloorRecord } from "./floor.ts";
import type { ArmRun } from "./replay.ts";

/** A request whose common prefix is under this share of the previous prompt breaks the cache. */
export const BREAK_SHARE = 0.9;

export interface RequestRow {
	arm: string;
	/** Turn request ordinal; summary requests carry the ordinal of the turn they follow. */
	k: number;
	kind: "turn" | "summary" | "abort" | "error";
	t: number;
	prompt: number;
	cacheRead: number;
	cacheWrite: number;
	input: number;
	output: number;
	cost: number;
	/** Common prefix / previous prompt (turn requests after the first), else null. */
	prefixRatio: number | null;
	prefixBreak: boolean;
	foldEvent: boolean;
	newCodes: number;
	maskedTokens: number;
	compactionBefore: boolean;
	expired: boolean;
}

export interface ArmTotals {
	arm: string;
	requests: number;
	turnRequests: number;
	summaryRequests: number;
	promptTokens: number;
	cacheRead: number;
	cacheWrite: number;
	input: number;
	output: number;
	cost: number;
	foldEvents: number;
	/** context-fold's fold records by reason (threshold, step, budget). */
	foldReasons: Record<string, number>;
	compactions: number;
	/** Compactions an extension answered (context-fold's deterministic compaction): no summary request. */
	hookCompactions: number;
	prefixBreaks: number;
	/** Breaks at a request that carried neither a fold event nor a compaction. */
	unexplainedBreaks: number;
	expiries: number;
	unfolds: number;
	peakPrompt: number;
	/** context-fold-estimated tokens masked, summed over requests, and in the last request. */
	maskedSum: number;
	maskedLast: number;
	wallMs: number;
	problems: number;
}

export interface ArmResult {
	rows: RequestRow[];
	totals: ArmTotals;
}

export function measureRun(run: ArmRun, model: BillingModel): ArmResult {
	const billed = billAll(run.records, model);
	const saved = new Map<string, number>();
	for (const layer of run.layers) for (const [code, n] of Object.entries(layer.saved)) saved.set(code, n);
	const compactionAt = new Set(run.compactions.map((c) => c.beforeRequest));
	const seen = new Set<string>();
	const rows: RequestRow[] = [];
	let lastK = 0;
	let summarySince = false;
	run.records.forEach((r, i) => {
		const b = billed[i] as (typeof billed)[number];
		if (r.kind === "summary") summarySince = true;
		const fresh = r.codes.filter((c) => !seen.has(c));
		for (const c of fresh) seen.add(c);
		const turn = r.kind === "turn";
		const prefixRatio = turn && r.previousChars > 0 ? r.prefixChars / r.previousChars : null;
		rows.push({
			arm: run.arm.id,
			k: turn ? r.k : lastK,
			kind: r.kind === "summary" ? "summary" : r.reply === "abort" ? "abort" : r.reply === "error" ? "error" : "turn",
			t: r.t,
			prompt: tokensOf(r.chars, model.charsPerToken),
			...b.usage,
			cost: b.cost,
			prefixRatio,
			prefixBreak: prefixRatio !== null && prefixRatio < BREAK_SHARE,
			foldEvent: turn && fresh.length > 0,
			newCodes: fresh.length,
			maskedTokens: r.codes.reduce((n, c) => n + (saved.get(c) ?? 0), 0),
			compactionBefore: turn && (compactionAt.has(r.k) || summarySince),
			expired: b.expired,
		});
		if (turn) {
			lastK = r.k;
			summarySince = false;
		}
	});
	const totals = totalsOf(run.arm.id, rows, run.compactions.length, run.unfolds, run.wallMs, run.problems.length);
	for (const layer of run.layers) totals.foldReasons[layer.reason] = (totals.foldReasons[layer.reason] ?? 0) + 1;
	totals.hookCompactions = run.compactions.filter((c) => c.fromHook).length;
	return { rows, totals };
}

export function measureFloor(records: readonly FloorRecord[], model: BillingModel, problems: number): ArmResult {
	const billed = billAll(records as readonly RequestShape[], model);
	const rows: RequestRow[] = records.map((r, i) => {
		const b = billed[i] as (typeof billed)[number];
		const previous = i > 0 ? (records[i - 1] as FloorRecord).chars : 0;
		return {
			arm: "floor",
			k: r.k,
			kind: "turn",
			t: r.t,
			prompt: tokensOf(r.chars, model.charsPerToken),
			...b.usage,
			cost: b.cost,
			prefixRatio: previous > 0 ? Math.min(1, r.prefixChars / previous) : null,
			prefixBreak: false,
			foldEvent: false,
			newCodes: r.newlyMasked,
			maskedTokens: r.maskedTokens,
			compactionBefore: false,
			expired: b.expired,
		};
	});
	return { rows, totals: totalsOf("floor", rows, 0, 0, 0, problems) };
}

function totalsOf(
	arm: string,
	rows: readonly RequestRow[],
	compactions: number,
	unfolds: number,
	wallMs: number,
	problems: number,
): ArmTotals {
	const t: ArmTotals = {
		arm,
		requests: rows.length,
		turnRequests: 0,
		summaryRequests: 0,
		promptTokens: 0,
		cacheRead: 0,
		cacheWrite: 0,
		input: 0,
		output: 0,
		cost: 0,
		foldEvents: 0,
		foldReasons: {},
		compactions,
		hookCompactions: 0,
		prefixBreaks: 0,
		unexplainedBreaks: 0,
		expiries: 0,
		unfolds,
		peakPrompt: 0,
		maskedSum: 0,
		maskedLast: 0,
		wallMs,
		problems,
	};
	for (const r of rows) {
		t.promptTokens += r.prompt;
		t.cacheRead += r.cacheRead;
		t.cacheWrite += r.cacheWrite;
		t.input += r.input;
		t.output += r.output;
		t.cost += r.cost;
		if (r.kind === "summary") {
			t.summaryRequests++;
			continue;
		}
		t.turnRequests++;
		if (r.foldEvent) t.foldEvents++;
		if (r.prefixBreak) {
			t.prefixBreaks++;
			if (!r.foldEvent && !r.compactionBefore) t.unexplainedBreaks++;
		}
		if (r.expired) t.expiries++;
		t.peakPrompt = Math.max(t.peakPrompt, r.prompt);
		t.maskedSum += r.maskedTokens;
		t.maskedLast = r.maskedTokens;
	}
	return t;
}
