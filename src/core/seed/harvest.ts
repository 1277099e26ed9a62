/**
 * Token harvesting for seed records: paths, identifiers and numbers found in text. Each is one
 * linear scan (hand-written where a regex would test every position), counted into a Tally that
 * ranks deterministically. Input text is already redacted; markers are skipped so their hash
 * digits are not harvested.
 */
import { SEED_LIMITS } from "./schema.ts";

/** Counts of distinct strings with the position each was first seen, for stable ranking. */
export class Tally {
	private readonly seen = new Map<string, { count: number; first: number }>();
	private order = 0;

	add(key: string): void {
		const hit = this.seen.get(key);
		if (hit === undefined) this.seen.set(key, { count: 1, first: this.order++ });
		else hit.count++;
	}

	get size(): number {
		return this.seen.size;
	}

	/** Keys by class (higher first, when given), then count (descending), then first sighting. */
	ranked(classOf?: (key: string) => number): string[] {
		return [...this.seen.entries()]
			.map(([key, v]) => ({ key, c: classOf === undefined ? 0 : classOf(key), ...v }))
			.sort((a, b) => b.c - a.c || b.count - a.count || a.first - b.first)
			.map((e) => e.key);
	}
}

const FILE_EXTENSIONS =
	"tsx?|jsx?|mjs|cjs|mts|cts|json|jsonl|jsonc|md|mdx|txt|ya?ml|toml|lock|ini|cfg|conf|env|log|csv|tsv|" +
	"py|pyi|rs|go|java|kt|kts|scala|swift|c|h|cc|cpp|hpp|cs|rb|php|pl|lua|sh|bash|zsh|fish|ps1|sql|" +
	"css|scss|sass|less|html?|vue|svelte|astro|xml|svg|proto|graphql|gql|tf|nix|dockerfile|gradle|mk|patch|diff";

const WORD = 1;
const PATH_CHAR = 2;
/** ASCII character classes: word characters ([A-Za-z0-9_$]) and path characters ([\w@.+~/-]). */
const CHARS = new Uint8Array(128);
const ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_";
for (const ch of ALNUM) CHARS[ch.charCodeAt(0)] = WORD | PATH_CHAR;
CHARS[36] = WORD; // '$' belongs to identifiers, never to paths
for (const ch of "@.+~/-") CHARS[ch.charCodeAt(0)] = PATH_CHAR;

/**
 * Applied to one maximal run of path characters that contains '/' or '.': either a path with at
 * least one slash (segments of word characters, dots, dashes, @ and +), or a bare file name with a
 * known extension.
 */
const PATH_AT_START = new RegExp(
	`^(?:(?:~/|\\.{1,2}/|/)?(?:[\\w@+\\-][\\w@.+\\-]*/)+[\\w@+\\-][\\w@.+\\-]*` +
		`|[\\w\\-][\\w.\\-]*\\.(?:${FILE_EXTENSIONS})(?![\\w]))`,
);

/** Stems that make `x.log`, `x.env`, `x.diff` a property access rather than a file name. */
const CODE_STEMS = new Set(
	"this self process console window document module exports require req res ctx event err error os path fs util Math JSON Object Array String Number Promise".split(
		" ",
	),
);

/**
 * Paths mentioned in `text`, in order of appearance (repeats included). A path starts a run of
 * path characters not preceded by ':' or '\\', so the host and path of a URL are not taken for a file.
 * A hand-written scan: one pass, and the regex runs only on runs holding a '/' or a '.'.
 */
export function findPaths(text: string): string[] {
	const out: string[] = [];
	const n = text.length;
	// Jump from separator to separator ('/' and '.' are rare next to letters) and widen to the run.
	const separator = /[/.]/g;
	for (let m = separator.exec(text); m !== null; m = separator.exec(text)) {
		let start = m.index;
		while (start > 0 && isPathChar(text.charCodeAt(start - 1))) start--;
		let end = m.index + 1;
		while (end < n && isPathChar(text.charCodeAt(end))) end++;
		separator.lastIndex = end;
		const before = start > 0 ? text.charCodeAt(start - 1) : 0;
		if (before === 58 /* : */ || before === 92 /* \\ */) continue;
		// The host and path of a URL whose credentials were redacted (`https://u:[secret:…]@host/x`):
		// the marker breaks the run, so look back along the same word for the "://" it belongs to.
		if (before === 93 /* ] */ && inUrl(text, start)) continue;
		const found = PATH_AT_START.exec(text.slice(start, end));
		const path = found === null ? null : cleanPath(found[0]);
		if (path !== null) out.push(path);
	}
	return out;
}

