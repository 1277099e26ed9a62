/**
 * The compaction ahead: a warm fold pays only until Pi's own compaction, and it can put that
 * compaction off. Pure arithmetic on facts the planner reads from the branch: where Pi compacts,
 * what a compaction keeps, the context now, how fast it has been growing, and how long the session
 * has run.
 *
 * Two futures are compared, request by request (`t` counts the requests from now):
 * - *Wait*: the context grows by `g` per request from `C` to Pi's threshold `T`, reached after
 *   `h = (T - C) / g` requests, and is compacted to `K` (the newest messages Pi keeps, plus the
 *   summary); from then on it grows from `K`.
 * - *Fold*: the context drops to `C - F` and grows from there. Later folds keep taking out what can
 *   fold, so it grows only by what does not: `g_f = g·(1 - F / B)`, where `B` is the context before
 *   the protected tail, of which this fold takes `F` (new output is taken to fold as the old did).
 *
 * Before `h` the folded context is smaller by `F + (g - g_f)·t`; after it, the compacted one is
 * smaller by `C - F - K + g_f·h` when that is positive, until the folded context reaches `T` itself
 * (at `(T - C + F) / g_f`; past that both have compacted, and the folded one is the lower). Summed
 * over the `E` requests still to come, at the read rate `r`, that is what the fold is worth; it fires
 * only if that covers its rewrite. A fold that goes about as low as the compaction would, or keeps
 * the context well under `T` because most of what grows can fold, is worth its whole payback; one
 * that leaves the context far above `K`, with little left to fold later, only postpones the cheaper
 * reset.
 *
 * The rule does not know the future, so `E` is estimated from the session so far (as many requests
 * again as its context holds since its newest compaction), and `g` from the newest GROWTH_REQUESTS
 * requests. In a 200k window the threshold is far off and the estimate never holds a fold back on a
 * session that ends first; in a small window it lets the compaction, the cheaper reset there, come.
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
	/** B: the context before the protected tail (where folds take from). */
	beforeTail: number;
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
	beforeTail: number;
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
		beforeTail: Math.max(0, input.beforeTail),
		growth: Math.max(1, grown / span),
		remaining: responses.length,
	};
}

/**
 * What a warm fold freeing `freed` tokens is worth against waiting for the compaction ahead, in
 * input-token equivalents at read rate `read`, before its rewrite (see the module comment). Sums
 * over requests are taken as integrals: the terms are linear in `t`.
 */
export function worthBeforeCompaction(ahead: CompactionAhead, freed: number, read: number): number {
	const g = Math.max(1, ahead.growth);
	const F = Math.max(0, freed);
	const B = Math.max(F, ahead.beforeTail, 1);
	const gf = g * (1 - F / B);
	const C = ahead.context;
	const T = ahead.threshold;
	const E = Math.max(0, ahead.remaining);
	const h = Math.max(0, T - C) / g;
	// Before the compaction: smaller by F + (g - g_f)·t.
	const before = Math.min(h, E);
	let tokens = F * before + ((g - gf) * before * before) / 2;
	// After it, until the folded context reaches T too: larger by C - F - K + g_f·h (if positive).
	const reachesT = gf > 0 ? (T - C + F) / gf : Number.POSITIVE_INFINITY;
	const after = Math.max(0, Math.min(E, reachesT) - h);
	tokens -= Math.max(0, C - F - ahead.kept + gf * h) * after;
	return tokens * read;
}

/** Requests until Pi's threshold at the current growth, rounded up. */
export function requestsToThreshold(ahead: CompactionAhead): number {
	return Math.ceil(Math.max(0, ahead.threshold - ahead.context) / Math.max(1, ahead.growth));
}
