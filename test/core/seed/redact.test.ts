/**
 * The secret corpus: realistic secret shapes that must never survive redaction, and look-alikes
 * that must survive untouched. All secrets here are fake; most are assembled from pieces so that
 * repository scanners do not flag this file.
 */
import { describe, expect, test } from "bun:test";
import {
	containsSecret,
	looksRandom,
	redactSecrets,
	SECRET_MARKER_PATTERN,
	scanSecrets,
	secretMarker,
} from "../../../src/core/seed/redact.ts";
import { sha256 } from "./trace.ts";

/** Deterministic pseudo-random characters from an alphabet (Park–Miller, no Math.random). */
function chars(
	n: number,
	seed: number,
	alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
): string {
	let x = (seed * 7919 + 1) % 2147483647;
	let out = "";
	for (let i = 0; i < n; i++) {
		x = (x * 48271) % 2147483647;
		out += alphabet[x % alphabet.length];
	}
	return out;
}
const HEX = "0123456789abcdef";
const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

const pem = (label: string, seed: number) =>
	[
		`-----BEGIN ${label}-----`,
		chars(64, seed, B64),
		chars(64, seed + 1, B64),
		`${chars(40, seed + 2, B64)}==`,
		`-----END ${label}-----`,
	].join("\n");

const jwt = `eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkFkYSJ9.${chars(43, 7, `${B64.slice(0, 62)}-_`)}`;

interface SecretCase {
	name: string;
	text: string;
	/** Substrings that must not survive. */
	secrets: string[];
}

function secretCase(name: string, before: string, secret: string, after = ""): SecretCase {
	return { name, text: `${before}${secret}${after}`, secrets: [secret] };
}

const SK_ANT = `${"sk-"}ant-api03-${chars(93, 1, `${B64.slice(0, 62)}-_`)}AA`;
const SK_PROJ = `${"sk-"}proj-${chars(40, 2)}_${chars(40, 3)}`;
const AKIA = `${"AKIA"}${chars(16, 4, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")}`;
const AWS_SECRET = chars(40, 5, B64);

