import { renderPath } from "../core/inputs.ts";
import type { MaskedBlock, MaskIndex } from "../core/layers.ts";
import {
	capLines,
	closestCodes,
	echoArg,
	formatLine,
	formatMatch,
	grepLines,
	matchingLines,
	type NumberedLine,
	normalizeCode,
	parseLineRange,
	type RecallSyntax,
	sliceLines,
	TOOL_SYNTAX,
	validateNeedle,
} from "../core/recall.ts";
import { groupDigits } from "../core/tokens.ts";
import { plural } from "../core/wording.ts";
import { BLOCK, type LineSource, sourceOf } from "./full-output.ts";
import type { Ledger } from "./ledger.ts";
import { findOriginal, type MemoryOriginals } from "./originals.ts";

export interface RecallRequest {
	code?: string;
	search?: string;
	grep?: string;
	lines?: string;
	/** Token cap for the answer; null means uncapped (the CLI's default). */
	maxTokens: number | null;
	/** How messages name the arguments (default: the recall_folded tool's). */
	syntax?: RecallSyntax;
	/** Also return the lines as data (`context-fold recall --json`), not only as text. */
	withLines?: boolean;
}

/** One line of a recalled block, numbered in its source. */
export interface RecalledLine {
	line: number;
	text: string;
	/** grep: whether the line matches (the others are context). */
	match?: boolean;
}

/** The lines an answer served from one block, and whose numbering they use. */
export interface RecalledBlock {
	code: string;
	/** The block's own text as folded, or the full output file the tool wrote (Pi's bash truncation). */
	source: { type: "block" } | { type: "full-output"; path: string };
	/** Matching lines (grep, search), else the lines of the block or file. */
	total: number;
	lines: RecalledLine[];
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
	/** With `withLines`: the served lines as data. */
	blocks?: RecalledBlock[];
}

const SEARCH_LINES_PER_BLOCK = 20;

export function answerRecall(req: RecallRequest, src: RecallSources): RecallAnswer {
	const cap = req.maxTokens ?? Number.MAX_SAFE_INTEGER / 8;
	const syntax = req.syntax ?? TOOL_SYNTAX;
	if (req.search !== undefined && req.code === undefined) return search(req, cap, src, syntax);
	if (req.code === undefined || req.code.trim() === "") {
		return fail(`${syntax.command} needs a code (from a {#code FOLDED} marker) or ${syntax.arg("search", "<text>")}.`);
	}
	if (req.search !== undefined) return fail(`use either a code or ${syntax.name("search")}, not both.`);
	if (req.grep !== undefined && req.lines !== undefined)
		return fail(`use either ${syntax.name("grep")} or ${syntax.name("lines")}, not both.`);
	const code = normalizeCode(req.code);
	const block = src.index.byCode.get(code);
	if (block === undefined) return unknownCode(req.code, src.index, syntax);
	const original = findOriginal(block, src.ledger, src.memory);
	if (!original.ok) return fail(original.message);

	const header = describe(block);
	const answer = (
		text: string,
		lines: readonly RecalledLine[],
		total: number,
		from: Pick<LineSource, "source"> = BLOCK,
	): RecallAnswer => ({
		ok: true,
		text,
		served: [code],
		...(req.withLines === true && { blocks: [{ code, source: from.source, total, lines: [...lines] }] }),
	});
	if (req.grep !== undefined) {
		const bad = validateNeedle(req.grep, "grep", syntax);
		if (bad) return fail(bad.message);
		const from = sourceOf(original);
		const { lines, matches } = grepLines(from.body, req.grep);
		const quoted = echoArg(req.grep);
		if (matches === 0) return answer(`${header}: no line matches "${quoted}"${from.note}.`, [], 0, from);
		const grep = req.grep;
		const rendered = lines.map((l) => (l === null ? "--" : l.match ? formatMatch(l, grep) : formatLine(l)));
		const text = capLines(
			[`${header}: ${plural(matches, "matching line")} for "${quoted}"${from.note}`, ...rendered],
			cap,
			(i, n) => cutHint(code, rendered, i, n, syntax),
		);
		const lower = req.grep.toLowerCase();
		const numbered = lines
			.filter((l): l is NumberedLine => l !== null)
			.map((l) => ({ ...l, match: l.text.toLowerCase().includes(lower) }));
		return answer(text, numbered, matches, from);
	}
	if (req.lines !== undefined) {
		const range = parseLineRange(req.lines, syntax);
		if ("type" in range) return fail(range.message);
		const from = sourceOf(original);
		const { lines, totalLines } = sliceLines(from.body, range);
		if (lines.length === 0)
			return fail(
				`{#${code}} has ${groupDigits(totalLines)} lines${from.note}; ${syntax.arg("lines", echoArg(req.lines))} is past the end.`,
			);
		const rendered = lines.map(formatLine);
		const text = capLines(
			[
				`${header}: lines ${lines[0]?.line}-${lines.at(-1)?.line} of ${groupDigits(totalLines)}${from.note}`,
				...rendered,
			],
			cap,
			(i, n) => cutHint(code, rendered, i, n, syntax),
		);
		return answer(text, lines, totalLines, from);
	}
	const body = original.text.split("\n");
	const text = capLines([`${header} (sha256 verified):`, ...body], cap, (i, n) => {
		const firstCutLine = i; // body line i is file line i (the header takes index 0)
		return `[… cut at the answer cap: lines ${firstCutLine}-${firstCutLine + n - 1} not shown. ${syntax.verb} ${syntax.ask(code, "lines", `${firstCutLine}-${firstCutLine + 199}`)} or ${syntax.arg("grep", "<text>")}]`;
	});
	return answer(
		text,
		body.map((t, i) => ({ line: i + 1, text: t })),
		body.length,
	);
}

