/**
 * A provider billing model for replayed requests: what each prompt would have cost, given only the
 * bytes of consecutive requests and when they were sent. Pure, deterministic, chars/4 tokens.
 *
 * - Each request is a list of serialized parts (a fixed prefix for the system prompt and tools, then
 *   one part per message). The longest common prefix with the previous request is read from cache;
 *   the rest is written to cache (Anthropic style) or billed as uncached input (OpenAI and Gemini).
 * - The cache lives `ttl` after the previous request (5 minutes by default, 1 hour on request); a
 *   longer gap bills the whole prompt again.
 * - OpenAI caches only prompts of 1,024 tokens or more, in steps of 128 tokens.
 *
 * The same model backs `context-fold simulate`; a benchmark can feed it the requests a fake provider
 * received, so both count the same way.
 */
import { costOf, PRICE_PRESETS, type PricePreset, type PriceSchedule, type Prices, ratesAt } from "./accounting.ts";
import type { ViewMessage } from "./blocks.ts";
import type { Usage } from "./tokens.ts";
import { CHARS_PER_TOKEN, IMAGE_TOKEN_ESTIMATE } from "./tokens.ts";
import { commonPrefixLength } from "./values.ts";

export type CacheStyle = "write" | "uncached";
export type CacheTtl = "5m" | "1h";
export const CACHE_TTL_MS: Readonly<Record<CacheTtl, number>> = { "5m": 5 * 60_000, "1h": 60 * 60_000 };

export interface BillingModel {
	preset: PricePreset;
	ttl: CacheTtl;
	/** Where the uncached part of a prompt is billed: as cache writes, or as plain input. */
	style: CacheStyle;
	/** US dollars per million tokens. */
	prices: Prices;
	ttlMs: number;
	/** A cached prefix shorter than this is not read from cache at all. */
	minCachedTokens: number;
	/** Cached tokens are counted in whole steps of this size. */
	cacheStep: number;
}

export function billingModel(preset: PricePreset, ttl: CacheTtl = "5m"): BillingModel {
	const base: Prices = { ...PRICE_PRESETS[preset] };
	if (preset === "anthropic") {
		// Anthropic bills a one-hour cache write at 2x the input price (5 minutes: 1.25x, the preset's own).
		const prices = ttl === "1h" ? { ...base, cacheWrite: base.input * 2 } : base;
		return { preset, ttl, style: "write", prices, ttlMs: CACHE_TTL_MS[ttl], minCachedTokens: 0, cacheStep: 1 };
	}
	if (preset === "openai") {
		return {
			preset,
			ttl,
			style: "uncached",
			prices: base,
			ttlMs: CACHE_TTL_MS[ttl],
			minCachedTokens: 1024,
			cacheStep: 128,
		};
	}
	return { preset, ttl, style: "uncached", prices: base, ttlMs: CACHE_TTL_MS[ttl], minCachedTokens: 0, cacheStep: 1 };
}

/** Stands in for an image: as long as the core's fixed image estimate, so chars/4 agrees with it. */
const IMAGE_PART = `"image:${"#".repeat(IMAGE_TOKEN_ESTIMATE * CHARS_PER_TOKEN - 8)}"`;

/**
 * One message as the provider sees it, deterministically: role, tool call id, and each block's kind
 * and text, a tool call's own id with it (a replaced block contributes its replacement, e.g. a fold
 * digest). No timestamps, usage or other bookkeeping: only what goes on the wire, so equal messages
 * serialize to equal strings.
 */
export function serializeMessage(m: ViewMessage, replaced?: ReadonlyMap<number, string>): string {
	const parts: string[] = [JSON.stringify(m.role), m.toolCallId === undefined ? "null" : JSON.stringify(m.toolCallId)];
	for (let j = 0; j < m.blocks.length; j++) {
		const b = m.blocks[j];
		if (b === undefined) continue;
		if (b.kind === "image") {
			parts.push(IMAGE_PART);
			continue;
		}
		const text = JSON.stringify(replaced?.get(j) ?? b.text);
		// A tool call goes out with its id (the result names it too): on every API Pi speaks.
		const id = b.kind === "toolCall" && b.call?.id !== undefined ? `,${JSON.stringify(b.call.id)}` : "";
		parts.push(`[${JSON.stringify(b.kind)},${text}${id}]`);
	}
	return `[${parts.join(",")}]`;
}

export interface BillableRequest {
	/** Serialized parts in prompt order; a part equal to the previous request's part at the same place is cached. */
	parts: readonly string[];
	/** Tokens of a prefix identical in every request and not in `parts` (system prompt, tool definitions). */
	fixedTokens: number;
	/** When the request was sent (ms); null when unknown, in which case the cache is taken to be warm. */
	at: number | null;
	/** Output tokens of the response. */
	output: number;
	/** The prices of the model this request went to; the billing model's own prices when absent. */
	prices?: PriceSchedule;
	/** The model whose cache serves this request (provider/id): after another one, nothing is cached. */
	cacheKey?: string;
}

