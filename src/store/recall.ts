/**
 * Recall answers for the recall_folded tool and the CLI. Finds originals through the ledger (or
 * memory), verifies them, and renders capped answers with the pure helpers in core/recall.
 */
import { closeSync, constants, fstatSync, openSync, readFileSync } from "node:fs";
import { isAbsolute } from "node:path";
import { renderPath } from "../core/inputs.ts";
import type { MaskedBlock, MaskIndex } from "../core/layers.ts";
import {
	capLines,
	closestCodes,
	echoArg,
	formatLine,
	grepLines,
	matchingLines,
	normalizeCode,
	parseLineRange,
	sliceLines,
	validateNeedle,
} from "../core/recall.ts";
import { groupDigits } from "../core/tokens.ts";
import type { Ledger } from "./ledger.ts";
import { findOriginal, type MemoryOriginals } from "./originals.ts";

export interface RecallRequest {
	code?: string;
	search?: string;
	grep?: string;
	lines?: string;
	/** Token cap for the answer; null means uncapped (the CLI's default). */
	maxTokens: number | null;
}

export interface RecallSources {
	index: MaskIndex;
	ledger: Ledger | null;
	memory?: MemoryOriginals;
}

export interface RecallAnswer {
	ok: boolean;
	text: string;
	/** Codes whose originals were served (the CLI reports them). */
	served: string[];
}

const SEARCH_LINES_PER_BLOCK = 20;
/** A full-output file larger than this is not read for recall. */
export const MAX_FULL_OUTPUT_BYTES = 256 * 1024 * 1024;

export function answerRecall(req: RecallRequest, src: RecallSources): RecallAnswer {
	const cap = req.maxTokens ?? Number.MAX_SAFE_INTEGER / 8;
	if (req.search !== undefined && req.code === undefined) return search(req.search, cap, src);
	if (req.code === undefined || req.code.trim() === "") {
		return fail("recall_folded needs a code (from a {#code FOLDED} marker) or search=<text>.");
	}
	if (req.search !== undefined) return fail("use either a code or search=, not both.");
	if (req.grep !== undefined && req.lines !== undefined) return fail("use either grep= or lines=, not both.");
	const code = normalizeCode(req.code);
	const block = src.index.byCode.get(code);
	if (block === undefined) return unknownCode(req.code, src.index);
	const original = findOriginal(block, src.ledger, src.memory);
	if (!original.ok) return fail(original.message);

	const full = original.fullOutputPath !== undefined ? readFullOutput(original.fullOutputPath) : undefined;
	const header = describe(block);
	if (req.grep !== undefined) {
		const bad = validateNeedle(req.grep, "grep");
		if (bad) return fail(bad.message);
		const body = full?.ok ? full.text : original.text;
		const { lines, matches } = grepLines(body, req.grep);
		const from = full?.ok
			? ` (from the full output file ${original.fullOutputPath})`
			: fullNote(full, original.fullOutputPath);
		if (matches === 0) return { ok: true, text: `${header}: no line matches "${req.grep}"${from}.`, served: [code] };
		const rendered = lines.map((l) => (l === null ? "--" : formatLine(l)));
		const text = capLines(
			[`${header}: ${matches} matching line(s) for "${req.grep}"${from}`, ...rendered],
			cap,
			(i, n) => cutHint(code, rendered, i, n),
		);
		return { ok: true, text, served: [code] };
	}
	if (req.lines !== undefined) {
		const range = parseLineRange(req.lines);
		if ("type" in range) return fail(range.message);
		const body = full?.ok ? full.text : original.text;
		const { lines, totalLines } = sliceLines(body, range);
		const from = full?.ok
			? ` (from the full output file ${original.fullOutputPath})`
			: fullNote(full, original.fullOutputPath);
		if (lines.length === 0)
			return fail(`{#${code}} has ${groupDigits(totalLines)} lines${from}; lines=${req.lines} is past the end.`);
		const rendered = lines.map(formatLine);
		const text = capLines(
			[`${header}: lines ${lines[0]?.line}-${lines.at(-1)?.line} of ${groupDigits(totalLines)}${from}`, ...rendered],
			cap,
			(i, n) => cutHint(code, rendered, i, n),
		);
		return { ok: true, text, served: [code] };
	}
	const body = original.text.split("\n");
	const text = capLines([`${header} (sha256 verified):`, ...body], cap, (i, n) => {
		const firstCutLine = i; // body line i is file line i (the header takes index 0)
		return `[… cut at the answer cap: lines ${firstCutLine}-${firstCutLine + n - 1} not shown. Ask recall_folded code=${code} lines=${firstCutLine}-${firstCutLine + 199} or grep=<text>]`;
	});
	return { ok: true, text, served: [code] };
}