function search(req: RecallRequest, cap: number, src: RecallSources, syntax: RecallSyntax): RecallAnswer {
	const needle = req.search as string;
	const bad = validateNeedle(needle, "search", syntax);
	if (bad) return fail(bad.message);
	const out: string[] = [];
	const served: string[] = [];
	const problems: string[] = [];
	const blocks: RecalledBlock[] = [];
	let total = 0;
	let blocksHit = 0;
	const candidates = prefilter(needle, src);
	for (const block of src.index.byCode.values()) {
		// A block with a full output file is searched there (as grep reads it), whatever its ledger line holds.
		if (candidates !== null && !candidates.has(block.entryId) && block.fullOutputPath === undefined) continue;
		const original = findOriginal(block, src.ledger, src.memory);
		if (!original.ok) {
			problems.push(original.message);
			continue;
		}
		const from = sourceOf(original);
		const { lines, total: n } = matchingLines(from.body, needle, SEARCH_LINES_PER_BLOCK);
		if (n === 0) continue;
		blocksHit++;
		total += n;
		served.push(block.code);
		if (req.withLines === true) blocks.push({ code: block.code, source: from.source, total: n, lines });
		out.push(`${describe(block)}: ${plural(n, "match", "matches")}${from.note}`);
		for (const l of lines) out.push(`  ${formatMatch(l, needle)}`);
		if (n > lines.length) out.push(`  … ${n - lines.length} more: ${syntax.ask(block.code, "grep", needle)}`);
	}
	const text = capLines(
		[searchHead(echoArg(needle), src.index.byCode.size, total, blocksHit, problems), ...out],
		cap,
		(_i, n) =>
			`[… ${plural(n, "more line")} cut at the answer cap; narrow the search or recall one code with ${syntax.name("grep")}]`,
	);
	return { ok: true, text, served, ...(req.withLines === true && { blocks }) };
}

/**
 * The first line of a search answer. Blocks that could not be read are never counted as searched:
 * "no match" is said only of blocks whose verified text was looked through, and when none could be,
 * the answer says that nothing was searched, and why.
 */
function searchHead(quoted: string, blocks: number, total: number, hit: number, problems: string[]): string {
	const why = problems.length === 0 ? "" : `${problems[0]}${problems.length > 1 ? " …" : ""}`;
	if (problems.length > 0 && problems.length === blocks)
		return `search "${quoted}": could not search: none of the ${plural(blocks, "folded block")} could be read, so nothing was searched (${why}).`;
	const readable = blocks - problems.length;
	const found =
		total === 0
			? problems.length > 0
				? `no match in the ${readable} of ${plural(blocks, "folded block")} that could be read.`
				: `no match in ${plural(blocks, "folded block")}.`
			: `${plural(total, "matching line")} in ${hit} of ${plural(blocks, "folded block")}.`;
	const unread = problems.length > 0 ? ` ${plural(problems.length, "block")} could not be searched: ${why}` : "";
	return `search "${quoted}": ${found}${unread}`;
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
	const candidates = src.ledger.matchingIds(ids, new RegExp(escaped, "gi"));
	// An entry the file no longer holds cannot be ruled out by its bytes: it goes on to findOriginal,
	// which says why it cannot be searched, rather than being counted as searched without a match.
	for (const id of ids) if (!src.ledger.has(id)) candidates.add(id);
	return candidates;
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

function cutHint(code: string, rendered: readonly string[], i: number, n: number, syntax: RecallSyntax): string {
	const next = rendered[i - 1];
	const m = next ? /^L(\d+):/.exec(next) : null;
	const from = m ? Number(m[1]) : undefined;
	return `[… ${plural(n, "more line")} cut at the answer cap.${from !== undefined ? ` Continue with ${syntax.ask(code, "lines", `${from}-${from + 199}`)}` : ""}]`;
}

function unknownCode(raw: string, index: MaskIndex, syntax: RecallSyntax): RecallAnswer {
	if (index.byCode.size === 0)
		return fail(`no folded block is called "${echoArg(raw)}": nothing has been folded in this session yet.`);
	const near = closestCodes(normalizeCode(raw), index.byCode.keys());
	return fail(
		`no folded block is called "${echoArg(raw)}". Closest codes: ${near.map((c) => `{#${c}}`).join(", ")}. Or use ${syntax.arg("search", "<text>")} to find a detail in every folded block.`,
	);
}

function fail(text: string): RecallAnswer {
	return { ok: false, text, served: [] };
}
