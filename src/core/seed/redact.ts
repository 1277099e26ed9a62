/**
 * Secret redaction for everything the seed index stores or renders. A secret is replaced by
 * `[secret:<8 hex>]`, a short hash of its exact text, so two mentions of one secret still match
 * while the value itself stays only in Pi's session file. Two regex passes, each linear:
 *
 * 1. Shapes recognisable on their own (provider key prefixes, JWTs, PEM private key blocks,
 *    credentials inside URLs, Authorization headers). Case-sensitive.
 * 2. Assignments whose name says password, secret, token or key (`DB_PASSWORD=…`, `"apiKey": "…"`).
 *    Password-like names redact any literal value; token- and key-like names redact only values
 *    that look random, so `max_tokens=4096` and `key: "user-settings"` survive.
 *
 * Bare random-looking strings with no recognisable shape or name are left alone on purpose:
 * sha256 hashes, git commit ids and UUIDs look exactly like that, and the index needs them.
 */
import type { Hash } from "../digest.ts";

export const SECRET_MARKER_HEX = 8;
export const SECRET_MARKER_PATTERN = /\[secret:[0-9a-f]{8}\]/;

/** The marker that replaces one secret. Domain-separated so it never equals a content sha prefix. */
export function secretMarker(secret: string, hash: Hash): string {
	return `[secret:${hash(`context-fold:secret:${secret}`).slice(0, SECRET_MARKER_HEX)}]`;
}

const PREFIXED_TOKENS = [
	"sk-(?=[A-Za-z0-9_-]*\\d)[A-Za-z0-9_-]{20,}", // Anthropic sk-ant-…, OpenAI sk-proj-…, OpenRouter sk-or-…
	"(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{10,}", // Stripe secret and restricted keys
	"whsec_[A-Za-z0-9]{20,}", // Stripe webhook secret
	"(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|APKA)[A-Z0-9]{16}(?![A-Za-z0-9])", // AWS key ids
	"gh[pousr]_[A-Za-z0-9]{30,}", // GitHub tokens
	"github_pat_[A-Za-z0-9_]{40,}",
	"glpat-[A-Za-z0-9_-]{20,}", // GitLab
	"xox[abposre]-[A-Za-z0-9-]{10,}", // Slack
	"xapp-[A-Za-z0-9-]{10,}",
	"AIza[0-9A-Za-z_-]{35}", // Google API key
	"ya29\\.[0-9A-Za-z_-]{20,}", // Google OAuth access token
	"GOCSPX-[0-9A-Za-z_-]{20,}", // Google OAuth client secret
	"eyJ[A-Za-z0-9_-]{8,}\\.[A-Za-z0-9_-]{8,}\\.[A-Za-z0-9_-]{8,}", // JWT
	"npm_[A-Za-z0-9]{36}(?![A-Za-z0-9])",
	"pypi-[A-Za-z0-9_-]{50,}",
	"hf_[A-Za-z0-9]{30,}(?![A-Za-z0-9])", // Hugging Face
	"SG\\.[A-Za-z0-9_-]{16,}\\.[A-Za-z0-9_-]{16,}", // SendGrid
	"do[por]_v1_[a-f0-9]{64}", // DigitalOcean
	"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}", // Shopify
	"dapi[0-9a-f]{32}(?![A-Za-z0-9])", // Databricks
	"hvs\\.[A-Za-z0-9_-]{24,}", // HashiCorp Vault
	"gsk_[A-Za-z0-9]{40,}", // Groq
	"lin_api_[A-Za-z0-9]{30,}", // Linear
	"\\d{8,10}:AA[A-Za-z0-9_-]{33}(?![A-Za-z0-9_-])", // Telegram bot token
];

const PEM =
	"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----" +
	"(?:[\\s\\S]*?-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----" +
	// Unterminated (truncated output): the whole base64 and header lines that follow, raw or JSON-escaped.
	"|(?:(?:\\r?\\n|\\\\n)(?:[A-Za-z0-9+/=]{1,100}|[A-Z][A-Za-z-]*: [^\\r\\n\\\\]{0,200})(?=\\r?\\n|\\\\n|[\"']|$))*)";

/**
 * Pass 1. Every rule is `(prefix)(secret)`, so the replacement keeps the prefix and the rule that
 * matched is the one whose secret group is set. A rule's check may decline a match.
 */
interface ShapeRule {
	source: string;
	check?: (secret: string) => boolean;
}

const SHAPE_RULES: ShapeRule[] = [
	{ source: `()(${PEM})` },
	// scheme://user:password@host: the password (which may itself contain '@'). Anchored on "://",
	// not on the scheme, which keeps the scan fast.
	{
		source: `(://[^\\s/:@"'<>]{1,128}:)([^\\s/"'<>]{1,256})(?=@[^\\s/@"'<>]*(?:[/\\s"'<>?#]|$))`,
		check: (secret) => !secret.startsWith("[secret:"),
	},
	// scheme://token@host: a random-looking user name is a token.
	{ source: `(://)([A-Za-z0-9_-]{20,256})(?=@)`, check: looksRandom },
	{ source: `(https://hooks\\.slack\\.com/services/)([A-Za-z0-9_/]{20,})` },
	// The lookahead lists the prefixes' first characters: a cheap filter before the alternation.
	{ source: `()(\\b(?=[0-9AGSdeghlnprswxy])(?:${PREFIXED_TOKENS.join("|")}))` },
	{ source: `(\\b[Bb](?:earer|asic)[ \\t]+)([A-Za-z0-9._~+/-]{8,}=*)`, check: looksLikeCredential },
];

