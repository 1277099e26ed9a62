// Pretend prompt caching, so tests can check what context-fold does to cache reads without a real provider.

import { commonPrefixLength } from "../../../src/core/values.ts";
import type { Usage } from "./replies.ts";
import type { RecordedRequest } from "./requests.ts";

export interface PrefixCacheModel {
	mode: "prefix";
	/**
	 * "anthropic": uncached tail is reported as cacheWrite (input 0), like Anthropic with automatic breakpoints.
	 * "openai": uncached tail is plain input, like OpenAI's automatic caching.
	 */
	style?: "anthropic" | "openai";
	/** Compare with the previous request only (default), or with the best of all earlier requests. */
	against?: "previous" | "all";
	/** Characters per token; 4 is the usual rough estimate and what Pi's own estimator uses. */
	charsPerToken?: number;
}

export interface NoCacheModel {
	mode: "none";
	charsPerToken?: number;
}

export type CacheModel = PrefixCacheModel | NoCacheModel;

/**
 * Lets a test rewrite the computed usage of one request, e.g. to pretend the whole old prefix was
 * cached. Returning null sends no usage at all, like a provider that never reports it.
 */
export type UsageHook<R = RecordedRequest> = (ctx: {
	req: R;
	computed: Usage;
	/** Serialized prompt of this request, and of the requests before it, for custom cache maths. */
	serialized: string;
	previousSerialized: readonly string[];
}) => Partial<Usage> | undefined | null;

/** JSON with sorted keys: key order in Pi's objects must not look like a cache miss. */
export function stableStringify(value: unknown): string {
	if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
	if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? "null" : stableStringify(v))).join(",")}]`;
	const record = value as Record<string, unknown>;
	const keys = Object.keys(record)
		.filter((k) => record[k] !== undefined)
		.sort();
	return `{${keys.map((k) => `${JSON.stringify(k)}:${stableStringify(record[k])}`).join(",")}}`;
}

/**
 * The cacheable prompt: tools first, then messages, the order in which provider caches see them.
 * Request knobs (max tokens, stream options, cache keys) are left out because they are not prompt.
 */
export function serializePrompt(req: RecordedRequest): string {
	return `${stableStringify(req.body.tools ?? [])}${stableStringify(req.body.messages)}`;
}

export function tokensOf(chars: number, charsPerToken = 4): number {
	return Math.ceil(chars / charsPerToken);
}

export function computeUsage(
	model: CacheModel,
	serialized: string,
	previous: readonly string[],
	outputChars: number,
): Usage {
	const perToken = model.charsPerToken ?? 4;
	const total = tokensOf(serialized.length, perToken);
	const output = Math.max(1, tokensOf(outputChars, perToken));
	if (model.mode === "none") return { input: total, output, cacheRead: 0, cacheWrite: 0 };
	const candidates = model.against === "all" ? previous : previous.slice(-1);
	let prefixChars = 0;
	for (const earlier of candidates) prefixChars = Math.max(prefixChars, commonPrefixLength(serialized, earlier));
	// Floor the cached part: a provider only reuses whole tokens.
	const cacheRead = Math.min(total, Math.floor(prefixChars / perToken));
	const rest = total - cacheRead;
	if (model.style === "openai") return { input: rest, output, cacheRead, cacheWrite: 0 };
	return { input: 0, output, cacheRead, cacheWrite: rest };
}
