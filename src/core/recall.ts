/**
 * Recall answers, rendered from verified original text. Pure: the store finds and verifies the bytes,
 * this module searches, slices and caps them. Every answer is token-capped so a recall can never
 * re-flood what folding saved, and a capped answer says what was cut and how to ask for the rest.
 */
import { echoArg, escapeControls } from "./escape.ts";
import { splitLines } from "./lexicon.ts";
import { CHARS_PER_TOKEN, groupDigits } from "./tokens.ts";
import { commonPrefixLength } from "./values.ts";

export const GREP_CONTEXT_LINES = 2;
export const MAX_LINE_CHARS = 2000;
export const MAX_NEEDLE_CHARS = 500;
/** The widest `lines=` range accepted in one call. */
export const MAX_LINE_RANGE = 5000;

export { echoArg, escapeControls, MAX_ECHO_CHARS } from "./escape.ts";

export type RecallError = { type: "error"; message: string };

/** The arguments a recall message may name. */
export type RecallArg = "lines" | "grep" | "search";

/**
 * How recall's messages name its arguments, so the Pi tool speaks its own syntax (`lines=40-80`,
 * `recall_folded code=a1b2c3`) and the CLI its flags (`--lines 40-80`, `context-fold recall …`). The
 * rules and the sentences are shared; only these words differ.
 */
export interface RecallSyntax {
	/** What a request is sent to: "recall_folded", or "recall" for the CLI. */
	command: string;
	/** The verb that offers a follow-up request: "Ask" (the model asks a tool), "Run" (a person runs a command). */
	verb: string;
	/** An argument with a value to type: `lines=40-80`, `--lines 40-80`. */
	arg(name: RecallArg, value: string): string;
	/** A value that was given, quoted back (already made safe by echoArg): `lines="5-2"`, `--lines 5-2`. */
	echo(name: RecallArg, raw: string): string;
	/** The argument alone: `lines=`, `--lines`. */
	name(name: RecallArg): string;
	/** A whole follow-up request for one code: `recall_folded code=a1b2c3 lines=1-200`. */
	ask(code: string, name: "lines" | "grep", value: string): string;
}

/** The recall_folded tool's syntax: what the model types. */
export const TOOL_SYNTAX: RecallSyntax = {
	command: "recall_folded",
	verb: "Ask",
	arg: (name, value) => `${name}=${value}`,
	echo: (name, raw) => `${name}="${raw}"`,
	name: (name) => `${name}=`,
	ask: (code, name, value) =>
		`recall_folded code=${code} ${name}=${name === "grep" ? escapeControls(JSON.stringify(value)) : echoArg(value)}`,
};

export interface LineRange {
	start: number;
	end: number;
}

/** Parse `a-b` (1-based, inclusive), `a` alone, or `a-` (to the end). */
export function parseLineRange(input: string, syntax: RecallSyntax = TOOL_SYNTAX): LineRange | RecallError {
	const given = syntax.echo("lines", echoArg(input));
	const s = input.trim();
	const m = /^(\d+)(?:\s*-\s*(\d*))?$/.exec(s);
	if (!m)
		return {
			type: "error",
			message: `${given} is not a range; use ${syntax.arg("lines", "a-b")} with 1-based line numbers, e.g. ${syntax.arg("lines", "40-80")}.`,
		};
	const start = Number(m[1]);
	const end = m[2] === undefined ? start : m[2] === "" ? Number.MAX_SAFE_INTEGER : Number(m[2]);
	if (start < 1) return { type: "error", message: `${given}: line numbers start at 1.` };
	if (end < start)
		return { type: "error", message: `${given} is inverted; the first line must not be after the last.` };
	if (m[2] !== "" && end - start + 1 > MAX_LINE_RANGE) {
		// Only the width is known here, not the block's length: say what was asked and what is allowed.
		const example = Number.isSafeInteger(start + MAX_LINE_RANGE) ? start : 1;
		return {
			type: "error",
			message: `${given} is wider than ${groupDigits(MAX_LINE_RANGE)} lines; ask for at most ${groupDigits(MAX_LINE_RANGE)} at a time, e.g. ${syntax.arg("lines", `${example}-${example + MAX_LINE_RANGE - 1}`)}.`,
		};
	}
	return { start, end };
}

export function validateNeedle(
	needle: string,
	what: "search" | "grep",
	syntax: RecallSyntax = TOOL_SYNTAX,
): RecallError | null {
	const name = syntax.name(what);
	if (needle.trim().length === 0) return { type: "error", message: `${name} needs some text to look for.` };
	if (needle.length > MAX_NEEDLE_CHARS)
		return { type: "error", message: `${name} is longer than ${MAX_NEEDLE_CHARS} characters.` };
	if (needle.includes("\n")) return { type: "error", message: `${name} matches within one line; drop the line break.` };
	return null;
}

export interface NumberedLine {
	line: number;
	text: string;
	/** The line holds the needle (grep's context lines do not). */
	match?: boolean;
}

/** Case-insensitive literal match, line by line. */
export function matchingLines(
	text: string,
	needle: string,
	limit = Number.MAX_SAFE_INTEGER,
): { lines: NumberedLine[]; total: number } {
	const lower = needle.toLowerCase();
	const lines = splitLines(text);
	const out: NumberedLine[] = [];
	let total = 0;
	for (let i = 0; i < lines.length; i++) {
		const l = lines[i] as string;
		if (!l.toLowerCase().includes(lower)) continue;
		total++;
		if (out.length < limit) out.push({ line: i + 1, text: l });
	}
	return { lines: out, total };
}

