/**
 * Token harvesting for seed records: paths, identifiers and numbers found in text. One regex pass
 * each, counted into a Tally that ranks deterministically (more mentions first, then first seen).
 * Input text is already redacted; markers are skipped so their hash digits are not harvested.
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

	/** Keys by count (descending), then first sighting. */
	ranked(): string[] {
		return [...this.seen.entries()]
			.sort((a, b) => b[1].count - a[1].count || a[1].first - b[1].first)
			.map(([key]) => key);
	}
}

const FILE_EXTENSIONS =
	"tsx?|jsx?|mjs|cjs|mts|cts|json|jsonl|jsonc|md|mdx|txt|ya?ml|toml|lock|ini|cfg|conf|env|log|csv|tsv|" +
	"py|pyi|rs|go|java|kt|kts|scala|swift|c|h|cc|cpp|hpp|cs|rb|php|pl|lua|sh|bash|zsh|fish|ps1|sql|" +
	"css|scss|sass|less|html?|vue|svelte|astro|xml|svg|proto|graphql|gql|tf|nix|dockerfile|gradle|mk|patch|diff";

/**
 * Either a path with at least one slash (segments of word characters, dots, dashes, @ and +), or a
 * bare file name with a known extension. Never preceded by a path character or ':', so the host
 * and path of a URL are not taken for a file.
 */
const PATH = new RegExp(
	`(?<![\\w@.+\\-/:~\\\\])(?:(?:~/|\\.{1,2}/|/)?(?:[\\w@+\\-][\\w@.+\\-]*/)+[\\w@+\\-][\\w@.+\\-]*` +
		`|[\\w\\-][\\w.\\-]*\\.(?:${FILE_EXTENSIONS})(?![\\w]))`,
	"g",
);

/** Paths mentioned in `text`, in order of appearance (repeats included). */
export function findPaths(text: string): string[] {
	const out: string[] = [];
	for (const m of text.matchAll(PATH)) {
		const path = cleanPath(m[0]);
		if (path !== null) out.push(path);
	}
	return out;
}

export function cleanPath(raw: string): string | null {
	const path = raw.replace(/[.\-]+$/, "");
	if (path.length < 3 || path.length > SEED_LIMITS.files.chars || !/[A-Za-z]/.test(path)) return null;
	if (path.includes("[secret:")) return null;
	const slash = path.lastIndexOf("/");
	const last = path.slice(slash + 1);
	if (/\.[A-Za-z0-9]{1,10}$/.test(last) && !/^\.?[0-9.]+$/.test(last)) return path;
	if (slash < 0) return null;
	// A directory: anchored (/x/y, ./x, ~/x) or at least two levels deep. Rules out and/or, text/plain.
	if (/^(?:~\/|\.{1,2}\/|\/)/.test(path)) return path.length > 1 ? path : null;
	return path.indexOf("/") !== slash ? path : null;
}

/**
 * Word-like tokens: a marker (skipped), or a run of word characters with an optional numeric
 * dotted tail, so versions (v1.2.3, 0.80.6) and decimals stay whole.
 */
const TOKEN = /\[secret:[0-9a-f]{8}\]|[\w$]+(?:\.\d+)*/g;

/** Common all-caps words that say nothing specific. */
const CAPS_STOP = new Set(
	"TODO NOTE FIXME HTTP HTTPS JSON HTML YAML TOML UTF8 ASCII TRUE FALSE NULL NONE INFO WARN DEBUG TRACE ERROR FAIL PASS PASSED FAILED OK README LICENSE CHANGELOG GET POST PUT DELETE PATCH HEAD THE AND FOR WITH FROM THIS THAT".split(
		" ",
	),
);

/** Count identifiers and numbers of `text` into the two tallies. */
export function harvestTokens(text: string, identifiers: Tally, numbers: Tally): void {
	for (const m of text.matchAll(TOKEN)) {
		const t = m[0];
		const c = t.charCodeAt(0);
		if (c === 91 /* [ */ || t.length < 3) continue;
		if (c >= 48 && c <= 57) {
			if (isHexId(t)) identifiers.add(t);
			else if (isNumber(t)) numbers.add(t);
			continue;
		}
		if (c === 118 /* v */ && t.length > 2 && isNumber(t.slice(1)) && t.includes(".")) {
			numbers.add(t);
			continue;
		}
		if (isIdentifier(t)) identifiers.add(t);
	}
}

function isNumber(t: string): boolean {
	return t.length >= 3 && t.length <= SEED_LIMITS.numbers.chars && /^\d+(?:\.\d+)*$/.test(t);
}

/** Commit ids and hashes: 7 to 64 lowercase hex digits with at least one letter. */
function isHexId(t: string): boolean {
	return t.length >= 7 && t.length <= 64 && /^[0-9a-f]+$/.test(t) && /[a-f]/.test(t);
}

/**
 * An identifier worth keeping: 4–64 characters and shaped like a name a program uses (snake_case,
 * camelCase, PascalCase with an inner capital, letters with digits, ALL_CAPS), but not random-looking.
 */
export function isIdentifier(t: string): boolean {
	if (t.length < 4 || t.length > SEED_LIMITS.identifiers.chars || t.includes(".")) return false;
	const snake = /[A-Za-z0-9]_[A-Za-z0-9]/.test(t);
	const camel = /[a-z][A-Z]/.test(t);
	const digits = /\d/.test(t);
	const caps = /^[A-Z][A-Z0-9_]{3,}$/.test(t);
	if (!(snake || camel || digits || caps)) return false;
	if (caps && CAPS_STOP.has(t)) return false;
	return !looksGenerated(t);
}

/** Mixed-case alphanumerics that switch character class constantly: a key or blob, not a name. */
function looksGenerated(t: string): boolean {
	if (t.length < 16 || t.includes("_") || !/\d/.test(t) || !/[a-z]/.test(t) || !/[A-Z]/.test(t)) return false;
	let switches = 0;
	for (let i = 1; i < t.length; i++) if (charClass(t.charCodeAt(i)) !== charClass(t.charCodeAt(i - 1))) switches++;
	return switches * 3 > t.length;
}

function charClass(c: number): number {
	if (c >= 48 && c <= 57) return 0;
	if (c >= 65 && c <= 90) return 1;
	return 2;
}
