/**
 * Redaction as a property: a secret planted anywhere a session can carry it (a tool result, a
 * tool call's command or path, a user message; raw, JSON-escaped or with CRLF line ends; amid random
 * lines) never appears in anything context-fold writes for reuse: the seed-index record as written,
 * the handoff seed, the deterministic compaction summary. The secrets are the corpus's 80 shapes
 * and generated passwords and tokens in every form the redactor promises to know.
 */
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import type { ViewMessage } from "../../src/core/blocks.ts";
import { compactionSummaryOf, handoffFromIndex } from "../../src/core/handoff.ts";
import { type ExtractInput, extractSeedRecord } from "../../src/core/seed/extract.ts";
import { parseSeedIndex } from "../../src/core/seed/render.ts";
import { serializeSeedRecord } from "../../src/core/seed/schema.ts";
import { maskBlock } from "../core/seed/trace.ts";
import { chars, SECRETS } from "../helpers/secret-corpus.ts";
import { check, params, report, TIMEOUT } from "./config.ts";
import { sha } from "./oracles.ts";

const T0 = Date.UTC(2025, 0, 1);

interface Planted {
	/** The text carrying the secret, as it would stand on its own line. */
	text: string;
	/** Pieces that must not survive anywhere. */
	secrets: string[];
	/** A single word (no whitespace): may also stand as a tool call's path. */
	word: boolean;
}

const ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const PASSWORD_CHARS = `${ALNUM}._+~-`;

/** A password: 8-24 characters, a letter and a digit, starting with a letter or digit. */
const password = fc
	.tuple(
		fc.constantFrom(...ALNUM),
		fc.array(fc.constantFrom(...PASSWORD_CHARS), { minLength: 7, maxLength: 23 }),
		fc.constantFrom(..."abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"),
		fc.constantFrom(..."0123456789"),
		fc.nat(),
	)
	.map(([first, rest, letter, digit, at]) => {
		const chars = [...rest];
		chars.splice(at % (chars.length + 1), 0, letter, digit);
		return `${first}${chars.join("")}`;
	})
	// Values the redactor rightly reads as placeholders, not passwords.
	.filter((p) => !/^x{3}/i.test(p));

/**
 * A machine-made token: 32-48 alphanumerics drawn uniformly (a seeded generator, since fast-check
 * favours repetitive strings, and a token of twenty A's is no token a machine made).
 */
const token = fc
	.tuple(fc.integer({ min: 32, max: 48 }), fc.integer({ min: 1, max: 2 ** 30 }))
	.map(([n, seed]) => chars(n, seed))
	.filter((t) => /\d/.test(t) && /[A-Za-z]/.test(t));

/** Where a password goes: every command-line and assignment form the redactor promises. */
const PASSWORD_FORMS: Array<[string, string]> = [
	["mysql -u root -p", " app"],
	["curl -u admin:", " https://api.example.com/v1"],
	["curl --user 'ci:", "' https://ci.example.com"],
	["sshpass -p ", " ssh deploy@host uptime"],
	["docker login -u bot -p ", " registry.example.com"],
	["some-tool --password ", " --verbose"],
	["./run --db-password=", ""],
	["keytool -list -storepass ", ""],
	["openssl rsa -passin pass:", " -out k.pem"],
	["redis-cli -h cache -a ", " ping"],
	["DB_PASSWORD=", ""],
	["SECRET_KEY = '", "'"],
	['{"client_secret": "', '"}'],
	["secret_key_base: ", ""],
	["redis://:", "@cache.internal:6379/0"],
	["postgres://app:", "@db.example.com:5432/prod"],
	["git clone https://deploy:", "@git.example.com/team/repo.git"],
	["Cookie: theme=dark; sid=", "; lang=en"],
	["Set-Cookie: sid=", "; Path=/; HttpOnly"],
];

/** Where a token goes: names that say token, key, session or auth, headers, URL user names. */
const TOKEN_FORMS: Array<[string, string]> = [
	["api_key: ", ""],
	['SESSION_TOKEN="', '"'],
	["Authorization: Bearer ", ""],
	["X-Auth-Token: ", ""],
	['{"accessToken":"', '"}'],
	["gh --token ", " repo list"],
	["https://", "@github.com/org/repo.git"],
];

const planted: fc.Arbitrary<Planted> = fc.oneof(
	fc.constantFrom(...SECRETS).map((c) => ({ text: c.text, secrets: c.secrets, word: !/\s/.test(c.text) })),
	fc.tuple(fc.constantFrom(...PASSWORD_FORMS), password).map(([[before, after], p]) => ({
		text: `${before}${p}${after}`,
		secrets: [p],
		word: false,
	})),
	fc.tuple(fc.constantFrom(...TOKEN_FORMS), token).map(([[before, after], t]) => ({
		text: `${before}${t}${after}`,
		secrets: [t],
		word: false,
	})),
);

