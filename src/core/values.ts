/**
 * Small guards and text helpers every layer needs, in one place: reading untrusted JSON (session
 * files, settings, fold records) and clipping text for display.
 */

/** A plain JSON object (not null, not an array). */
export function isRecord(v: unknown): v is Record<string, unknown> {
	return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** A finite number, or 0 for anything else (NaN, Infinity, strings, null). */
export function finiteOr0(v: unknown): number {
	return typeof v === "number" && Number.isFinite(v) ? v : 0;
}

/** A finite number at or above 0, or 0 for anything else. */
export function nonNegativeOr0(v: unknown): number {
	return typeof v === "number" && Number.isFinite(v) && v > 0 ? v : 0;
}

/** At most `max` UTF-16 units, ending in "…" when cut, never splitting a surrogate pair. */
export function clipTo(text: string, max: number): string {
	if (text.length <= max) return text;
	if (max <= 0) return "";
	let end = max - 1;
	const c = text.charCodeAt(end - 1);
	if (c >= 0xd800 && c <= 0xdbff) end--;
	return `${text.slice(0, end)}…`;
}

/** Length of the longest common prefix of two strings, in UTF-16 units. */
export function commonPrefixLength(a: string, b: string): number {
	const n = Math.min(a.length, b.length);
	let i = 0;
	while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
	return i;
}
