/**
 * Secret redaction for everything the seed index stores or renders. A secret is replaced by
 * `[secret:<8 hex>]`, a short hash of its exact text, so two mentions of one secret still match
 * while the value itself stays only in Pi's session file. Four regex passes, each linear:
 *
 * 1. Shapes recognisable on their own (provider key prefixes, JWTs, PEM private key blocks,
 *    credentials inside URLs with or without a user name, tokens inside URL paths, Authorization
 *    headers). Case-sensitive.
 * 2. Cookie headers: every value of `Cookie:`, the value of `Set-Cookie:`.
 * 3. Command-line flags, for any tool: a flag whose name says password or secret (`--db-password X`,
 *    `-storepass X`), an attached `-pVALUE`, `-u user:password`, `-p X` after `login`/`sshpass`.
 * 4. Assignments (`DB_PASSWORD=…`, `"apiKey": "…"`, `secret_key_base: …`), judged by the whole name.
 *
 * Names: one that says secret, password, passwd, passphrase, credential or cookie redacts any
 * literal value (unless it names an attribute of one, such as `password_min_length`); one that says
 * token, key, session or auth redacts only values that look random, so `max_tokens=4096` and
 * `key: "user-settings"` survive. Bare random-looking strings with no recognisable shape or name are
 * left alone on purpose: sha256 hashes, git commit ids and UUIDs look exactly like that.
 */
import type { Hash } from "../digest.ts";
import {
	isPasswordValue,
	isSecretValue,
	looksLikeCredential,
	looksRandom,
	MIN_PASSWORD_CHARS,
	nameClass,
} from "./secret-values.ts";

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
	"AGE-SECRET-KEY-1[0-9A-Z]{40,}", // age private key
	"eyJ[A-Za-z0-9_-]{8,}\\.[A-Za-z0-9_-]{8,}\\.[A-Za-z0-9_-]{8,}", // JWT
	"npm_[A-Za-z0-9]{36}(?![A-Za-z0-9])",
	"pypi-[A-Za-z0-9_-]{50,}",
	"hf_[A-Za-z0-9]{30,}(?![A-Za-z0-9])", // Hugging Face
	"SG\\.[A-Za-z0-9_-]{16,}\\.[A-Za-z0-9_-]{16,}", // SendGrid
	"do[por]_v1_[A-Za-z0-9]{32,}", // DigitalOcean
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

/**
 * Where a word starts: no word character before it, or right after a JSON escape (`\n`, `\r`, `\t`),
 * since tool output is often JSON-escaped text and `\nghp_…` must count as a token at a line start.
 */
const WORD_START = "(?:(?<![A-Za-z0-9_])|(?<=\\\\[nrt]))";

const SHAPE_RULES: ShapeRule[] = [
	{ source: `()(${PEM})` },
	// scheme://user:password@host and scheme://:password@host (an empty user name, as Redis URLs
	// have): the password, which may itself contain '@'. Anchored on "://", not on the scheme, which
	// keeps the scan fast.
	{
		source: `(://[^\\s/:@"'<>]{0,128}:)([^\\s/"'<>]{1,256})(?=@[^\\s/@"'<>]*(?:[/\\s"'<>?#]|$))`,
		check: (secret) => !secret.startsWith("[secret:"),
	},
	// scheme://token@host: a random-looking user name is a token.
	{ source: `(://)([A-Za-z0-9_-]{20,256})(?=@)`, check: looksRandom },
	{ source: `(https://hooks\\.slack\\.com/services/)([A-Za-z0-9_/]{20,})` },
	// Tokens that are a segment of a URL path: Telegram's /bot<id>:<token>/, Discord's webhooks.
	{ source: `(/bot)(\\d{6,12}:[A-Za-z0-9_-]{30,})` },
	{ source: `(/api/webhooks/\\d{5,25}/)([A-Za-z0-9_.-]{30,})` },
	// The lookahead lists the prefixes' first characters: a cheap filter before the alternation.
	{ source: `()(${WORD_START}(?=[0-9AGSdeghlnprswxy])(?:${PREFIXED_TOKENS.join("|")}))` },
	{ source: `(${WORD_START}[Bb](?:earer|asic)[ \\t]+)([A-Za-z0-9._~+/-]{8,}=*)`, check: looksLikeCredential },
];

const SHAPES = new RegExp(SHAPE_RULES.map((r) => r.source).join("|"), "g");

