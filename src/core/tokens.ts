/**
 * Token estimates. A uniform characters/4 heuristic, not a tokenizer: every threshold built on it is
 * approximate, which is good enough for budget decisions and is stated as such in the docs.
 */

export const CHARS_PER_TOKEN = 4;

/**
 * Fixed estimate for one image block. Images cannot be folded, but they still occupy the window;
 * counting them (instead of treating them as free) keeps image-heavy sessions from folding late.
 * 1,600 tokens is roughly what a ~1,100 px square screenshot costs on the major providers.
 */
export const IMAGE_TOKEN_ESTIMATE = 1600;

/** Tokens for a run of characters. Never negative, never NaN. */
export function estimateTokens(chars: number): number {
	if (!Number.isFinite(chars) || chars <= 0) return 0;
	return Math.ceil(chars / CHARS_PER_TOKEN);
}

/** A reported token count above this is not a real measurement (no model has a window near it). */
export const MAX_REPORTED_TOKENS = 1_000_000_000;

/** Compact human form: 950, 9.6k, 41k, 1.2M. Anything that is not a finite count reads as 0. */
export function formatTokens(tokens: number): string {
	const n = Number.isFinite(tokens) ? Math.max(0, Math.round(tokens)) : 0;
	if (n < 1000) return String(n);
	if (n < 10_000) return `${(n / 1000).toFixed(1)}k`;
	if (n < 1_000_000) return `${Math.round(n / 1000)}k`;
	return `${(n / 1_000_000).toFixed(1)}M`;
}

/** 12345 -> "12,345" without relying on the host locale. */
export function groupDigits(n: number): string {
	const s = String(Number.isFinite(n) ? Math.max(0, Math.round(n)) : 0);
	return s.replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

/** Token usage as a provider reports it for one response. */
export interface Usage {
	input: number;
	output: number;
	cacheRead: number;
	cacheWrite: number;
}