/**
 * Pi's own temporary files: `<tmpdir>/pi-bash-<16 hex>.log` for a truncated bash result's full
 * output (and the same scheme for its other output files). They name no file of the project, and
 * their random hex is no identifier: the index leaves them out.
 */
const PI_TEMP_FILE = /(?:^|\/)pi-[a-z]+(?:-[a-z]+)*-[0-9a-f]{8,}\.[A-Za-z0-9]+$/;
const PI_TEMP_NAME = /pi-[a-z]+(?:-[a-z]+)*-[0-9a-f]{8,}\.[A-Za-z0-9]+/g;
/** Pi's note under a truncated bash result: its line counts are Pi's, not the output's. Bounded: no backtracking blow-up. */
const PI_TRUNCATION_NOTE = /\[Showing [^\]\n]{0,200}Full output: [^\]\n]{1,4096}\]/g;

export function isPiTempFile(path: string): boolean {
	return PI_TEMP_FILE.test(path);
}

/**
 * Text without Pi's truncation notes and temporary file paths (directory included), for harvesting
 * paths, identifiers and numbers. Linear: each name is found by its literal start, then widened left
 * over the path characters before it.
 */
export function withoutPiTempFiles(text: string): string {
	if (!text.includes("pi-")) return text;
	const noted = text.replace(PI_TRUNCATION_NOTE, " ");
	let out = "";
	let last = 0;
	for (const m of noted.matchAll(PI_TEMP_NAME)) {
		let start = m.index;
		// "api-…" is not Pi's: the name starts the path or follows a slash.
		if (start > 0 && isPathChar(noted.charCodeAt(start - 1)) && noted[start - 1] !== "/") continue;
		while (start > last && isPathChar(noted.charCodeAt(start - 1))) start--;
		out += `${noted.slice(last, start)} `;
		last = m.index + m[0].length;
	}
	return out + noted.slice(last);
}

/** Whether the word that ends at `start` (no whitespace or quote in between) holds a "://". */
function inUrl(text: string, start: number): boolean {
	for (let i = start - 1; i >= 2 && start - i < URL_LOOKBACK; i--) {
		const c = text.charCodeAt(i);
		if (c <= 32 || c === 34 || c === 39 || c === 96) return false;
		if (c === 47 && text.charCodeAt(i - 1) === 47 && text.charCodeAt(i - 2) === 58) return true;
	}
	return false;
}

/** How far back a URL's "://" is looked for: a URL's scheme, user name and marker are short. */
const URL_LOOKBACK = 512;

export function cleanPath(raw: string): string | null {
	const path = raw.replace(/[.-]+$/, "");
	if (path.length < 3 || path.length > SEED_LIMITS.files.chars || !/[A-Za-z]/.test(path)) return null;
	if (path.includes("[secret:") || isPiTempFile(path)) return null;
	const slash = path.lastIndexOf("/");
	if (slash < 0 && CODE_STEMS.has(path.slice(0, path.indexOf(".")))) return null;
	const last = path.slice(slash + 1);
	if (/\.[A-Za-z0-9]{1,10}$/.test(last) && !/^\.?[0-9.]+$/.test(last)) return path;
	if (slash < 0) return null;
	// A directory: anchored (/x/y, ./x, ~/x) or at least two levels deep. Rules out and/or, text/plain.
	if (/^(?:~\/|\.{1,2}\/|\/)/.test(path)) return path.length > 1 ? path : null;
	return path.indexOf("/") !== slash ? path : null;
}

/** Common all-caps words that say nothing specific. */
const CAPS_STOP = new Set(
	"TODO NOTE FIXME HTTP HTTPS JSON HTML YAML TOML UTF8 ASCII TRUE FALSE NULL NONE INFO WARN DEBUG TRACE ERROR FAIL PASS PASSED FAILED OK README LICENSE CHANGELOG GET POST PUT DELETE PATCH HEAD THE AND FOR WITH FROM THIS THAT".split(
		" ",
	),
);

/**
 * Numbers worth most first: versions and decimals, then numbers of four digits or more (ports,
 * ids, sizes), then the three-digit rest, which in tool output is mostly line numbers.
 */
export function numberClass(n: string): number {
	if (n.includes(".")) return 2;
	return n.length >= 4 ? 1 : 0;
}

