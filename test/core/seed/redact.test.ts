/**
 * Redaction on the secret corpus (test/helpers/secret-corpus.ts): every secret shape is replaced,
 * every look-alike survives untouched; markers; the randomness test.
 */
import { describe, expect, test } from "bun:test";
import {
	containsSecret,
	redactSecrets,
	SECRET_MARKER_PATTERN,
	scanSecrets,
	secretMarker,
} from "../../../src/core/seed/redact.ts";
import { looksRandom } from "../../../src/core/seed/secret-values.ts";
import { B64, chars, HEX, LOOK_ALIKES, SECRETS } from "../../helpers/secret-corpus.ts";
import { sha256 } from "./trace.ts";

describe("secret corpus", () => {
	test("the corpus is big enough", () => {
		expect(SECRETS.length).toBeGreaterThanOrEqual(60);
		expect(LOOK_ALIKES.length).toBeGreaterThanOrEqual(40);
	});
	test.each(SECRETS.map((c) => [c.name, c] as const))("redacts: %s", (_name, c) => {
		const out = redactSecrets(c.text, sha256);
		for (const secret of c.secrets) expect(out).not.toContain(secret);
		expect(out).toMatch(SECRET_MARKER_PATTERN);
		expect(containsSecret(c.text)).toBe(true);
		expect(containsSecret(out)).toBe(false);
	});
	test.each(LOOK_ALIKES)("keeps: %s", (text) => {
		expect(redactSecrets(text, sha256)).toBe(text);
		expect(containsSecret(text)).toBe(false);
	});
	test("the whole corpus in one text: nothing survives, and redaction is idempotent", () => {
		const text = SECRETS.map((c) => c.text).join("\n");
		const out = redactSecrets(text, sha256);
		for (const c of SECRETS) for (const secret of c.secrets) expect(out).not.toContain(secret);
		expect(redactSecrets(out, sha256)).toBe(out);
	});
});

describe("markers", () => {
	test("format: 8 hex digits of a domain-separated hash of the secret", () => {
		const secret = `${"ghp_"}${chars(36, 60)}`;
		expect(secretMarker(secret, sha256)).toBe(`[secret:${sha256(`context-fold:secret:${secret}`).slice(0, 8)}]`);
	});
	test("the same secret gets the same marker wherever it appears; different secrets differ", () => {
		const a = `${"sk-"}proj-${chars(44, 61)}`;
		const b = `${"sk-"}proj-${chars(44, 62)}`;
		const out = redactSecrets(`OPENAI_API_KEY=${a}\nlater: curl -H "Authorization: Bearer ${a}"\nother ${b}`, sha256);
		const markers = out.match(/\[secret:[0-9a-f]{8}\]/g) ?? [];
		expect(markers).toHaveLength(3);
		expect(markers[0]).toBe(markers[1] as string);
		expect(markers[2]).not.toBe(markers[0] as string);
	});
	test("only the secret part is replaced", () => {
		expect(redactSecrets("postgres://admin:Sup3rS3cret@db:5432/prod", sha256)).toBe(
			`postgres://admin:${secretMarker("Sup3rS3cret", sha256)}@db:5432/prod`,
		);
		expect(redactSecrets('DB_PASSWORD="hunter22" # local', sha256)).toBe(
			`DB_PASSWORD="${secretMarker("hunter22", sha256)}" # local`,
		);
	});
	test("a truncated PEM block ends at the first line that is not key material", () => {
		const body = chars(64, 80, B64);
		const out = redactSecrets(`-----BEGIN RSA PRIVATE KEY-----\n${body}\n$ echo done\ndone`, sha256);
		expect(out).not.toContain(body);
		expect(out.endsWith("\n$ echo done\ndone")).toBe(true);
	});
	test("scanSecrets counts mentions", () => {
		expect(scanSecrets("a=1 password=hunter22 token=abc", sha256).count).toBe(1);
		expect(scanSecrets(SECRETS.map((c) => c.text).join("\n"), sha256).count).toBeGreaterThanOrEqual(SECRETS.length);
	});
	test("a marker is never redacted again, even where it reads like `secret: value`", () => {
		const once = redactSecrets("postgres://u:Sup3rS3cret@h/db", sha256);
		expect(redactSecrets(once, sha256)).toBe(once);
		expect(redactSecrets(`note ${once} and secret: ${once}`, sha256)).toBe(`note ${once} and secret: ${once}`);
	});
});

describe("looksRandom", () => {
	test.each([
		[chars(32, 70, HEX), true],
		[chars(40, 71, B64), true],
		["user-settings-v2", false],
		["placeholder_value_here", false],
		["4096", false],
		["abcabcabcabc1", false],
		["config.apiKey", false],
	])("%s -> %p", (value, expected) => {
		expect(looksRandom(value)).toBe(expected);
	});
});
