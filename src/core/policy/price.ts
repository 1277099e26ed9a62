/**
 * The priced fold rule: when a fold event pays, in the model's own prices. Pure arithmetic; the
 * planner (plan.ts) supplies the positions and sizes, the adapter and the CLI supply the prices.
 *
 * A fold event is an investment. It changes the prompt first at the oldest block it masks (the cut),
 * so everything after the cut that the provider had cached is written again at the cache-write
 * price instead of read at the cache-read price. In exchange, the tokens it frees are not read on
 * any later request. All amounts here are in input-token equivalents: tokens times a rate relative
 * to the uncached input price (read `r`, write `w`), so no amount depends on the currency or on
 * the absolute price level.
 *
 * - Rewrite, once: `(L - F)·w - L·r`, where `L` is the cached prefix after the cut and `F` the
 *   tokens the event frees (its digests taken off).
 * - Payback, on every later request: `F·r`.
 * - Rent, already paid: every request since a block became foldable re-read it at `r`. The rule
 *   fires once the rent paid on the blocks of an event reaches RENT_MULTIPLE (1.5) times that
 *   event's rewrite (rent or buy, with a margin). If the session ends right after a fold, the loss is
 *   at most the rewrite, which the rent already paid exceeds: against not folding at all the rule
 *   never loses more than one rewrite per event, and against the best choice made with hindsight it
 *   never costs more than 2.5 times as much (the plain rent-or-buy rule, multiple 1, would be 2).
 * - The first event also declares the recall tools (when they are not declared yet): their tokens
 *   are written once with the rewrite, and read on every later request. So what such an event saves
 *   per request is what it frees less the tools, and its rent counts only that share (renting its
 *   blocks cost that much more per request than folding them would have). An event that frees no
 *   more than the tools never pays and never fires, cold or not.
 * - A cold cache (the prefix is gone anyway) makes the rewrite free: fold everything at once.
 * - A warm event whose rent is paid is held when Pi's compaction ahead makes it a loss: it would pay
 *   only until that compaction and put the cheaper reset off (horizon.ts). Over the budget that is
 *   the common case in a small window; the compaction comes instead (Pi's, or an early one).
 * - Over the budget with no compaction ahead (Pi's compaction is off, or the context is past its
 *   threshold), nothing else brings the context down: fold at once if it frees enough to matter.
 */
import type { Prices } from "../accounting.ts";
import { type CompactionAhead, worthBeforeCompaction } from "./horizon.ts";

/**
 * A waiting event fires once its rent reaches this multiple of its rewrite. Plain rent or buy is 1;
 * 1.5 is a margin for what the rule cannot see: the rewrite is estimated (characters / 4), and a
 * session that ends soon after a fold is what makes a fold lose. In the economics benchmark it held
 * back the one fold of a 40-call session (1.010× native with it, only the tools' cost without), and
 * made three of the four cut sessions cheaper (docs/BENCHMARKS.md).
 */
export const RENT_MULTIPLE = 1.5;

/** Rates relative to the uncached input price, and where they came from. */
export interface RelativeRates {
	/** Cache read per token (Anthropic 0.1; no cache 1). */
	read: number;
	/** Cache write per token (Anthropic 1.25; no write premium 1). */
	write: number;
	/** `model`: the model's own prices; `ratios`: it declares none, so a preset's ratios stand in (a decision in tokens). */
	basis: "model" | "ratios";
}

/**
 * The rates a decision uses. A model with an input price uses its own: a cache read of 0 means no
 * cache discount (read = 1), a cache write of 0 means no write premium (write = 1). A model that
 * declares no input price (custom models often declare zeros) is decided in tokens with `fallback`'s
 * ratios.
 */
export function relativeRates(prices: Prices | null | undefined, fallback: Prices): RelativeRates {
	const own = prices !== null && prices !== undefined && prices.input > 0;
	const p = own ? prices : fallback;
	return {
		read: p.cacheRead > 0 ? Math.min(p.cacheRead / p.input, 1) : 1,
		write: p.cacheWrite > 0 ? Math.max(p.cacheWrite / p.input, 1) : 1,
		basis: own ? "model" : "ratios",
	};
}

/** Why the cached prefix is taken to be gone, so that a rewrite costs nothing extra. */
export type ColdReason =
	/** Idle longer than the cache lifetime since the last response (or Pi's newest cache warm-up). */
	| "idle"
	/** The request goes to another model or provider than the last response came from. */
	| "model-change"
	/** The last response, on a large prompt, neither read nor wrote any cache: the provider caches nothing. */
	| "uncached"
	/** The recall tools were just declared, which rebuilt the system prompt: this request rewrites the whole prefix anyway. */
	| "tools";

/** One group of candidates: the blocks of one message. */
export interface PricedGroup {
	/** Message index (groups come in ascending order). */
	messageIndex: number;
	/** Tokens the cached prompt holds before this message (the cut if the event starts here). */
	offset: number;
	/** Tokens the group's blocks free, their digests already taken off. */
	freed: number;
	/** Rent already paid on the group: the sum over its blocks of tokens times the requests since it became foldable. */
	rentTokens: number;
}

export interface PriceInput {
	rates: RelativeRates;
	groups: readonly PricedGroup[];
	/** Tokens of the prompt the provider cached on the previous request (everything before the newest response). */
	cachedEnd: number;
	cold: ColdReason | null;
	/** Pi's compaction ahead, when there is one to weigh (horizon.ts). */
	ahead?: CompactionAhead | null;
	/** The context is over the budget. */
	overBudget?: boolean;
	/** Over the budget, the least an event must free to be worth a rewrite. */
	budgetMinFreed?: number;
	/**
	 * Declaring the recall tools (when they are not declared yet) changes the prompt from this token
	 * offset on (0 when it rebuilds the system prompt), and adds this many tokens.
	 */
	activation?: { from: number; tokens: number };
}