/** Pass 2: a Cookie or Set-Cookie header, up to the end of its line (raw or JSON-escaped). */
const COOKIE_HEADER = /(?:(?<![A-Za-z0-9_-])|(?<=\\[nrt]))(Set-Cookie|Cookie)([ \t]*:[ \t]*)([^\r\n"'`\\]{1,8192})/gi;
const COOKIE_PAIR = /([^\s=;,]{1,256}=)([^;\s]{1,4096})/g;

/**
 * Pass 3: command-line flags with a value, for any tool. `--name=value`, `--name value`,
 * `-name value` (Java's keytool), quoted or bare; the name decides (see `flagClass`).
 */
const FLAG =
	/(^|[\s"'`(]|\\[nrt])(--?[A-Za-z][A-Za-z0-9_-]{0,63})(=|[ \t]+)(?:(\\?["'])((?:(?!\4)[^\n]){1,512})\4|([^\s"'`;|&)<>=-][^\s"'`;|&)<>]{0,511}))/g;
/** `-pVALUE` with the value attached (MySQL and friends), and `-u user:password` / `--user user:password` (curl). */
const ATTACHED_P = /(^|[\s"'`]|\\[nrt])(-p)([^\s"'`;|&)<>:=/-][^\s"'`;|&)<>]{1,255})/g;
const USER_COLON = /(^|[\s"'`]|\\[nrt])(-u|--user)(=|[ \t]+)(["']?)([^\s:"'`]{1,128}):([^\s"'`]{1,256})/g;
/** Tools whose short flag takes a password after a space: `docker login -p`, `sshpass -p`, `redis-cli -a`, `ldapsearch -w`. */
const SPACED_PASSWORD =
	/((?:(?<![A-Za-z0-9_-])|(?<=\\[nrt]))(?:login|sshpass|redis-cli|mongo(?:sh|dump|restore|import|export)?|ldap[a-z]+)\b[^\n|;&]{0,200}?[ \t]-[paw][ \t]+)(["']?)([^\s"'`;|&)<>-][^\s"'`;|&)<>]{0,255})/g;
/** OpenSSL's `-pass pass:SECRET`, `-passin pass:…`, `-passout pass:…`. */
const OPENSSL_PASS = /(-pass(?:in|out)?[ \t]+pass:)([^\s"'`;|&)<>]{1,256})/g;

/** Words that make a name (or a flag) worth a closer look. */
const TELLING_WORDS =
	"[Pp][Aa][Ss][Ss]|[Pp][Ww][Dd]|[Ss][Ee][Cc][Rr][Ee][Tt]|[Cc][Rr][Ee][Dd][Ee][Nn][Tt][Ii][Aa][Ll]|[Cc][Oo][Oo][Kk][Ii][Ee]|[Tt][Oo][Kk][Ee][Nn]|[Kk][Ee][Yy]|[Ss][Ee][Ss][Ss][Ii][Oo][Nn]|[Aa][Uu][Tt][Hh]|[Jj][Ww][Tt]|[Ss][Ii][Dd]";
const TELLING = new RegExp(TELLING_WORDS);

/**
 * Pass 4: `name = value`, `name: value`, `"name": "value"` (also JSON-escaped). A name starts only
 * where no name character precedes it, so each is read once and the scan stays linear; the callback
 * decides from the name's words (see `nameClass`).
 */
const ASSIGNMENT = new RegExp(
	// The lookahead skips, at the start of each name, every name that holds no telling word.
	`(?:(?<![\\w.$\\\\-])|(?<=\\\\[nrt]))(?=[\\w.$-]{0,124}?(?:${TELLING_WORDS}))([A-Za-z_$][\\w.$-]{0,127})(?:\\\\?["'])?[ \\t]*(?::=|[:=])[ \\t]*` +
		`(?=\\\\?(["'\`])((?:(?!\\2)[^\\n\\\\]){1,512})\\\\?\\2|([^\\s"'\`,;&)}\\]<>=:\\\\][^\\s"'\`,;&)}\\]<>\\\\]{0,511}))`,
	"g",
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
	const mark = (secret: string): string => {
		count++;
		return secretMarker(secret, hash);
	};
	const shaped = text.replace(SHAPES, (match: string, ...groups: unknown[]) => {
		for (let r = 0; r < SHAPE_RULES.length; r++) {
			const secret = groups[2 * r + 1];
			if (typeof secret !== "string") continue;
			const rule = SHAPE_RULES[r] as ShapeRule;
			if (rule.check !== undefined && !rule.check(secret)) return match;
			return `${groups[2 * r] as string}${mark(secret)}`;
		}
		return match;
	});
	const cookies = shaped.replace(COOKIE_HEADER, (match: string, name: string, sep: string, rest: string) => {
		// A request's Cookie header is all secrets; a Set-Cookie's first pair is, its attributes are not.
		const all = name.toLowerCase() === "cookie";
		let first = true;
		const redacted = rest.replace(COOKIE_PAIR, (pair: string, key: string, value: string) => {
			const take = all || first;
			first = false;
			if (!take || value.includes("[secret:") || value.length < MIN_PASSWORD_CHARS) return pair;
			return `${key}${mark(value)}`;
		});
		return redacted === rest ? match : `${name}${sep}${redacted}`;
	});
	const flagged = redactFlags(cookies, mark);
	// Pass 4 by hand: the match ends at the separator and the value is only looked at, so when a name
	// says nothing the scan goes on inside its value (`{"output":"api_key: …"}`).
	let assigned = "";
	let copied = 0;
	ASSIGNMENT.lastIndex = 0;
	for (let m = ASSIGNMENT.exec(flagged); m !== null; m = ASSIGNMENT.exec(flagged)) {
		const [head, name, _quote, quoted, bare] = m as unknown as [string, string, unknown, unknown, unknown];
		if (!TELLING.test(name)) continue;
		// A marker reads like `secret: value` to this pattern: never redact inside one.
		if (m.index > 0 && flagged.startsWith("[secret:", m.index - 1)) continue;
		const value = (typeof quoted === "string" ? quoted : bare) as string;
		if (value.includes("[secret:")) continue; // already redacted inside
		const random = looksRandom(value);
		if (!random && !isPasswordValue(value)) continue;
		const kind = nameClass(name, false);
		if (kind === "none" || (kind === "token" && !random)) continue;
		let start = m.index + head.length;
		if (typeof quoted === "string") start += flagged.charCodeAt(start) === 92 /* \\ */ ? 2 : 1;
		assigned += `${flagged.slice(copied, start)}${mark(value)}`;
		copied = start + value.length;
		ASSIGNMENT.lastIndex = copied;
	}
	assigned += flagged.slice(copied);
	return { text: assigned, count };
}

/** True when `text` holds anything redaction would replace. */
export function containsSecret(text: string): boolean {
	return scanSecrets(text, () => "0".repeat(64)).count > 0;
}

/** Pass 3, the command-line flags. */
function redactFlags(text: string, mark: (secret: string) => string): string {
	return text
		.replace(
			FLAG,
			(match: string, lead: string, flag: string, sep: string, q: unknown, quoted: unknown, bare: unknown) => {
				if (!TELLING.test(flag)) return match; // most flags: no need to split the name
				const value = (typeof quoted === "string" ? quoted : bare) as string;
				if (value.includes("[secret:") || !isSecretValue(value, nameClass(flag.replace(/^-+/, ""), true))) return match;
				const quote = typeof q === "string" ? q : "";
				return `${lead}${flag}${sep}${quote}${mark(value)}${quote}`;
			},
		)
		.replace(OPENSSL_PASS, (match: string, lead: string, value: string) =>
			value.includes("[secret:") ? match : `${lead}${mark(value)}`,
		)
		.replace(SPACED_PASSWORD, (match: string, lead: string, quote: string, value: string) =>
			value.includes("[secret:") || !isPasswordValue(value) ? match : `${lead}${quote}${mark(value)}`,
		)
		.replace(ATTACHED_P, (match: string, lead: string, flag: string, value: string) =>
			isAttachedPassword(value) ? `${lead}${flag}${mark(value)}` : match,
		)
		.replace(
			USER_COLON,
			(match: string, lead: string, flag: string, sep: string, quote: string, user: string, secret: string) => {
				const value = quote !== "" && secret.endsWith(quote) ? secret.slice(0, -1) : secret;
				// uid:gid (docker -u 1000:1000) and user:group (root:root) are not credentials.
				if (value === "" || value === user || /^\d+$/.test(value) || /^[$%{<]/.test(value)) return match;
				if (value.includes("[secret:")) return match;
				return `${lead}${flag}${sep}${quote}${user}:${mark(value)}${secret.slice(value.length)}`;
			},
		);
}

/**
 * `-pVALUE`: MySQL's password flag, also used by other tools. Not bundled lowercase flags (`-pv`,
 * `-pthread`), short letter bundles (`-pRv`), ports (`-p8080`, `-p8080:80`) or paths; what is left
 * is a password.
 */
function isAttachedPassword(value: string): boolean {
	if (value.includes("[secret:") || value.includes("/")) return false;
	if (/^[a-z]+$/.test(value) || /^[\d:.,-]+$/.test(value)) return false;
	// Letters only and short: more likely bundled flags (`cp -pRv`) than a password.
	return value.length >= 4 || /[^A-Za-z]/.test(value);
}