/** Lines of ordinary output around the secret: printable ASCII, words, numbers, paths. */
const filler = fc.array(
	fc.oneof(
		fc.string({ unit: "binary-ascii", maxLength: 60 }).map((s) => s.replace(/[^\x20-\x7e]/g, " ")),
		fc.constantFrom(
			"error: build failed in src/core/plan.ts:42",
			"ok 12 tests passed",
			"commit 9fceb02d0ae598e95dc970b74767f19372d61af8",
			"$ npm test",
			"key: value",
			"",
		),
	),
	{ maxLength: 6 },
);

type Place = "toolResult" | "command" | "path" | "user";

interface Case {
	secret: Planted;
	place: Place;
	before: string[];
	after: string[];
	form: "raw" | "json" | "crlf";
	kind: "fold" | "compaction";
}

const cases: fc.Arbitrary<Case> = fc.record({
	secret: planted,
	place: fc.constantFrom<Place>("toolResult", "command", "path", "user"),
	before: filler,
	after: filler,
	form: fc.constantFrom<Case["form"]>("raw", "json", "crlf"),
	kind: fc.constantFrom<Case["kind"]>("fold", "compaction"),
});

/** The session a case describes: a user message, an assistant's tool call, its result. */
function inputOf(c: Case): ExtractInput {
	const lines = [...c.before, c.secret.text, ...c.after];
	let body = lines.join(c.form === "crlf" ? "\r\n" : "\n");
	if (c.form === "json") body = JSON.stringify({ output: body });
	const where = c.place === "path" && !c.secret.word ? "toolResult" : c.place;
	const command = where === "command" ? body : "ls -la";
	const path = where === "path" ? c.secret.text : "src/index.ts";
	const resultText = where === "toolResult" ? body : "done\nerror: see above";
	const userText = where === "user" ? body : "please fix the build";
	const messages: ViewMessage[] = [
		{ role: "user", entryId: "u1", timestamp: T0, blocks: [{ kind: "text", text: userText }] },
		{
			role: "assistant",
			entryId: "a1",
			timestamp: T0,
			blocks: [{ kind: "toolCall", text: `${JSON.stringify({ command, path })}bash` }],
		},
		{
			role: "toolResult",
			entryId: "r1",
			timestamp: T0,
			toolName: "bash",
			toolCallId: "call-1",
			blocks: [{ kind: "text", text: resultText }],
		},
	];
	const calls = [
		{ toolCallId: "call-1", name: "bash", args: { command } },
		{ toolCallId: "call-2", name: "read", args: { path } },
	];
	if (c.kind === "compaction") return { kind: "compaction", seq: 1, at: T0, messages, calls, hash: sha };
	const masked = [maskBlock(messages[2] as ViewMessage, 0, new Set())];
	return { kind: "fold", seq: 1, at: T0, messages, masked, calls, hash: sha };
}

describe("fuzz: redaction", () => {
	test(
		"a planted secret never reaches the seed index, the handoff seed or the compaction summary",
		() => {
			let planted = 0;
			check(
				fc.property(cases, (c) => {
					const record = extractSeedRecord(inputOf(c));
					const line = serializeSeedRecord(record);
					const index = parseSeedIndex(`${line}\n`);
					expect(index.records).toHaveLength(1);
					const handoff = handoffFromIndex({
						goal: `continue; ${c.secret.text}`,
						parentFile: "/tmp/session.jsonl",
						sessionId: "s1",
						index: { ...index, path: "/tmp/seed-index.jsonl" },
						hash: sha,
					});
					const summary = compactionSummaryOf(index.records, {
						instructions: undefined,
						invalid: 0,
						parentFile: "/tmp/session.jsonl",
						truncatedTail: false,
						hash: sha,
					});
					for (const secret of c.secret.secrets) {
						const escaped = JSON.stringify(secret).slice(1, -1);
						for (const [where, out] of [
							["seed index", line],
							["handoff seed", handoff],
							["compaction summary", summary],
						] as const) {
							if (out.includes(secret) || out.includes(escaped))
								throw new Error(`the secret ${JSON.stringify(secret)} reached the ${where}`);
						}
						planted++;
					}
					// A URL's host and path never become a "file" because its credentials were redacted.
					for (const f of record.files) expect(f.path).not.toMatch(/^@[\w.-]*\.(?:com|net|org|internal)\b/);
				}),
				params(),
			);
			report("redaction", { cases: planted });
		},
		TIMEOUT,
	);
});
