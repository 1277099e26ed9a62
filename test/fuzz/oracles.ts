/**
 * Independent checks shared by the fuzz properties. Each throws an Error naming what broke, so the
 * same code runs under bun test, under Node (the cross-runtime run) and in `npm run fuzz`.
 */
import { createHash } from "node:crypto";
import {
	clip,
	FIRST_LINE_MAX_CHARS,
	RISK_LINE_CAP,
	RISK_LINE_MAX_CHARS,
	RISK_SHARE_OF_BLOCK,
} from "../../src/core/digest.ts";
import type { MaskedBlock } from "../../src/core/layers.ts";
import { findRiskLines, isRiskLine, splitLines } from "../../src/core/lexicon.ts";
import { groupDigits } from "../../src/core/tokens.ts";

export class InvariantError extends Error {}

export function fail(what: string, detail?: unknown): never {
	const extra = detail === undefined ? "" : `: ${JSON.stringify(detail)?.slice(0, 600)}`;
	throw new InvariantError(`${what}${extra}`);
}

export function sha(text: string): string {
	return createHash("sha256").update(text, "utf8").digest("hex");
}

export interface DigestCheck {
	riskLines: number;
	kept: number;
	/** Lines the global scan flags that a per-line test does not (harmless false positives). */
	extraFlagged: number;
}

/**
 * A digest against its original: the marker and extent in the header, the first line, and every risk
 * line verbatim (clipped at RISK_LINE_MAX_CHARS with the cut marked) in order, within the cap, with
 * the overflow marked. Risk lines are found two ways: the lexicon's per-line test over the split
 * lines (the definition), and the one-pass scan the digest uses; the scan must miss none.
 */
export function checkDigest(digest: string, original: string, code: string): DigestCheck {
	const lines = digest.split("\n");
	const header = lines[0] ?? "";
	if (!header.startsWith(`{#${code} FOLDED} `)) fail("digest does not open with its marker", header);
	const all = splitLines(original);
	if (!header.includes(` · ${groupDigits(original.length)} chars, ${groupDigits(all.length)} lines`))
		fail("digest header does not state the extent", { header, chars: original.length, lines: all.length });

	const perLine: Array<{ line: number; text: string }> = [];
	all.forEach((text, i) => {
		if (isRiskLine(text)) perLine.push({ line: i + 1, text });
	});
	const scanned = findRiskLines(original);
	const scannedKeys = new Set(scanned.map((r) => `${r.line}\u0000${r.text}`));
	for (const r of perLine) {
		if (!scannedKeys.has(`${r.line}\u0000${r.text}`)) fail("a risk line was missed by the scan", r);
	}

	let at = 1;
	const first = all.map((l) => l.trim()).find((l) => l.length > 0);
	// The digest trims the first line with String.prototype.trim, which also treats U+2028/2029 as space.
	const firstTrimmed = firstNonBlank(original);
	if (firstTrimmed !== null) {
		const expected = `> ${clip(firstTrimmed, FIRST_LINE_MAX_CHARS)}`;
		if (lines[at] !== expected) fail("digest first line", { got: lines[at], expected });
		at++;
	} else if (first !== undefined) {
		fail("digest lost the first non-blank line", first);
	}

	const shareBudget = Math.floor(original.length * RISK_SHARE_OF_BLOCK);
	let kept = 0;
	let used = 0;
	for (const r of scanned) {
		const rendered = `! L${r.line}: ${clip(r.text, RISK_LINE_MAX_CHARS)}`;
		if (lines[at] !== rendered) break;
		kept++;
		used += rendered.length;
		at++;
	}
	const total = scanned.length;
	if (kept > RISK_LINE_CAP) fail("more risk lines than the cap", kept);
	if (total > 0 && kept === 0) fail("a block with risk lines kept none of them", scanned[0]);
	if (kept < Math.min(total, RISK_LINE_CAP)) {
		// Only the block's share budget may stop it early.
		const next = scanned[kept] as { line: number; text: string };
		const nextLen = `! L${next.line}: ${clip(next.text, RISK_LINE_MAX_CHARS)}`.length;
		if (used + nextLen <= shareBudget) fail("risk lines cut short of the cap and the share budget", { kept, total });
	}
	if (total > kept) {
		const marker = `! +${total - kept} more risk lines (recall_folded ${code} grep=…)`;
		if (lines[at] !== marker) fail("the cap's overflow is not marked", { got: lines[at], marker });
		at++;
	}
	if (at !== lines.length) fail("unexpected trailing digest lines", lines.slice(at));
	return { riskLines: total, kept, extraFlagged: scanned.length - perLine.length };
}

function firstNonBlank(text: string): string | null {
	for (const line of text.split("\n")) {
		const t = line.trim();
		if (t.length > 0) return t;
	}
	return null;
}

/** A masked block's recorded extent and hash against the original text. */
export function checkExtent(block: MaskedBlock, original: string): void {
	if (block.sha256 !== sha(original)) fail("recorded sha256 is not the original's", block.code);
	if (block.chars !== original.length) fail("recorded chars", { chars: block.chars, actual: original.length });
	const bytes = Buffer.byteLength(original, "utf8");
	if (block.bytes !== bytes) fail("recorded bytes", { bytes: block.bytes, actual: bytes });
	const lines = splitLines(original).length;
	if (block.lines !== lines) fail("recorded lines", { lines: block.lines, actual: lines });
	if (!Number.isFinite(block.tokens) || block.tokens < 0) fail("recorded tokens", block.tokens);
}

/** Every number in a value is finite (no NaN, no Infinity) and, where it counts tokens, not negative. */
export function checkFinite(label: string, value: unknown, nonNegative = true): void {
	const walk = (v: unknown, path: string) => {
		if (typeof v === "number") {
			if (!Number.isFinite(v)) fail(`${label}: ${path} is ${v}`);
			if (nonNegative && v < 0) fail(`${label}: ${path} is negative (${v})`);
		} else if (Array.isArray(v)) {
			for (const [i, x] of v.entries()) walk(x, `${path}[${i}]`);
		} else if (v !== null && typeof v === "object") {
			for (const [k, x] of Object.entries(v)) walk(x, `${path}.${k}`);
		}
	};
	walk(value, "");
}