export interface BilledRequest extends Usage {
	/** Prompt tokens: input + cacheRead + cacheWrite. */
	prompt: number;
	/** US dollars at the model's prices, output included. */
	cost: number;
	/** The previous request is not a prefix of this one: something already sent was changed. */
	prefixBreak: boolean;
	/** The gap since the previous request outlived the cache, or the model changed: everything was billed again. */
	expired: boolean;
}

/** Bills requests in order; each bill depends on the one before it (the cache). */
export class PromptCache {
	private prev: BillableRequest | null = null;

	constructor(readonly model: BillingModel) {}

	bill(req: BillableRequest): BilledRequest {
		let totalChars = 0;
		for (const p of req.parts) totalChars += p.length + 1;
		const prompt = Math.max(0, req.fixedTokens) + Math.ceil(totalChars / CHARS_PER_TOKEN);
		const prev = this.prev;
		this.prev = req;
		let cached = 0;
		let prefixBreak = false;
		let expired = false;
		if (prev !== null) {
			const shared = sharedPrefix(prev.parts, req.parts);
			prefixBreak = shared.parts < prev.parts.length;
			expired =
				(prev.at !== null && req.at !== null && req.at - prev.at > this.model.ttlMs) ||
				(prev.cacheKey !== undefined && req.cacheKey !== undefined && prev.cacheKey !== req.cacheKey);
			if (!expired && prev.fixedTokens === req.fixedTokens) {
				cached = Math.max(0, req.fixedTokens) + Math.floor(shared.chars / CHARS_PER_TOKEN);
			}
		}
		const pricing = requestPricing(this.model, req.prices, prompt);
		cached = pricing.caches ? Math.min(prompt, cached) : 0;
		if (cached < this.model.minCachedTokens) cached = 0;
		cached -= cached % this.model.cacheStep;
		const rest = prompt - cached;
		const usage: Usage =
			pricing.style === "write"
				? { input: 0, output: req.output, cacheRead: cached, cacheWrite: rest }
				: { input: rest, output: req.output, cacheRead: cached, cacheWrite: 0 };
		return { ...usage, prompt, cost: costOf(usage, pricing.rates), prefixBreak, expired };
	}
}

/**
 * A request sent without the prompt cache (Pi asks for none on its compaction summaries): its whole
 * prompt billed as plain input, at its model's prices for that prompt size. It reads nothing from the
 * conversation's cache and leaves it as it was.
 */
export function billUncached(
	model: BillingModel,
	req: { prompt: number; output: number; prices?: PriceSchedule },
): BilledRequest {
	const prompt = Math.max(0, req.prompt);
	const usage: Usage = { input: prompt, output: req.output, cacheRead: 0, cacheWrite: 0 };
	const rates = requestPricing(model, req.prices, prompt).rates;
	return { ...usage, prompt, cost: costOf(usage, rates), prefixBreak: false, expired: false };
}

export interface RequestPricing {
	rates: Prices;
	style: CacheStyle;
	/** False for a model with an input price and no cache-read price: it has no prompt cache. */
	caches: boolean;
}

/**
 * How one request is billed. Without prices of its own, by the billing model (a preset). With its
 * model's prices: the tier for the prompt's size; the uncached part as cache writes where the model
 * has a cache-write price (at twice the input price for a one-hour cache, as Anthropic bills it),
 * as plain input otherwise; and no cache at all where only the input is priced.
 */
export function requestPricing(model: BillingModel, prices: PriceSchedule | undefined, prompt: number): RequestPricing {
	if (prices === undefined) return { rates: model.prices, style: model.style, caches: true };
	const rates = ratesAt(prices, prompt);
	if (rates.cacheWrite > 0) {
		const write = model.ttl === "1h" ? rates.input * 2 : rates.cacheWrite;
		return { rates: { ...rates, cacheWrite: write }, style: "write", caches: true };
	}
	return { rates, style: "uncached", caches: !(rates.cacheRead === 0 && rates.input > 0) };
}

export function billRequests(requests: Iterable<BillableRequest>, model: BillingModel): BilledRequest[] {
	const cache = new PromptCache(model);
	const out: BilledRequest[] = [];
	for (const r of requests) out.push(cache.bill(r));
	return out;
}

/** Characters shared at the start of two part lists (separators included) and how many whole parts match. */
export function sharedPrefix(a: readonly string[], b: readonly string[]): { chars: number; parts: number } {
	const n = Math.min(a.length, b.length);
	let i = 0;
	let chars = 0;
	// Unchanged messages are usually the very same string, which makes this comparison cheap.
	while (i < n && a[i] === b[i]) {
		chars += (b[i] as string).length + 1;
		i++;
	}
	if (i < n) chars += commonPrefixLength(a[i] as string, b[i] as string);
	return { chars, parts: i };
}
