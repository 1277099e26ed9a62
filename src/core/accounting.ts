/**
 * Honest accounting from provider usage: cache hit ratios, and both sides of every fold (what it
 * saves on each later request, and what the provider billed again because the fold rewrote the
 * prefix), plus the wire watchdog. Pure: the adapter (and the CLI) feed it the branch's events.
 */
import { MAX_REPORTED_TOKENS, type Usage } from "./tokens.ts";

export interface Prices {
	/** US dollars per million tokens. */
	input: number;
	output: number;
	cacheRead: number;
	cacheWrite: number;
}

/** Prices for requests whose input is above `above` tokens; the highest matching tier applies to the whole request. */
export interface PriceTier extends Prices {
	above: number;
}

/** A model's prices: the base rates, and tiers by prompt size where the provider has them. */
export interface PriceSchedule extends Prices {
	tiers?: readonly PriceTier[];
}

/** The rates that apply to a request of `promptTokens` input tokens (the highest tier it is above). */
export function ratesAt(schedule: PriceSchedule, promptTokens: number): Prices {
	let rates: Prices = schedule;
	for (const t of schedule.tiers ?? []) if (promptTokens > t.above) rates = t;
	return { input: rates.input, output: rates.output, cacheRead: rates.cacheRead, cacheWrite: rates.cacheWrite };
}

/** Presets for cost models, as ratios from published list prices (Sonnet-class, GPT-5-class, Gemini 2.5 Pro). */
export const PRICE_PRESETS = {
	anthropic: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
	openai: { input: 1.25, output: 10, cacheRead: 0.125, cacheWrite: 0 },
	gemini: { input: 1.25, output: 10, cacheRead: 0.3125, cacheWrite: 0 },
} as const satisfies Record<string, Prices>;

export type PricePreset = keyof typeof PRICE_PRESETS;

export type AccountingEvent =
	| { type: "response"; usage: Usage; timestamp: number; warm?: boolean }
	/** A fold layer, at its position in the branch: `saved` tokens leave every later request. */
	| { type: "fold"; seq: number; saved: number }
	/** An unfold: `restored` tokens come back, and the prefix moves like a fold. */
	| { type: "unfold"; code: string; restored: number };

export interface FoldCost {
	kind: "fold" | "unfold";
	seq: number | string;
	/** Tokens taken out of (or, for unfold, put back into) every later request. */
	delta: number;
	/** Tokens the provider billed again on the request that carried the change; null until it answers. */
	reprefilled: number | null;
	/** The change reached the provider: false when the whole old prompt was still read from cache. */
	onWire: boolean | null;
}

export interface AccountingReport {
	responses: number;
	/** Cache hit ratio per response (read / prompt), warm-ups excluded. */
	perTurn: number[];
	/** Whole-session ratio over every response, warm-ups included, or null with no usage yet. */
	sessionRatio: number | null;
	prompt: number;
	cacheRead: number;
	cacheWrite: number;
	input: number;
	output: number;
	/** Some response reported a cache write: the cost side of folding can be measured. */
	writesReported: boolean;
	changes: FoldCost[];
	/** Tokens not sent because of folds, summed over every response after each fold. */
	maskedSent: number;
	/** Tokens billed again because folds and unfolds moved the prefix. */
	reprefilled: number;
	/** A fold that never reached the wire. */
	offWire: boolean;
}

/** Within this share of the old prompt, a cache read counts as "read the whole pre-fold prompt back". */
export const WIRE_TOLERANCE = 0.98;

export function promptOf(u: Usage): number {
	return pos(u.input) + pos(u.cacheRead) + pos(u.cacheWrite);
}

/**
 * Walk the branch's events in order. A change (fold or unfold) is charged to the first response
 * after it: that response's request carried the new bytes, and every later one reads them back from
 * cache. Re-prefilled = the old prompt, minus what the change removed, minus what was still read
 * from cache. The watchdog: a fold that removed tokens must shrink what is read back; reading the
 * whole old prompt (writes included in the baseline, so back-to-back folds do not cry wolf) means the
 * rewrite never reached the provider.
 */
export function accountSession(events: readonly AccountingEvent[]): AccountingReport {
	const report: AccountingReport = {
		responses: 0,
		perTurn: [],
		sessionRatio: null,
		prompt: 0,
		cacheRead: 0,
		cacheWrite: 0,
		input: 0,
		output: 0,
		writesReported: false,
		changes: [],
		maskedSent: 0,
		reprefilled: 0,
		offWire: false,
	};
	let lastPrompt: number | null = null;
	let masked = 0;
	let pending: FoldCost[] = [];
	for (const e of events) {
		if (e.type === "fold" || e.type === "unfold") {
			const change: FoldCost = {
				kind: e.type,
				seq: e.type === "fold" ? e.seq : e.code,
				delta: e.type === "fold" ? pos(e.saved) : pos(e.restored),
				reprefilled: null,
				onWire: null,
			};
			masked += e.type === "fold" ? change.delta : -change.delta;
			report.changes.push(change);
			pending.push(change);
			continue;
		}
		const u = e.usage;
		const prompt = promptOf(u);
		if (prompt <= 0) continue;
		report.responses++;
		report.prompt += prompt;
		report.cacheRead += pos(u.cacheRead);
		report.cacheWrite += pos(u.cacheWrite);
		report.input += pos(u.input);
		report.output += pos(u.output);
		if (pos(u.cacheWrite) > 0) report.writesReported = true;
		if (!e.warm) {
			report.perTurn.push(pos(u.cacheRead) / prompt);
			report.maskedSent += Math.max(0, masked);
		}
		if (pending.length > 0 && lastPrompt !== null && !e.warm) {
			const before = lastPrompt;
			const removed = pending.reduce((n, c) => n + (c.kind === "fold" ? c.delta : 0), 0);
			const reprefilled = Math.max(0, before - removed - pos(u.cacheRead));
			// One response pays for every change it carried; the first change holds the figure.
			pending.forEach((c, i) => {
				c.reprefilled = i === 0 ? reprefilled : 0;
				c.onWire = c.kind === "fold" && c.delta > 0 ? pos(u.cacheRead) < before * WIRE_TOLERANCE : true;
				if (c.onWire === false) report.offWire = true;
			});
			report.reprefilled += reprefilled;
			pending = [];
		}
		if (!e.warm) lastPrompt = prompt;
	}
	report.sessionRatio = report.prompt > 0 ? report.cacheRead / report.prompt : null;
	return report;
}

/** Dollar value of the accounting at the given prices: saved at cache-read price, re-prefill at the write premium. */
export function foldValue(report: AccountingReport, prices: Prices): { saved: number; cost: number; net: number } {
	const saved = (report.maskedSent * prices.cacheRead) / 1e6;
	const premium = report.writesReported ? prices.cacheWrite - prices.cacheRead : prices.input - prices.cacheRead;
	const cost = (report.reprefilled * Math.max(0, premium)) / 1e6;
	return { saved, cost, net: saved - cost };
}

/** What a response cost at the given prices. */
export function costOf(u: Usage, prices: Prices): number {
	return (
		(pos(u.input) * prices.input +
			pos(u.output) * prices.output +
			pos(u.cacheRead) * prices.cacheRead +
			pos(u.cacheWrite) * prices.cacheWrite) /
		1e6
	);
}

/** A usable count: finite, positive, and not absurd (see MAX_REPORTED_TOKENS); anything else counts as 0. */
function pos(n: number): number {
	return Number.isFinite(n) && n > 0 && n <= MAX_REPORTED_TOKENS ? n : 0;
}
