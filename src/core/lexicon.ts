/**
 * The risk-line lexicon: lines that signal failure and must survive folding verbatim.
 * Deliberately broad and case-insensitive: a false positive costs a few digest tokens,
 * a false negative hides an error from the model.
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
];

const RISK_PATTERNS: readonly RegExp[] = [
	new RegExp(`(?:^|[^a-z0-9_])(?:${WORDS.join("|")})(?![a-z])`, "i"),
	/npm err!/i,
	/\berr!/i,
	/\bexit(?:ed)?(?: with)?(?: code| status)?[ :=]+(?:[1-9]\d*|-\d+)\b/i,
	/\b(?:status|code|returned)[ :=]+(?:[1-9]\d*)\b.*\b(?:exit|status|code)\b/i,
	/\bE[A-Z]{3,}\b(?::|\s)/, // ENOENT:, EACCES, ECONNREFUSED
	/[✗✘❌⨯]/,
	/^\s*(?:FAIL|FAILED|ERROR|ERR|FATAL|PANIC)\b/,
	/\b[A-Z][A-Za-z]*(?:Error|Exception)\b/,
	/\berror\[[A-Z]?\d+\]/i, // rustc error[E0308]
	/\b(?:TS|CS)\d{4}\b/, // tsc / C# diagnostics
];

/** True when the line signals a failure in any spelling the lexicon knows. */
export function isRiskLine(line: string): boolean {
	if (line.length === 0) return false;
	for (const pattern of RISK_PATTERNS) if (pattern.test(line)) return true;
	return false;
}

export interface RiskLine {
	/** 1-based line number in the original block. */
	line: number;
	text: string;
}

/** Every risk line of a text, in order, with 1-based line numbers. */
export function findRiskLines(text: string): RiskLine[] {
	const out: RiskLine[] = [];
	const lines = splitLines(text);
	for (let i = 0; i < lines.length; i++) {
		const line = lines[i] as string;
		if (isRiskLine(line)) out.push({ line: i + 1, text: line });
	}
	return out;
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