const SECRETS: SecretCase[] = [
	secretCase("Anthropic key in env", "ANTHROPIC_API_KEY=", SK_ANT),
	secretCase("Anthropic key in a log line", "[auth] using key ", SK_ANT, " for claude-sonnet-4-5"),
	secretCase("OpenAI project key", "OPENAI_API_KEY=", SK_PROJ),
	secretCase("OpenAI legacy key in JSON", '{"openai": "', `${"sk-"}${chars(48, 6)}`, '"}'),
	secretCase("OpenRouter key", "Authorization header set from ", `${"sk-"}or-v1-${chars(64, 7, HEX)}`),
	secretCase("AWS access key id", "aws_access_key_id = ", AKIA),
	secretCase("AWS secret key in credentials file", "aws_secret_access_key = ", AWS_SECRET),
	secretCase("AWS secret key in env", "export AWS_SECRET_ACCESS_KEY=", AWS_SECRET),
	secretCase("AWS STS JSON secret", '    "SecretAccessKey": "', chars(40, 8, B64), '",'),
	secretCase("AWS STS JSON session token", '    "SessionToken": "', `IQoJb3JpZ2luX2Vj${chars(120, 9, B64)}`, '",'),
	secretCase(
		"AWS temporary key id",
		'"AccessKeyId": "',
		`${"ASIA"}${chars(16, 10, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")}`,
		'"',
	),
	secretCase("GitHub classic token", "GITHUB_TOKEN=", `${"ghp_"}${chars(36, 11)}`),
	secretCase("GitHub OAuth token", "oauth_token: ", `${"gho_"}${chars(36, 12)}`),
	secretCase("GitHub fine-grained token", "token ", `${"github_pat_"}${chars(22, 13)}_${chars(59, 14)}`),
	secretCase(
		"GitHub app token in a clone URL",
		"git clone https://x-access-token:",
		`${"ghs_"}${chars(36, 15)}`,
		"@github.com/org/repo.git",
	),
	secretCase(
		"Slack bot token",
		"SLACK_BOT_TOKEN=",
		`${"xoxb-"}${chars(12, 16, "0123456789")}-${chars(13, 17, "0123456789")}-${chars(24, 18)}`,
	),
	secretCase(
		"Slack user token",
		"slack user token: ",
		`${"xoxp-"}${chars(12, 19, "0123456789")}-${chars(12, 20, "0123456789")}-${chars(32, 21, HEX)}`,
	),
	secretCase(
		"Slack webhook",
		"curl -X POST https://hooks.slack.com/services/",
		`T${chars(8, 22, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")}/B${chars(8, 23, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")}/${chars(24, 24)}`,
	),
	secretCase("Stripe live secret key", "stripe.api_key = '", `${"sk_live_"}${chars(24, 25)}`, "'"),
	secretCase("Stripe restricted key", "STRIPE_KEY=", `${"rk_live_"}${chars(24, 26)}`),
	secretCase("Stripe webhook secret", "endpoint secret ", `${"whsec_"}${chars(32, 27)}`),
	secretCase(
		"Google API key",
		"const maps = new Maps({ apiKey: '",
		`${"AIza"}${chars(35, 28, `${B64.slice(0, 62)}-_`)}`,
		"' });",
	),
	secretCase("Google OAuth access token", "access_token=", `${"ya29."}${chars(60, 29, `${B64.slice(0, 62)}-_`)}`),
	secretCase(
		"Google OAuth client secret",
		'client_secret: "',
		`${"GOCSPX-"}${chars(28, 30, `${B64.slice(0, 62)}-_`)}`,
		'"',
	),
	secretCase("JWT bearer header", "curl -H 'Authorization: Bearer ", jwt, "' https://api.example.com/me"),
	secretCase("JWT in JSON", '{"id_token":"', jwt, '","expires_in":3600}'),
	{
		name: "PEM RSA private key",
		text: `key.pem:\n${pem("RSA PRIVATE KEY", 31)}\n`,
		secrets: [chars(64, 31, B64), chars(40, 33, B64)],
	},
	{ name: "PEM EC private key", text: pem("EC PRIVATE KEY", 34), secrets: [chars(64, 34, B64), chars(64, 35, B64)] },
	{
		name: "PEM OpenSSH private key",
		text: `$ cat ~/.ssh/id_ed25519\n${pem("OPENSSH PRIVATE KEY", 37)}`,
		secrets: [chars(64, 37, B64)],
	},
	{
		name: "PEM key JSON-escaped in a service account file",
		text: `{"type": "service_account", "private_key": "-----BEGIN PRIVATE KEY-----\\n${chars(64, 40, B64)}\\n${chars(64, 41, B64)}\\n-----END PRIVATE KEY-----\\n", "client_email": "bot@proj.iam.gserviceaccount.com"}`,
		secrets: [chars(64, 40, B64), chars(64, 41, B64)],
	},
	{
		name: "PEM key cut off by truncated output",
		text: `-----BEGIN PRIVATE KEY-----\n${chars(64, 42, B64)}\n${chars(30, 43, B64)}`,
		secrets: [chars(64, 42, B64), chars(30, 43, B64)],
	},
	secretCase("password= on a command line", "mysql -u root --password=", "Tr0ub4dor3x", " -e 'select 1'"),
	secretCase("PASSWORD: in YAML", "  PASSWORD: ", "correct-horse-battery-staple"),
	secretCase("quoted password with spaces", "DB_PASSWORD='", "p@ss w0rd is long!", "'"),
	secretCase("camelCase password property", "const conn = { user: 'app', dbPass: '", "Sommer2024!x", "' };"),
	secretCase("postgres URL credentials", "DATABASE_URL=postgres://admin:", "Sup3rS3cret", "@db.example.com:5432/prod"),
	secretCase("password containing @ in a URL", "redis://default:", "p@ssw0rd@@x", "@cache.internal:6379"),
	secretCase(
		"https user:token@github.com",
		"remote: https://octocat:",
		chars(40, 44, HEX),
		"@github.com/octo/repo.git",
	),
	secretCase("export FOO_API_KEY", "export FOO_API_KEY=", chars(32, 45)),
	secretCase("SECRET_TOKEN in quotes", 'SECRET_TOKEN="', chars(48, 46), '"'),
	secretCase("npm token in .npmrc", "//registry.npmjs.org/:_authToken=", `${"npm_"}${chars(36, 47)}`),
	secretCase("opaque bearer token", "Authorization: Bearer ", chars(40, 48)),
	secretCase("basic auth header", "Authorization: Basic ", "YWRtaW46aHVudGVyMg=="),
	secretCase("GitLab token", "PRIVATE-TOKEN: ", `${"glpat-"}${chars(20, 49)}`),
	secretCase("Hugging Face token", "HF_TOKEN=", `${"hf_"}${chars(34, 50)}`),
	secretCase("SendGrid key", "SENDGRID_API_KEY=", `${"SG."}${chars(22, 51)}.${chars(43, 52)}`),
	secretCase("Datadog hex API key", "DD_API_KEY=", chars(32, 53, HEX)),
	secretCase(
		"Azure storage account key",
		"DefaultEndpointsProtocol=https;AccountName=x;AccountKey=",
		`${chars(86, 54, B64)}==`,
		";EndpointSuffix=core.windows.net",
	),
	secretCase("Telegram bot token", "bot token ", `${chars(10, 55, "123456789")}:AA${chars(33, 56)}`),
];

