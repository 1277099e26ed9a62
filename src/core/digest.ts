/**
 * Digests: what the model sees in place of a folded block. Deterministic: the same block and code
 * always render the same bytes. Risk lines are kept verbatim within a documented cap, and the cap's
 * overflow is always marked.
 */
import { findRiskLines } from "./lexicon.ts";
import { groupDigits } from "./tokens.ts";

/** Lowercase hex sha256 of the UTF-8 bytes of a string. Injected: the core does no crypto itself. */
export type Hash = (text: string) => string;

export const CODE_LENGTH = 6;
/** At most this many risk lines are copied into one digest. */
export const RISK_LINE_CAP = 8;
/** A longer risk line keeps its first this-many characters and marks the cut. */
export const RISK_LINE_MAX_CHARS = 240;
/** Risk lines may take at most this share of the original block's characters (but always one line). */
export const RISK_SHARE_OF_BLOCK = 0.4;
export const FIRST_LINE_MAX_CHARS = 120;
export const CALL_SUMMARY_MAX_CHARS = 80;

/** The marker that opens every digest. */
export function foldMarker(code: string): string {
	return `{#${code} FOLDED}`;
}

/**
 * A short stable code for a block, from its identity. On the (rare) collision with a code already
 * in use the code grows by two characters, so resolution depends only on the committed history.
 */
export function deriveCode(hash: Hash, entryId: string, blockIndex: number, taken: ReadonlySet<string>): string {
	return codeFromIdentity(hash, `context-fold:${entryId}:${blockIndex}`, taken);
}

/** The code rule itself, for any identity string (tool-call inputs add their argument path). */
export function codeFromIdentity(hash: Hash, identity: string, taken: ReadonlySet<string>): string {
	const digest = hash(identity);
	for (let len = CODE_LENGTH; len <= digest.length; len += 2) {
		const code = digest.slice(0, len);
		if (!taken.has(code)) return code;
	}
	return digest;
}

export interface DigestInput {
	code: string;
	kind: "toolResult" | "thinking";
	toolName?: string;
	callSummary?: string;
	text: string;
	/** Appended to the header, e.g. where recall is served from in an ephemeral session. */
	note?: string;
	/** Precomputed facts of `text` (see digestFacts); computed here when absent. */
	facts?: DigestFacts;
}

export interface DigestResult {
	digest: string;
	lines: number;
	riskLines: number;
	riskLinesKept: number;
}

/**
 * What a digest says about its text, independent of the code it gets: line count, first non-empty
 * line, and the risk lines kept within the cap. The adapter computes these once, when a result is
 * new, so a fold event does not rescan every block it masks.
 */
export interface DigestFacts {
	chars: number;
	lines: number;
	first: string | null;
	/** Rendered risk lines (`! L12: …`), within RISK_LINE_CAP and the block's share budget. */
	risk: string[];
	/** All risk lines in the text, kept or not. */
	riskTotal: number;
}

export function digestFacts(text: string): DigestFacts {
	const risks = findRiskLines(text);
	const shareBudget = Math.floor(text.length * RISK_SHARE_OF_BLOCK);
	const risk: string[] = [];
	let used = 0;
	for (const r of risks) {
		if (risk.length >= RISK_LINE_CAP) break;
		const rendered = `! L${r.line}: ${clip(r.text, RISK_LINE_MAX_CHARS)}`;
		if (risk.length > 0 && used + rendered.length > shareBudget) break;
		risk.push(rendered);
		used += rendered.length;
	}
	return { chars: text.length, lines: countLines(text), first: firstNonEmptyLine(text), risk, riskTotal: risks.length };
}

export function renderDigest(input: DigestInput): DigestResult {
	const facts =
		input.facts !== undefined && input.facts.chars === input.text.length ? input.facts : digestFacts(input.text);
	const label = input.kind === "thinking" ? "thinking" : (input.toolName ?? "tool");
	const call = input.callSummary ? ` ${quoteCall(input.callSummary)}` : "";
	const header = `${foldMarker(input.code)} ${label}${call} · ${groupDigits(input.text.length)} chars, ${groupDigits(facts.lines)} lines${input.note ? ` · ${input.note}` : ""}`;
	const out = [header];
	if (facts.first !== null) out.push(`> ${clip(facts.first, FIRST_LINE_MAX_CHARS)}`);
	out.push(...facts.risk);
	if (facts.riskTotal > facts.risk.length) {
		out.push(`! +${facts.riskTotal - facts.risk.length} more risk lines (recall_folded ${input.code} grep=…)`);
	}
	return { digest: out.join("\n"), lines: facts.lines, riskLines: facts.riskTotal, riskLinesKept: facts.risk.length };
}

/** Lines as splitLines counts them: LF-separated, a trailing newline does not start a line. */
export function countLines(text: string): number {
	if (text.length === 0) return 0;
	let n = 1;
	let i = text.indexOf("\n");
	while (i >= 0) {
		if (i < text.length - 1) n++;
		i = text.indexOf("\n", i + 1);
	}
	return n;
}

/** The first line with non-blank content, trimmed (CR dropped), without splitting the whole text. */
function firstNonEmptyLine(text: string): string | null {
	let start = 0;
	while (start < text.length) {
		let end = text.indexOf("\n", start);
		if (end < 0) end = text.length;
		const line = text.slice(start, end).trim();
		if (line.length > 0) return line;
		start = end + 1;
	}
	return null;
}

function quoteCall(summary: string): string {
	const oneLine = summary.replace(/\s+/g, " ").trim();
	return `\`${clip(oneLine, CALL_SUMMARY_MAX_CHARS).replace(/`/g, "'")}\``;
}

/**
 * Keep the first `max` characters and say how many were cut. A cut never splits a surrogate pair:
 * a lone surrogate is not valid UTF-16 text, and tool-call arguments reach providers as JSON without
 * Pi's surrogate sanitizing.
 */
export function clip(text: string, max: number): string {
	if (text.length <= max) return text;
	let cut = max;
	const last = text.charCodeAt(cut - 1);
	if (cut > 0 && last >= 0xd800 && last <= 0xdbff) cut--;
	return `${text.slice(0, cut)}…[+${text.length - cut} chars]`;
}

/** UTF-8 byte length without an encoder: the extent recorded for every folded block. */
export function utf8Length(text: string): number {
	// Most tool output is ASCII: the regex finds the first other character far faster than a loop
	// over every character, and the loop starts there.
	const from = text.search(NON_ASCII);
	if (from < 0) return text.length;
	let bytes = from;
	for (let i = from; i < text.length; i++) {
		const c = text.charCodeAt(i);
		if (c < 0x80) bytes += 1;
		else if (c < 0x800) bytes += 2;
		else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
			const next = text.charCodeAt(i + 1);
			if (next >= 0xdc00 && next <= 0xdfff) {
				bytes += 4;
				i++;
			} else bytes += 3;
		} else bytes += 3;
	}
	return bytes;
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: the ASCII range starts at NUL on purpose.
const NON_ASCII = /[^\x00-\x7f]/;
