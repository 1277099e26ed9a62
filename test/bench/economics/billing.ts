/**
 * The provider billing simulator. Each request is serialized deterministically (tools, then
 * messages, keys sorted) and compared with the previous request of the conversation: the longest
 * common prefix is billed as cache reads, the rest as cache writes (a provider that bills writes,
 * like Anthropic) or as plain input (writes free, like OpenAI and Gemini). After a gap longer than
 * the cache lifetime, measured on the trace's recorded timestamps, nothing is read: the whole prompt
 * is billed again. Pi's compaction-summary requests are billed as uncached input with a fixed output.
 * Prices are the project's presets (src/core/accounting.ts); only the ratio knobs live here.
 */
import { costOf, PRICE_PRESETS, type PricePreset, type Prices } from "../../../src/core/accounting.ts";
import type { Usage } from "../../../src/core/tokens.ts";

export interface BillingModel {
	name: string;
	prices: Prices;
	/** Cache lifetime in ms; a longer gap between requests reads nothing. */
	lifetimeMs: number;
	charsPerToken: number;
	/** Output tokens billed for each compaction-summary request. */
	summaryOutputTokens: number;
}

/** What the simulator needs to know about one request; kept per request so any model can re-bill it. */
export interface RequestShape {
	kind: "turn" | "summary";
	/** Request time (ms, from the trace). */
	t: number;
	/** Serialized prompt characters (tools + messages). */
	chars: number;
	/** Characters shared with the previous turn request (0 for the first, and for summary requests). */
	prefixChars: number;
	outputTokens: number;
}

const PRESET_LABELS: Record<PricePreset, string> = { anthropic: "Anthropic", openai: "OpenAI", gemini: "Gemini" };

export const FIVE_MINUTES = 5 * 60_000;
export const ONE_HOUR = 60 * 60_000;
export const SUMMARY_TOKENS = 1_500;

export function billingModel(
	preset: PricePreset | Prices,
	options: { lifetimeMs?: number; charsPerToken?: number; name?: string } = {},
): BillingModel {
	const prices = typeof preset === "string" ? PRICE_PRESETS[preset] : preset;
	const lifetimeMs = options.lifetimeMs ?? FIVE_MINUTES;
	const charsPerToken = options.charsPerToken ?? 4;
	const label = typeof preset === "string" ? PRESET_LABELS[preset] : "custom prices";
	return {
		name:
			options.name ??
			`${label}, ${lifetimeMs >= ONE_HOUR ? "1 h" : `${lifetimeMs / 60_000} min`}, chars/${charsPerToken}`,
		prices,
		lifetimeMs,
		charsPerToken,
		summaryOutputTokens: SUMMARY_TOKENS,
	};
}

/** Writes billed as such (Anthropic) or, when the preset charges nothing for them, as plain input. */
export function billsWrites(prices: Prices): boolean {
	return prices.cacheWrite > 0;
}

export function tokensOf(chars: number, charsPerToken: number): number {
	return Math.ceil(Math.max(0, chars) / charsPerToken);
}

export interface Billed {
	usage: Usage;
	cost: number;
	/** The gap since the previous turn request exceeded the lifetime: nothing was read. */
	expired: boolean;
}

/**
 * Bills one request. `previousTurnAt` is the time of the previous turn request (undefined for the
 * first); the cache is read only when the gap is within the lifetime.
 */
export function bill(shape: RequestShape, previousTurnAt: number | undefined, model: BillingModel): Billed {
	const total = tokensOf(shape.chars, model.charsPerToken);
	if (shape.kind === "summary") {
		const usage = { input: total, output: model.summaryOutputTokens, cacheRead: 0, cacheWrite: 0 };
		return { usage, cost: costOf(usage, model.prices), expired: false };
	}
	const expired = previousTurnAt !== undefined && shape.t - previousTurnAt > model.lifetimeMs;
	const cacheRead = expired ? 0 : Math.min(total, Math.floor(shape.prefixChars / model.charsPerToken));
	const rest = total - cacheRead;
	const usage = billsWrites(model.prices)
		? { input: 0, output: shape.outputTokens, cacheRead, cacheWrite: rest }
		: { input: rest, output: shape.outputTokens, cacheRead, cacheWrite: 0 };
	return { usage, cost: costOf(usage, model.prices), expired };
}

/** Bills a whole arm's requests in order, tracking the previous turn time. */
export function billAll(shapes: readonly RequestShape[], model: BillingModel): Billed[] {
	let previous: number | undefined;
	return shapes.map((s) => {
		const b = bill(s, previous, model);
		if (s.kind === "turn") previous = s.t;
		return b;
	});
}