/** Matching lines with context, merged into runs; a gap between runs is shown as "--". */
export function grepLines(
	text: string,
	needle: string,
	context = GREP_CONTEXT_LINES,
): { lines: Array<NumberedLine | null>; matches: number } {
	const lower = needle.toLowerCase();
	const lines = splitLines(text);
	const keep = new Uint8Array(lines.length);
	let matches = 0;
	for (let i = 0; i < lines.length; i++) {
		if (!(lines[i] as string).toLowerCase().includes(lower)) continue;
		matches++;
		for (let k = Math.max(0, i - context); k <= Math.min(lines.length - 1, i + context); k++) keep[k] = 1;
	}
	const out: Array<NumberedLine | null> = [];
	let last = -2;
	for (let i = 0; i < lines.length; i++) {
		if (!keep[i]) continue;
		if (last >= 0 && i > last + 1) out.push(null);
		const text = lines[i] as string;
		out.push({ line: i + 1, text, ...(text.toLowerCase().includes(lower) && { match: true }) });
		last = i;
	}
	return { lines: out, matches };
}

export function sliceLines(text: string, range: LineRange): { lines: NumberedLine[]; totalLines: number } {
	const lines = splitLines(text);
	const out: NumberedLine[] = [];
	for (let i = range.start - 1; i < Math.min(lines.length, range.end); i++)
		out.push({ line: i + 1, text: lines[i] as string });
	return { lines: out, totalLines: lines.length };
}

export function formatLine(l: NumberedLine): string {
	const text =
		l.text.length > MAX_LINE_CHARS
			? `${l.text.slice(0, MAX_LINE_CHARS)}…[+${l.text.length - MAX_LINE_CHARS} chars]`
			: l.text;
	return `L${l.line}: ${text}`;
}

/**
 * A line that holds the needle. A long one is shown as a window around the first match, so a match
 * near the end of a 50 MB line is seen rather than clipped away; what was cut on either side is said.
 */
export function formatMatch(l: NumberedLine, needle: string): string {
	if (l.text.length <= MAX_LINE_CHARS) return formatLine(l);
	// Lowercasing can change a string's length (rarely): the window is wide enough to absorb that.
	const at = Math.max(0, Math.min(l.text.toLowerCase().indexOf(needle.toLowerCase()), l.text.length));
	const start = Math.max(
		0,
		Math.min(at - Math.floor((MAX_LINE_CHARS - needle.length) / 2), l.text.length - MAX_LINE_CHARS),
	);
	const end = Math.min(l.text.length, start + MAX_LINE_CHARS);
	const before = start > 0 ? `[…${groupDigits(start)} chars]` : "";
	const after = end < l.text.length ? `…[+${l.text.length - end} chars]` : "";
	return `L${l.line}: ${before}${l.text.slice(start, end)}${after}`;
}

/**
 * Join rendered lines under a token cap. When something is cut, the last line says how much and
 * how to continue (the caller supplies the hint because it knows the code and mode).
 */
export function capLines(
	lines: readonly string[],
	maxTokens: number,
	hint: (firstCut: number, cutCount: number) => string,
): string {
	const budget = Math.max(1, Math.floor(maxTokens * CHARS_PER_TOKEN));
	let used = 0;
	const out: string[] = [];
	for (let i = 0; i < lines.length; i++) {
		const l = lines[i] as string;
		if (used + l.length + 1 > budget && out.length > 0) {
			out.push(hint(i, lines.length - i));
			return out.join("\n");
		}
		out.push(used + l.length + 1 > budget ? l.slice(0, budget) : l);
		used += l.length + 1;
	}
	return out.join("\n");
}

/** Up to `n` known codes closest to a mistyped one: shared prefix first, then edit distance. */
export function closestCodes(code: string, known: Iterable<string>, n = 3): string[] {
	// Codes are at most 64 characters: comparing more of a huge argument only costs time (quadratic).
	const c = code.slice(0, 64).toLowerCase();
	const scored: Array<[number, string]> = [];
	for (const k of known)
		scored.push([distance(c, k.slice(0, Math.max(c.length, 6))) - commonPrefixLength(c, k) * 0.5, k]);
	scored.sort((a, b) => a[0] - b[0] || (a[1] < b[1] ? -1 : 1));
	return scored.slice(0, n).map(([, k]) => k);
}

function distance(a: string, b: string): number {
	const prev = new Array<number>(b.length + 1);
	for (let j = 0; j <= b.length; j++) prev[j] = j;
	for (let i = 1; i <= a.length; i++) {
		let diag = prev[0] as number;
		prev[0] = i;
		for (let j = 1; j <= b.length; j++) {
			const tmp = prev[j] as number;
			prev[j] = Math.min((prev[j] as number) + 1, (prev[j - 1] as number) + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1));
			diag = tmp;
		}
	}
	return prev[b.length] as number;
}

/** Normalize what a model may type for a code: `{#a1b2c3 FOLDED}`, `#a1b2c3`, ` A1B2C3 `. */
export function normalizeCode(raw: string): string {
	return raw
		.trim()
		.replace(/^\{?#?/, "")
		.replace(/\s*FOLDED\}?$/i, "")
		.replace(/\}$/, "")
		.trim()
		.toLowerCase();
}
