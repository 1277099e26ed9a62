/**
 * Whether the provider's cached prefix is known or very likely gone, so that a fold's rewrite costs
 * nothing extra (policy/price.ts folds everything foldable then), and the cache lifetime that
 * decides it. Pure: the adapter and the CLI supply the times, the model and the environment.
 */
import type { PriceSchedule, PriceTier } from "./accounting.ts";
import type { ColdReason } from "./policy/price.ts";
import type { Usage } from "./tokens.ts";
import { isRecord } from "./values.ts";

/** Pi's default prompt-cache lifetimes, in seconds, when the model does not state its own. */
export const DEFAULT_CACHE_SECONDS = { short: 300, long: 3600 } as const;
/** A large prompt that read and wrote nothing from the cache twice running: the provider is not caching. */
export const UNCACHED_MIN_PROMPT = 20_000;

/**
 * The prompt-cache lifetime in ms for a request, as Pi decides it: the retention from
 * `PI_CACHE_RETENTION` (exactly `long`, else short: both Pi versions compare the raw value, and
 * `none` only ever comes from a request option, never from the environment), the model's
 * `promptCache[retention]` seconds where given (Pi 1.6.0), else Pi's defaults. 0: the model caches
 * nothing (every request is cold).
 */
export function cacheLifetimeMs(
	retention: string | undefined,
	promptCache: { short?: number | null; long?: number | null } | null | undefined,
): number {
	const tier = retention === "long" ? "long" : "short";
	const own = promptCache?.[tier];
	const seconds = typeof own === "number" && Number.isFinite(own) && own >= 0 ? own : DEFAULT_CACHE_SECONDS[tier];
	return seconds * 1000;
}

/** A response as the cold check reads it. */
export interface ResponseFacts {
	provider?: string | undefined;
	model?: string | undefined;
	usage?: Partial<Usage> | undefined;
}

export interface ColdInput {
	/** The request's time; null when unknown (no idle judgment). */
	now: number | null;
	/** The newest successful response or cache warm-up for this model; null when none. */
	lastActivity: number | null;
	lifetimeMs: number;
	/** The newest two successful responses, newest first (fewer when the branch has fewer). */
	recent: readonly ResponseFacts[];
	/** Where this request goes. */
	request: { provider?: string | undefined; model?: string | undefined };
}

/**
 * Why the cache is cold for this request, or null while it is (or may be) warm:
 * - the request goes to another provider or model than the newest response came from;
 * - idle longer than the lifetime since the newest response or cache warm-up (a resume after the
 *   lifetime is the same case: the session's own timestamps say so);
 * - the newest two responses, each on a prompt of at least UNCACHED_MIN_PROMPT tokens, neither read
 *   nor wrote any cache: this provider caches nothing (one such response is only a miss, after which
 *   a provider that caches holds the prefix).
 */
export function coldReason(input: ColdInput): ColdReason | null {
	const last = input.recent[0];
	if (last === undefined) return null;
	// Judged where both sides know the model; a provider that either side does not know says nothing
	// (a false change would fold everything at once on a warm cache).
	const differs = (a: string | undefined, b: string | undefined) => a !== undefined && b !== undefined && a !== b;
	if (
		last.model !== undefined &&
		input.request.model !== undefined &&
		(last.model !== input.request.model || differs(last.provider, input.request.provider))
	)
		return "model-change";
	if (input.lifetimeMs <= 0) return "idle";
	if (input.now !== null && input.lastActivity !== null && input.now - input.lastActivity > input.lifetimeMs)
		return "idle";
	if (input.recent.length >= 2 && input.recent.slice(0, 2).every(uncachedLarge)) return "uncached";
	return null;
}

function uncachedLarge(r: ResponseFacts): boolean {
	const u = r.usage;
	if (u === undefined) return false;
	const n = (v: unknown) => (typeof v === "number" && Number.isFinite(v) && v > 0 ? v : 0);
	const prompt = n(u.input) + n(u.cacheRead) + n(u.cacheWrite);
	return prompt >= UNCACHED_MIN_PROMPT && n(u.cacheRead) === 0 && n(u.cacheWrite) === 0;
}