export interface PricedEvent {
	/** Index into `groups` of the oldest group the event folds (every later group folds too). */
	from: number;
	freed: number;
	/** The rewrite the event causes, in input-token equivalents (negative when it saves at once). */
	rewrite: number;
	/** What it saves on every later request, in input-token equivalents (net of the tools it declares; negative: it costs). */
	payback: number;
	/** Rent already paid on its blocks, in input-token equivalents (the share net of the tools it declares). */
	rent: number;
}

export type PricedDecision =
	| { fire: true; reason: "cold" | "rent" | "budget"; event: PricedEvent }
	/**
	 * Nothing fires: `best` is the event closest to paying, the one that fires first if the rent keeps
	 * its current rate (the widest of those that fire on the same request; the widest if none ever
	 * would warm). Null without candidates. `held`: an event's rent is paid, but Pi's compaction ahead
	 * makes it a loss (`best` is then the widest such event).
	 */
	| { fire: false; best: PricedEvent | null; held?: CompactionAhead };

/** Price every event the candidates allow (one per possible cut) and pick the one the rule fires, if any. */
export function decidePriced(input: PriceInput): PricedDecision {
	const events = priceEvents(input);
	if (events.length === 0) return { fire: false, best: null };
	// An event must free more than the tools it declares, or it costs on every later request.
	const tools = input.activation?.tokens ?? 0;
	// The event starting at the oldest group frees the most.
	const widest = events[0] as PricedEvent;
	if (input.cold !== null && widest.freed > tools) return { fire: true, reason: "cold", event: widest };
	// Of the events whose rent has reached RENT_MULTIPLE times their rewrite, the one that frees the
	// most, unless the compaction ahead makes it a loss.
	const ahead = input.ahead ?? null;
	// Over the budget with no compaction ahead (Pi's is off, or it did not come at its threshold),
	// nothing else brings the context down: fold at once if it frees enough to matter.
	if (
		ahead === null &&
		input.overBudget === true &&
		widest.freed >= (input.budgetMinFreed ?? 0) &&
		widest.freed > tools
	)
		return { fire: true, reason: "budget", event: widest };
	let held: PricedEvent | null = null;
	for (const e of events) {
		if (e.freed <= tools || e.rent < RENT_MULTIPLE * e.rewrite) continue;
		if (ahead === null || paysBeforeCompaction(ahead, e, input.rates)) return { fire: true, reason: "rent", event: e };
		held ??= e;
	}
	if (held !== null && ahead !== null) return { fire: false, best: held, held: ahead };
	// Closest in requests, not in tokens still owed: a wide event saves more per request, so it can
	// pay sooner than a narrow one that owes less.
	let best = widest;
	let soonest = requestsToFire(widest);
	for (const e of events) {
		const n = requestsToFire(e);
		if (n < soonest) {
			best = e;
			soonest = n;
		}
	}
	return { fire: false, best };
}

/** Requests until a waiting event fires warm at its current rate; never (infinity) if it saves nothing per request. */
function requestsToFire(e: PricedEvent): number {
	return e.payback > 0 ? (requestsToPay(e) ?? Number.POSITIVE_INFINITY) : Number.POSITIVE_INFINITY;
}

function priceEvents(input: PriceInput): PricedEvent[] {
	const { rates, groups } = input;
	const events: PricedEvent[] = new Array(groups.length);
	let freed = 0;
	let rentTokens = 0;
	for (let k = groups.length - 1; k >= 0; k--) {
		const g = groups[k] as PricedGroup;
		freed += g.freed;
		rentTokens += g.rentTokens;
		const cut = input.activation === undefined ? g.offset : Math.min(g.offset, input.activation.from);
		const extraTokens = input.activation?.tokens ?? 0;
		// What it saves on every later request: what it frees, less the tools it declares (read from then on).
		const net = freed - extraTokens;
		events[k] = {
			from: k,
			freed,
			rewrite: rewriteCost(rates, input.cachedEnd - cut, freed, extraTokens, input.cold !== null),
			payback: net * rates.read,
			rent:
				extraTokens === 0
					? rentTokens * rates.read
					: freed > 0
						? (rentTokens * rates.read * Math.max(0, net)) / freed
						: 0,
		};
	}
	return events;
}

/**
 * What an event costs beyond not folding, on the request that carries it: the cached segment after
 * the cut (`span` tokens) goes out again, less what it frees plus what it adds (tool declarations), at the write rate,
 * instead of being read. With the cache gone the segment is written either way, so only the change
 * in size counts (negative: the event saves at once).
 */
export function rewriteCost(rates: RelativeRates, span: number, freed: number, added: number, cold: boolean): number {
	const L = Math.max(0, span);
	if (cold) return (added - freed) * rates.write;
	return Math.max(0, L - freed + added) * rates.write - L * rates.read;
}

/** Requests until a waiting event's rent reaches RENT_MULTIPLE times its rewrite, at its current rate (0: already; null: never). */
export function requestsToPay(e: PricedEvent): number | null {
	const short = RENT_MULTIPLE * e.rewrite - e.rent;
	if (short <= 0) return 0;
	if (e.payback <= 0) return null;
	return Math.ceil(short / e.payback);
}

/** Whether a warm event is worth its rewrite against the compaction ahead (horizon.ts). */
export function paysBeforeCompaction(ahead: CompactionAhead, e: PricedEvent, rates: RelativeRates): boolean {
	return worthBeforeCompaction(ahead, e.payback / rates.read, rates.read) >= e.rewrite;
}