function search(needle: string, cap: number, src: RecallSources): RecallAnswer {
	const bad = validateNeedle(needle, "search");
	if (bad) return fail(bad.message);
	const out: string[] = [];
	const served: string[] = [];
	const problems: string[] = [];
	let total = 0;
	let blocksHit = 0;
	const candidates = prefilter(needle, src);
	for (const block of src.index.byCode.values()) {
		if (candidates !== null && !candidates.has(block.entryId)) continue;
		const original = findOriginal(block, src.ledger, src.memory);
		if (!original.ok) {
			problems.push(original.message);
			continue;
		}
		const { lines, total: n } = matchingLines(original.text, needle, SEARCH_LINES_PER_BLOCK);
		if (n === 0) continue;
		blocksHit++;
		total += n;
		served.push(block.code);
		out.push(`${describe(block)}: ${n} match(es)`);
		for (const l of lines) out.push(`  ${formatLine(l)}`);
		if (n > lines.length)
			out.push(`  … ${n - lines.length} more: recall_folded code=${block.code} grep=${JSON.stringify(needle)}`);
	}
	const searched = src.index.byCode.size;
	const head =
		total === 0
			? `search "${needle}": no match in ${searched} folded block(s).`
			: `search "${needle}": ${total} matching line(s) in ${blocksHit} of ${searched} folded block(s).`;
	const tailNotes =
		problems.length > 0
			? [`(${problems.length} block(s) could not be searched: ${problems[0]}${problems.length > 1 ? " …" : ""})`]
			: [];
	const text = capLines(
		[head, ...out, ...tailNotes],
		cap,
		(_i, n) => `[… ${n} more line(s) cut at the answer cap; narrow the search or recall one code with grep=]`,
	);
	return { ok: true, text, served };
}

/**
 * Entry ids whose raw ledger line can contain the needle, or null when no prefilter applies (no
 * ledger, or a needle whose JSON escaping is not certain). A line that does not contain the needle's
 * JSON-escaped form cannot contain the needle once decoded, so nothing is missed.
 */
function prefilter(needle: string, src: RecallSources): Set<string> | null {
	if (src.ledger === null || !/^[\x20-\x7e]+$/.test(needle)) return null;
	try {
		src.ledger.refresh();
	} catch {
		return null;
	}
	const escaped = JSON.stringify(needle)
		.slice(1, -1)
		.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
	const ids = new Set<string>();
	for (const block of src.index.byCode.values()) ids.add(block.entryId);
	return src.ledger.matchingIds(ids, new RegExp(escaped, "gi"));
}

function describe(block: MaskedBlock): string {
	if (block.kind === "input") return describeInput(block);
	const what = block.kind === "thinking" ? "thinking" : (block.toolName ?? "tool");
	return `{#${block.code}} ${what} · ${groupDigits(block.chars)} chars, ${groupDigits(block.lines)} lines`;
}

/** A folded tool-call input: the tool, where the value sat in its arguments, its size. */
function describeInput(block: MaskedBlock): string {
	const where = renderPath(block.path ?? []);
	return `{#${block.code}} ${block.toolName ?? "tool"} input ${where} · ${groupDigits(block.chars)} chars, ${groupDigits(block.lines)} lines`;
}

function cutHint(code: string, rendered: readonly string[], i: number, n: number): string {
	const next = rendered[i - 1];
	const m = next ? /^L(\d+):/.exec(next) : null;
	const from = m ? Number(m[1]) : undefined;
	return `[… ${n} more line(s) cut at the answer cap.${from !== undefined ? ` Continue with recall_folded code=${code} lines=${from}-${from + 199}` : ""}]`;
}

function unknownCode(raw: string, index: MaskIndex): RecallAnswer {
	if (index.byCode.size === 0)
		return fail(`no folded block is called "${echoArg(raw)}": nothing has been folded in this session yet.`);
	const near = closestCodes(normalizeCode(raw), index.byCode.keys());
	return fail(
		`no folded block is called "${echoArg(raw)}". Closest codes: ${near.map((c) => `{#${c}}`).join(", ")}. Or use search=<text> to find a detail in every folded block.`,
	);
}

type FullRead = { ok: true; text: string } | { ok: false; message: string };

/**
 * Read exactly the recorded full-output file, if it still exists and is a regular file of sane size.
 * The path must be absolute (Pi records it so; a relative one would be read from wherever the reader
 * runs) and must not be a symlink: bash writes a regular file in the temp directory, and a link
 * planted there later (or the file swapped for one) would make recall read some other file. Opened
 * with O_NOFOLLOW and checked on the open descriptor, so nothing can be swapped in between.
 */
function readFullOutput(path: string): FullRead {
	if (!isAbsolute(path) || path.includes("\0"))
		return { ok: false, message: `the recorded full output path ${echoArg(path)} is not an absolute path` };
	let fd: number | undefined;
	try {
		fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
		const st = fstatSync(fd);
		if (!st.isFile()) return { ok: false, message: `${path} is not a regular file` };
		if (st.size > MAX_FULL_OUTPUT_BYTES)
			return { ok: false, message: `${path} is larger than ${MAX_FULL_OUTPUT_BYTES} bytes` };
		return { ok: true, text: readFileSync(fd, "utf8") };
	} catch (error) {
		const code = (error as NodeJS.ErrnoException).code;
		if (code === "ENOENT") return { ok: false, message: `the full output file ${path} no longer exists` };
		if (code === "ELOOP" || code === "EMLINK")
			return { ok: false, message: `${path} is a symbolic link now, not the file bash wrote; it is not followed` };
		return { ok: false, message: `the full output file ${path} could not be read (${code ?? "error"})` };
	} finally {
		if (fd !== undefined) closeSync(fd);
	}
}

function fullNote(full: FullRead | undefined, path: string | undefined): string {
	if (full === undefined || path === undefined) return "";
	return full.ok ? "" : ` (from the folded text only: ${full.message}, so lines dropped by truncation are gone)`;
}

function fail(text: string): RecallAnswer {
	return { ok: false, text, served: [] };
}
