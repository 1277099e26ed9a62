/**
 * Whether a value is a secret, judged from the name it is assigned to (or the flag it follows) and
 * from how it looks: the half of redaction that decides, apart from the passes that find candidates.
 */

export const MIN_PASSWORD_CHARS = 4;
/** Values that name a type, a flag or a placeholder rather than holding a secret. */
const NOT_A_VALUE = new Set(
	"string number boolean bool str int integer float null nil none undefined true false yes no required optional any unknown void object text bytes env redacted hidden masked omitted empty prompt include omit same-origin stdin".split(
		" ",
	),
);

export type NameClass = "password" | "token" | "none";

/** Words a name is made of: snake_case, kebab-case, dotted, camelCase and ALLCAPS, lowercased. */
function nameWords(name: string): string[] {
	return name
		.replace(/([a-z0-9])([A-Z])/g, "$1 $2")
		.split(/[^A-Za-z0-9]+/)
		.filter((w) => w.length > 0)
		.map((w) => w.toLowerCase());
}

const PASSWORD_WORD = /(?:password|passwd|passphrase|secrets?|credentials?|cookies?)$/;
const TOKEN_WORD = /^(?:.*(?:tokens?|keys?)|apikey|sessions?|auth|jwt|sid)$/;
/** Last words that name an attribute of a secret, not the secret: `password_min_length`, `secret_name`. */
const ATTRIBUTE_WORDS = new Set(
	"length len min max count size file path dir name names id ids type policy rule rules reset required enabled disabled field prompt hint label pattern regex ttl expiry expires url uri env var ref arn version strength manager store mount provider".split(
		" ",
	),
);

/**
 * What a name says of its value. A flag is judged by its last word (`--password-stdin` takes no
 * password); an assignment by all of its words (`secret_key_base`), unless the last one names an
 * attribute. `pass`/`pwd` count only as the last word (DB_PASS, dbPass, PWD; not bypass, compass).
 */
export function nameClass(name: string, flag: boolean): NameClass {
	const words = nameWords(name);
	const last = words.at(-1) ?? "";
	const candidates = flag ? [last] : words;
	const attribute = !flag && ATTRIBUTE_WORDS.has(last);
	const passwordish =
		candidates.some((w) => PASSWORD_WORD.test(w) && !/^(?:bypass|compass)/.test(w)) ||
		/^(?:pass|pwd|storepass|keypass|srcstorepass|deststorepass|srckeypass|destkeypass)$/.test(last);
	if (passwordish && !attribute) return "password";
	if (passwordish || candidates.some((w) => TOKEN_WORD.test(w))) return "token";
	return "none";
}

export function isSecretValue(value: string, kind: NameClass): boolean {
	if (kind === "password") return isPasswordValue(value);
	return kind === "token" && looksRandom(value);
}

export function isPasswordValue(value: string): boolean {
	const v = value.trim();
	// Shorter than four characters is a flag or a fragment of code (pwd = "~"), not a password.
	if (v.length < MIN_PASSWORD_CHARS) return false;
	if (/^[$%{<([@*•]/.test(v) || /^(?:x{3,}|\.{3}|…)/i.test(v)) return false; // references, placeholders
	if (/^(?:~|\/|\.\.?\/)/.test(v)) return false; // a path (PWD=/home/me)
	// Code: a call (getSecret(), os.environ.get("X")) or a property path without digits (req.body.password).
	if (/^(?:await |new )?[A-Za-z_$][\w$.]*\(/.test(v)) return false;
	if (/^[A-Za-z_$][\w$]*(?:\??\.[A-Za-z_$][\w$]*)+$/.test(v) && !/\d/.test(v)) return false;
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

export function looksLikeCredential(value: string): boolean {
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