const SHAPES = new RegExp(SHAPE_RULES.map((r) => r.source).join("|"), "g");

const PASSWORD_WORDS = "passw(?:or)?d|passwd|passphrase|pwd|pass|secret";
const TOKEN_WORDS = "token|api_?key|apikey|key|credentials?|auth";

/** Pass 2: `name = value`, `name: value`, `"name": "value"`, where the name ends in a keyword. */
const ASSIGNMENT = new RegExp(
	`(${PASSWORD_WORDS}|${TOKEN_WORDS})s?["']?[ \\t]*(?::=|[:=])[ \\t]*` +
		`(?:(["'\`])([^"'\`\\n]{1,512})(?=["'\`])|([^\\s"'\`,;&)}\\]<>=:][^\\s"'\`,;&)}\\]<>]{0,511}))`,
	"gi",
);

const MIN_PASSWORD_CHARS = 4;
const PASSWORD_KEYWORD = new RegExp(`^(?:${PASSWORD_WORDS})$`, "i");
/** Values that name a type, a flag or a placeholder rather than holding a secret. */
const NOT_A_VALUE = new Set(
	"string number boolean bool str int integer float null nil none undefined true false yes no required optional any unknown void object text bytes env redacted hidden masked omitted empty prompt".split(
		" ",
	),
);

export interface RedactResult {
	text: string;
	/** Secret mentions replaced. */
	count: number;
}

/** Replace every secret in `text` by its marker. Idempotent: markers are never redacted again. */
export function redactSecrets(text: string, hash: Hash): string {
	return scanSecrets(text, hash).text;
}

export function scanSecrets(text: string, hash: Hash): RedactResult {
	let count = 0;
	const shaped = text.replace(SHAPES, (match: string, ...groups: unknown[]) => {
		for (let r = 0; r < SHAPE_RULES.length; r++) {
			const secret = groups[2 * r + 1];
			if (typeof secret !== "string") continue;
			const rule = SHAPE_RULES[r] as ShapeRule;
			if (rule.check !== undefined && !rule.check(secret)) return match;
			count++;
			return `${groups[2 * r] as string}${secretMarker(secret, hash)}`;
		}
		return match;
	});
	const assigned = shaped.replace(
		ASSIGNMENT,
		(match: string, keyword: string, _q: unknown, quoted: unknown, bare: unknown, offset: number, whole: string) => {
			// A marker reads like `secret: value` to this pattern: never redact inside one.
			if (offset > 0 && whole.startsWith("[secret:", offset - 1)) return match;
			const value = (typeof quoted === "string" ? quoted : bare) as string;
			if (value.includes("[secret:")) return match; // already redacted inside

			const password = PASSWORD_KEYWORD.test(keyword);
			if (password ? !isPasswordValue(value, keyword, whole, offset) : !looksRandom(value)) return match;
			count++;
			return `${match.slice(0, match.length - value.length)}${secretMarker(value, hash)}`;
		},
	);
	return { text: assigned, count };
}

/** True when `text` holds anything redaction would replace. */
export function containsSecret(text: string): boolean {
	return scanSecrets(text, () => "0".repeat(64)).count > 0;
}

function isPasswordValue(value: string, keyword: string, text: string, offset: number): boolean {
	const v = value.trim();
	// Shorter than four characters is a flag or a fragment of code (pwd = "~"), not a password.
	if (v.length < MIN_PASSWORD_CHARS) return false;
	// `pass`/`pwd` must start the name's last word: DB_PASS, dbPass, PWD yes; bypass, compass no.
	if (/^(?:pass|pwd)$/i.test(keyword) && offset > 0) {
		const before = text.charCodeAt(offset - 1);
		const boundary = !isAlnum(before) || (isLower(before) && keyword.charCodeAt(0) <= 90);
		if (!boundary) return false;
	}
	if (/^[$%{<([@*•]/.test(v) || /^(?:x{3,}|\.{3}|…)/i.test(v)) return false; // references, placeholders
	if (/^(?:~|\/|\.\.?\/)/.test(v)) return false; // a path (PWD=/home/me)
	if (v.includes("(") || /^[A-Za-z_$][\w$]*(?:\??\.[A-Za-z_$][\w$]*)+$/.test(v)) return false; // code
	return !NOT_A_VALUE.has(v.toLowerCase());
}

/**
 * A value that looks machine-generated: at least 12 characters of base64/hex alphabet with a run of
 * 12 or more holding both digits and letters, spread over enough distinct characters.
 */
export function looksRandom(value: string): boolean {
	if (value.length < 12 || value.length > 512 || !/^[A-Za-z0-9+/=_\-.~:]+$/.test(value)) return false;
	for (const run of value.match(/[A-Za-z0-9+/=]{12,}/g) ?? []) {
		if (/\d/.test(run) && /[A-Za-z]/.test(run) && entropy(run) >= 3) return true;
	}
	return false;
}

function looksLikeCredential(value: string): boolean {
	if (looksRandom(value)) return true;
	return /^[A-Za-z0-9+/]{8,}={0,2}$/.test(value) && /[A-Z]/.test(value) && /[a-z]/.test(value);
}

/** Shannon entropy in bits per character. */
function entropy(s: string): number {
	const counts = new Map<string, number>();
	for (const c of s) counts.set(c, (counts.get(c) ?? 0) + 1);
	let h = 0;
	for (const n of counts.values()) {
		const p = n / s.length;
		h -= p * Math.log2(p);
	}
	return h;
}

function isAlnum(c: number): boolean {
	return (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
}

function isLower(c: number): boolean {
	return c >= 97 && c <= 122;
}