/**
 * A model's price schedule from what Pi's model object declares (`cost`, with `tiers` of
 * `inputTokensAbove`), or null when it declares none usable.
 */
export function scheduleOf(cost: unknown): PriceSchedule | null {
	if (!isRecord(cost)) return null;
	const num = (v: unknown) => (typeof v === "number" && Number.isFinite(v) && v >= 0 ? v : 0);
	const tiers: PriceTier[] = [];
	if (Array.isArray(cost.tiers)) {
		for (const t of cost.tiers) {
			// A threshold that is not a finite number would leave the sort (and so the tier) undefined.
			if (!isRecord(t) || typeof t.inputTokensAbove !== "number" || !Number.isFinite(t.inputTokensAbove)) continue;
			tiers.push({
				above: t.inputTokensAbove,
				input: num(t.input),
				output: num(t.output),
				cacheRead: num(t.cacheRead),
				cacheWrite: num(t.cacheWrite),
			});
		}
		tiers.sort((a, b) => a.above - b.above);
	}
	return {
		input: num(cost.input),
		output: num(cost.output),
		cacheRead: num(cost.cacheRead),
		cacheWrite: num(cost.cacheWrite),
		...(tiers.length > 0 && { tiers }),
	};
}

/** A message as recentResponses reads it (Pi's message objects and the core's view both fit). */
interface ResponseLike {
	role: string;
	stopReason?: unknown;
	provider?: unknown;
	model?: unknown;
	usage?: unknown;
	timestamp?: unknown;
}

/**
 * The newest two successful responses of a request's messages, newest first, and the time of the
 * newest (null without one). Reads from the end: a few messages, not the whole request.
 */
export function recentResponses(messages: readonly ResponseLike[]): { recent: ResponseFacts[]; lastAt: number | null } {
	const recent: ResponseFacts[] = [];
	let lastAt: number | null = null;
	for (let i = messages.length - 1; i >= 0 && recent.length < 2; i--) {
		const m = messages[i] as ResponseLike;
		if (m.role !== "assistant" || m.stopReason === "error" || m.stopReason === "aborted") continue;
		// Only the newest response's own time: an older one would make the cache look idle for longer.
		if (recent.length === 0 && typeof m.timestamp === "number") lastAt = m.timestamp;
		recent.push({
			...(typeof m.provider === "string" && { provider: m.provider }),
			...(typeof m.model === "string" && { model: m.model }),
			...(isRecord(m.usage) && { usage: m.usage as Partial<Usage> }),
		});
	}
	return { recent, lastAt };
}

export interface RequestColdInput {
	/** The messages the request carries (its newest responses are read from the end). */
	messages: readonly ResponseLike[];
	/** Time of the newest cache warm-up on the branch (0 or less: none). */
	warmAt: number;
	/** The request's time; null when unknown. */
	now: number | null;
	lifetimeMs: number;
	/** Where the request goes. */
	provider?: string | null | undefined;
	model?: string | null | undefined;
	/** A recorded time on the clock `now` reads (the extension's test clocks); identity by default. */
	at?: (t: number) => number;
}

/**
 * The cold-cache rule for one request, as the extension, `status` and `simulate` all ask it: the last
 * activity is the newest successful response or cache warm-up, whichever is later (see coldReason).
 */
export function coldForRequest(input: RequestColdInput): ColdReason | null {
	const { recent, lastAt } = recentResponses(input.messages);
	const at = input.at ?? ((t: number) => t);
	const times: number[] = [];
	if (lastAt !== null) times.push(at(lastAt));
	if (input.warmAt > 0) times.push(at(input.warmAt));
	return coldReason({
		now: input.now,
		lastActivity: times.length === 0 ? null : Math.max(...times),
		lifetimeMs: input.lifetimeMs,
		recent,
		request: {
			...(typeof input.provider === "string" && { provider: input.provider }),
			...(typeof input.model === "string" && { model: input.model }),
		},
	});
}