/**
 * Count identifiers and numbers of `text` into the two tallies. Tokens are maximal runs of word
 * characters, extended by numeric dotted tails so versions (v1.2.3, 0.80.6) and decimals stay
 * whole. Secret markers are skipped so their hash digits are never harvested.
 */
export function harvestTokens(text: string, identifiers: Tally, numbers: Tally): void {
	const n = text.length;
	let i = 0;
	while (i < n) {
		const c = text.charCodeAt(i);
		if (!isWord(c)) {
			if (c === 91 /* [ */ && text.startsWith("[secret:", i)) {
				const end = text.indexOf("]", i);
				i = end < 0 ? n : end + 1;
			} else i++;
			continue;
		}
		const start = i;
		while (i < n && isWord(text.charCodeAt(i))) i++;
		while (i + 1 < n && text.charCodeAt(i) === 46 && isDigit(text.charCodeAt(i + 1))) {
			i += 2;
			while (i < n && isDigit(text.charCodeAt(i))) i++;
		}
		const length = i - start;
		if (length < 3 || length > SEED_LIMITS.identifiers.chars) continue;
		const kind = classifyToken(text, start, i);
		if (kind === IDENTIFIER) identifiers.add(text.slice(start, i));
		else if (kind === NUMBER) numbers.add(text.slice(start, i));
	}
}

function isWord(c: number): boolean {
	return c < 128 && ((CHARS[c] as number) & WORD) !== 0;
}

function isPathChar(c: number): boolean {
	return c < 128 && ((CHARS[c] as number) & PATH_CHAR) !== 0;
}

function isDigit(c: number): boolean {
	return c >= 48 && c <= 57;
}

const OTHER = 0;
const IDENTIFIER = 1;
const NUMBER = 2;

/**
 * One pass over a token's characters. Numbers: 3–32 characters of digits and dots (v1.2.3 too).
 * Hex ids: 7–64 lowercase hex digits with a letter (commits, hashes). Identifiers: 4–64 characters
 * shaped like a name a program uses (snake_case, camelCase, an inner capital, letters with digits,
 * ALL_CAPS) and not random-looking.
 */
function classifyToken(text: string, start: number, end: number): number {
	const first = text.charCodeAt(start);
	const length = end - start;
	let lower = 0;
	let upper = 0;
	let digit = 0;
	let dots = 0;
	let other = 0;
	let hexLetters = 0;
	let snake = false;
	let camel = false;
	let switches = 0;
	let prevClass = -1;
	for (let i = start; i < end; i++) {
		const c = text.charCodeAt(i);
		let cls: number;
		if (c >= 48 && c <= 57) {
			digit++;
			cls = 0;
		} else if (c >= 65 && c <= 90) {
			upper++;
			cls = 1;
			if (prevClass === 2) camel = true;
		} else if (c >= 97 && c <= 122) {
			lower++;
			cls = 2;
			if (c <= 102) hexLetters++;
		} else {
			if (c === 46) dots++;
			else if (c === 95 && i > start && i < end - 1 && prevClass >= 0) snake = true;
			else other++;
			cls = 3;
		}
		if (prevClass >= 0 && cls !== prevClass) switches++;
		prevClass = cls;
	}
	const letters = lower + upper;
	if (first >= 48 && first <= 57) {
		if (dots === 0 && upper === 0 && other === 0 && length >= 7 && hexLetters > 0 && hexLetters === lower)
			return IDENTIFIER;
		return letters === 0 && other === 0 && length <= SEED_LIMITS.numbers.chars ? NUMBER : OTHER;
	}
	if (first === 118 /* v */ && dots > 0 && letters === 1 && other === 0) {
		return length <= SEED_LIMITS.numbers.chars ? NUMBER : OTHER;
	}
	if (dots > 0 || length < 4) return OTHER;
	const caps = lower === 0 && upper > 0;
	if (!(snake || camel || digit > 0 || caps)) return OTHER;
	if (caps && length <= 9 && CAPS_STOP.has(text.slice(start, end))) return OTHER;
	// Mixed-case alphanumerics that switch character class constantly: a key or blob, not a name.
	const generated = length >= 16 && !snake && digit > 0 && lower > 0 && upper > 0 && switches * 3 > length;
	return generated ? OTHER : IDENTIFIER;
}

/** Whether a token would be harvested as an identifier (tests and docs use it). */
export function isIdentifier(t: string): boolean {
	return (
		t.length <= SEED_LIMITS.identifiers.chars && /^[\w$]+$/.test(t) && classifyToken(t, 0, t.length) === IDENTIFIER
	);
}
