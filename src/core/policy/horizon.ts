/**
 * The compaction ahead: a warm fold pays only until Pi's own compaction, and it puts that compaction
 * off. Pure arithmetic on facts the planner reads from the branch: where Pi compacts, what a
 * compaction keeps, the context now, how fast it has been growing, and how long the session has run.
 *
 * Without the fold, the context grows by `g` tokens per request from `C` to Pi's threshold `T` and
 * is compacted to `K` (the newest messages Pi keeps, plus the summary) after `h = (T - C) / g`
 * requests. A fold that frees `F` tokens saves `F·r` on each of those `h` requests, but the folded
 * context reaches `T` only `F / g` requests later: for those requests it is still near `T` while the
 * compacted one would be near `K`, which costs `(T - K)·r` on each. Over a session that runs past the
 * compaction the fold is worth `F·r·h - (T - K)·r·min(F / g, E - h)` less its rewrite, which is
 * negative whenever the context is above `K` and the session runs `F / g` requests past it: the
 * compaction is the cheaper reset, and folding only postpones it. Over a session that ends before
 * the compaction, the fold is worth `F·r·E` less its rewrite.
 *
 * The rule does not know the future, so `E`, the requests still to come, is estimated from the
 * session so far (as many again as it has run since its context began, its newest compaction),
 * and `g` from the newest GROWTH_REQUESTS requests. A fold whose rent is paid fires only if this
 * estimate does not make it a loss against the compaction; otherwise it is held, and Pi compacts
 * (answered by context-fold's deterministic compaction, or an early compaction over the budget).
 * In a 200k window the threshold is far off and the estimate never holds a fold back on a session
 * that ends first; in a small window it lets the compaction, the cheaper reset there, come.
 */
import { COMPACTION_SUMMARY_MAX_CHARS } from "../handoff.ts";
import { estimateTokens } from "../tokens.ts";

/** The newest requests the growth per request is measured over. */
export const GROWTH_REQUESTS = 20;

/** Pi's default compaction reserve (both versions): Pi compacts once the context passes `window - this`. */
export const PI_RESERVE_TOKENS = 16_384;
/** Pi's default `keepRecentTokens`: a compaction keeps the newest messages worth about this much. */
export const PI_KEEP_RECENT_TOKENS = 20_000;

/**
 * The deterministic summary's size, bounded: the rendered index is capped at
 * COMPACTION_SUMMARY_MAX_CHARS, and its header (what it is, where the originals are) stays under
 * 1,000 characters. The bound, not the exact size: rendering it needs the seed index, which the
 * extension reads from disk only when it compacts. After a few fold events the index fills the cap.
 */
export const SUMMARY_TOKENS_BOUND = estimateTokens(COMPACTION_SUMMARY_MAX_CHARS + 1_000);

/** Pi's compaction settings, as far as the estimate needs them (simulate/compaction.ts reads them). */
export interface PiCompactionFacts {
	enabled: boolean;
	reserveTokens: number;
	keepRecentTokens: number;
}

/** The facts the estimate needs. */
export interface CompactionAhead {
	/** T: where Pi compacts (the window less Pi's reserve). */
	threshold: number;
	/** K: what a compaction keeps (Pi's kept messages plus the summary). */
	kept: number;
	/** C: the context now, before the fold. */
	context: number;
	/** g: tokens the context grew by per request, over the newest GROWTH_REQUESTS requests. */
	growth: number;
	/** E: requests still to come, estimated as the requests the context holds so far. */
	remaining: number;
}

/**
 * The compaction ahead of a context, or null when there is none to weigh: Pi's compaction is off,
 * fewer than three responses (no growth to measure), or the context already at or past Pi's
 * threshold (Pi did not compact there: the rent rule decides alone). `tokensPerMessage` counts the
 * messages as sent; `responses` are the indices of successful ones; `pi`, Pi's compaction settings
 * (its defaults when unknown).
 */
export function compactionAhead(input: {
	tokensPerMessage: readonly number[];
	responses: readonly number[];
	context: number;
	window: number;
	pi?: PiCompactionFacts | undefined;
}): CompactionAhead | null {
	const { tokensPerMessage, responses, context } = input;
	if (input.pi?.enabled === false) return null;
	const threshold = input.window - (input.pi?.reserveTokens ?? PI_RESERVE_TOKENS);
	if (responses.length < 3 || context >= threshold) return null;
	const span = Math.min(GROWTH_REQUESTS, responses.length - 1);
	const from = responses[responses.length - 1 - span] as number;
	let grown = 0;
	for (let i = from + 1; i < tokensPerMessage.length; i++) grown += tokensPerMessage[i] ?? 0;
	return {
		threshold,
		kept: Math.min(context, (input.pi?.keepRecentTokens ?? PI_KEEP_RECENT_TOKENS) + SUMMARY_TOKENS_BOUND),
		context,
		growth: Math.max(1, grown / span),
		remaining: responses.length,
	};
}

/**
 * What a warm fold freeing `freed` tokens is worth against waiting for the compaction ahead, in
 * input-token equivalents at read rate `read`, before its rewrite (see the module comment).
 */
export function worthBeforeCompaction(ahead: CompactionAhead, freed: number, read: number): number {
	const g = Math.max(1, ahead.growth);
	const F = Math.max(0, freed);
	const h = Math.max(0, ahead.threshold - ahead.context) / g;
	const E = Math.max(0, ahead.remaining);
	if (E <= h) return F * read * E;
	return F * read * h - Math.max(0, ahead.threshold - ahead.kept) * read * Math.min(F / g, E - h);
}

/** Requests until Pi's threshold at the current growth, rounded up. */
export function requestsToThreshold(ahead: CompactionAhead): number {
	return Math.ceil(Math.max(0, ahead.threshold - ahead.context) / Math.max(1, ahead.growth));
}