const LOOK_ALIKES: string[] = [
	"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855  dist/index.js",
	"sha256: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
	"commit 9fceb02d0ae598e95dc970b74767f19372d61af8",
	"9fceb02 Fix the login redirect (#1234)",
	"fingerprint 3f786850e387550fdab836ed7e6dc881de23001b",
	"session 550e8400-e29b-41d4-a716-446655440000 started",
	"echo aGVsbG8gd29ybGQ= | base64 -d",
	"handleUserMessageSelectorKeybindingFallback2 is defined in selector.ts",
	"node v22.19.0, typescript 5.9.3, 1.2.3-beta.4",
	"Please reset your password before logging in; the password-reset flow failed.",
	"request with max_tokens=4096 and token_count: 12345",
	"const client = new Client({ apiKey: config.apiKey, password: req.body.password });",
	"interface Login { password: string; token?: string }",
	"const token = await getToken();",
	"TOKEN=$GITHUB_TOKEN password: $" + "{DB_PASSWORD} secret=<your-secret>", // a shell reference, not a template
	"git@github.com:org/repo.git and https://github.com/org/repo/pull/42",
	'"integrity": "sha512-7NbKs0sRDNKaiGyR3FVkEyeqIu5zvBVtiebyy1uuCsW3TUhUVhpQP0BV/+mqzjDu8x2j+MYqwNQCfGdTcuN6kw=="',
	"image digest sha256:4bcff63911fcb4448bd4fdacec207030997caf25e9bea4045fa6c8c44de311d1",
	"process.env.OPENAI_API_KEY is not set",
	"scikit-learn task-runner-item disk-usage-report",
	"PWD=/home/me/project OLDPWD=/tmp",
	'key: "user-settings-v2"',
	"Send a Bearer token in the Authorization header.",
	'{"secret": true, "password": null, "passwordless": false}',
	"bypass=1 compass=north",
	"Data pass: 3 of 4",
];

describe("secret corpus", () => {
	test("the corpus is big enough", () => {
		expect(SECRETS.length).toBeGreaterThanOrEqual(30);
		expect(LOOK_ALIKES.length).toBeGreaterThanOrEqual(10);
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
