/**
 * The risk-line lexicon: lines that signal failure and must survive folding verbatim.
 * Deliberately broad and case-insensitive: a false positive costs a few digest tokens,
 * a false negative hides an error from the model.
 *
 * Patterns never cross a line break ([^\S\n] instead of \s, lookbehind instead of a consumed
 * boundary), so one global scan over a whole block finds exactly the lines a per-line test would.
 */

const WORDS = [
	"errors?",
	"errno",
	"fail(?:s|ed|ing|ures?)?",
	"fatal",
	"exceptions?",
	"traceback",
	"panic(?:ked|s)?",
	"denied",
	"refused",
	"unauthori[sz]ed",
	"forbidden",
	"segfault",
	"segmentation fault",
	"core dumped",
	"abort(?:ed|ing)?",
	"crash(?:ed|es)?",
	"timed out",
	"timeout",
	"deadlock(?:ed)?",
	"undefined reference",
	"unresolved",
	"cannot",
	"can't",
	"could not",
	"couldn't",
	"unable to",
	"no such file",
	"not found",
	"assert(?:ion)?(?:error)?s?",
	"warn(?:ing|ings)?",
	"deprecated",
	"rejected",
	"killed",
	"out of memory",
	"stack overflow",
	"syntaxerror",
	"typeerror",
	"referenceerror",
	"non-zero",
	"nonzero",
	"err!",
];

const CASE_INSENSITIVE = [
	`(?<![a-z0-9_])(?:${WORDS.join("|")})(?![a-z])`,
	"\\bexit(?:ed)?(?: with)?(?: code| status)?[ \\t:=]+(?:[1-9]\\d*|-\\d+)\\b",
	"\\b(?:status|code|returned)[ \\t:=]+[1-9]\\d*\\b.*\\b(?:exit|status|code)\\b",
	"\\berror\\[[a-z]?\\d+\\]",
].join("|");

const CASE_SENSITIVE = [
	"\\bE[A-Z]{3,}\\b(?::|[^\\S\\r\\n])", // ENOENT:, EACCES, ECONNREFUSED
	"[✗✘❌⨯]",
	"^[^\\S\\n]*(?:FAIL|FAILED|ERROR|ERR|FATAL|PANIC)\\b",
	// Any identifier ending in Error or Exception (TypeError, IOException, parseError): a plain
	// literal, so the scan never backtracks over every capitalized word.
	"(?:Error|Exception)\\b",
	"\\b(?:TS|CS)\\d{4}\\b",
].join("|");

const LINE_CI = new RegExp(CASE_INSENSITIVE, "i");
const LINE_CS = new RegExp(CASE_SENSITIVE);

/** True when the line signals a failure in any spelling the lexicon knows. */
export function isRiskLine(line: string): boolean {
	if (line.length === 0) return false;
	return LINE_CI.test(line) || LINE_CS.test(line);
}

export interface RiskLine {
	/** 1-based line number in the original block. */
	line: number;
	text: string;
}

/** Every risk line of a text, in order, with 1-based line numbers. One pass per pattern set. */
export function findRiskLines(text: string): RiskLine[] {
	if (text.length === 0) return [];
	const starts = lineStarts(text);
	const hits = new Set<number>();
	scan(new RegExp(CASE_INSENSITIVE, "gim"), text, starts, hits);
	scan(new RegExp(CASE_SENSITIVE, "gm"), text, starts, hits);
	const lines = [...hits].sort((a, b) => a - b);
	const out: RiskLine[] = [];
	for (const index of lines) {
		const from = starts[index] as number;
		let to = index + 1 < starts.length ? (starts[index + 1] as number) - 1 : text.length;
		if (to > from && text.charCodeAt(to - 1) === 13) to--;
		const value = text.slice(from, to);
		// A final empty line after a trailing newline is not a line (splitLines drops it).
		if (index === starts.length - 1 && from === text.length) continue;
		out.push({ line: index + 1, text: value });
	}
	return out;
}

function scan(re: RegExp, text: string, starts: readonly number[], hits: Set<number>): void {
	for (;;) {
		const m = re.exec(text);
		if (m === null) return;
		const index = lineOf(starts, m.index);
		hits.add(index);
		// Skip to the next line: one hit per line is enough.
		const next = index + 1 < starts.length ? (starts[index + 1] as number) : text.length;
		re.lastIndex = Math.max(next, m.index + 1);
		if (re.lastIndex >= text.length) return;
	}
}

function lineStarts(text: string): number[] {
	const starts = [0];
	let i = text.indexOf("\n");
	while (i >= 0) {
		starts.push(i + 1);
		i = text.indexOf("\n", i + 1);
	}
	return starts;
}

/** Index of the line (from lineStarts-style offsets) that holds `offset`. */
export function lineOf(starts: readonly number[], offset: number): number {
	let lo = 0;
	let hi = starts.length - 1;
	while (lo < hi) {
		const mid = (lo + hi + 1) >> 1;
		if ((starts[mid] as number) <= offset) lo = mid;
		else hi = mid - 1;
	}
	return lo;
}

/** Split on LF, dropping a CR before it, so CRLF and LF outputs number lines the same way. */
export function splitLines(text: string): string[] {
	if (text.length === 0) return [];
	const lines = text.split("\n");
	if (lines[lines.length - 1] === "") lines.pop();
	for (let i = 0; i < lines.length; i++) {
		const l = lines[i] as string;
		if (l.endsWith("\r")) lines[i] = l.slice(0, -1);
	}
	return lines;
}
