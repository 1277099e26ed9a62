// The CLI's recall is confined like recall_folded (test/e2e/security.test.ts is the in-Pi side): the
// real dist/cli.js, under Node 22, reads only the session file it was given and the full-output files
// that session's own tool results recorded. Codes and --grep/--lines/--search values that look like
// paths (traversal, absolute, percent-encoded, file://, a symlink's name in the working directory,
// NUL bytes) never open anything; a recorded full-output file that is now a symlink to a file outside
// is not followed; a path that only a fold record claims is never read. A marker written in the
// outside file must never appear in stdout or stderr, and under strace no open reaches it.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { countLines, deriveCode, foldMarker, utf8Length } from "../../src/core/digest.ts";
import { estimateTokens } from "../../src/core/tokens.ts";
import { sha256 } from "../../src/store/hash.ts";
import { NODE_BIN } from "../e2e/harness/pi-env.ts";
import { ensureCli } from "./build.ts";
import { memIo, runCli } from "./helpers.ts";

const MARKER = "OUTSIDE-MARKER-5e1c9a-never-to-be-read";
const root = mkdtempSync(join(tmpdir(), "cf-confine-"));
const outside = join(root, "outside");
const secret = join(outside, "secret.txt");
const work = join(root, "work");
const session = join(work, "sessions", "s.jsonl");
const legitFull = join(work, "pi-bash-legit.log");
const linkFull = join(work, "pi-bash-link.log");
const T = "2025-12-01T10:00:00.000Z";
let nodeCli = "";
const codes: Record<"link" | "legit" | "claimed", string> = { link: "", legit: "", claimed: "" };

/** A tool result folded by a layer; `full` in the entry's details, `claimed` only in the fold record. */
function session3(): string {
	const lines: object[] = [
		{ type: "session", version: 3, id: "c0ffee00-0000-4000-8000-000000000001", timestamp: T, cwd: work },
	];
	const taken = new Set<string>();
	const blocks: object[] = [];
	let parent: string | null = null;
	const results: Array<{ key: keyof typeof codes; full?: string; claimed?: string }> = [
		{ key: "link", full: linkFull },
		{ key: "legit", full: legitFull },
		{ key: "claimed", claimed: secret },
	];
	for (const [i, r] of results.entries()) {
		const text = `${r.key} result head\n${"ordinary output line\n".repeat(30)}tail of ${r.key}`;
		lines.push(
			{
				type: "message",
				id: `u${i}`,
				parentId: parent,
				timestamp: T,
				message: { role: "user", content: [{ type: "text", text: "go" }], timestamp: 10 * i + 1 },
			},
			{
				type: "message",
				id: `a${i}`,
				parentId: `u${i}`,
				timestamp: T,
				message: {
					role: "assistant",
					content: [{ type: "toolCall", id: `call${i}`, name: "bash", arguments: { command: "make" } }],
					provider: "anthropic",
					model: "claude-sonnet-4-5",
					usage: { input: 100, output: 5, cacheRead: 0, cacheWrite: 0 },
					stopReason: "toolUse",
					timestamp: 10 * i + 2,
				},
			},
			{
				type: "message",
				id: `t${i}`,
				parentId: `a${i}`,
				timestamp: T,
				message: {
					role: "toolResult",
					toolCallId: `call${i}`,
					toolName: "bash",
					content: [{ type: "text", text }],
					...(r.full !== undefined && { details: { fullOutputPath: r.full } }),
					timestamp: 10 * i + 3,
				},
			},
		);
		parent = `t${i}`;
		const code = deriveCode(sha256, `t${i}`, 0, taken);
		taken.add(code);
		codes[r.key] = code;
		blocks.push({
			code,
			entryId: `t${i}`,
			blockIndex: 0,
			kind: "toolResult",
			toolName: "bash",
			toolCallId: `call${i}`,
			sha256: sha256(text),
			chars: text.length,
			bytes: utf8Length(text),
			lines: countLines(text),
			tokens: estimateTokens(text.length),
			digest: `${foldMarker(code)} bash: make`,
			...(r.claimed !== undefined && { fullOutputPath: r.claimed }),
		});
	}
	lines.push({
		type: "custom",
		customType: "context-fold",
		id: "cf1",
		parentId: parent,
		timestamp: T,
		data: {
			type: "layer",
			v: 1,
			seq: 1,
			reason: "step",
			lastResponseAt: 22,
			usageBefore: 9000,
			usageAfter: 1000,
			blocks,
		},
	});
	return `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`;
}

beforeAll(() => {
	({ nodeCli } = ensureCli());
	mkdirSync(outside, { recursive: true });
	mkdirSync(join(work, "sessions"), { recursive: true });
	writeFileSync(secret, `${MARKER}\n`.repeat(10));
	writeFileSync(legitFull, `legit full output line 1\nlegit needle here\n${"more\n".repeat(5)}`);
	// The recorded full-output file replaced by a link to a file outside (a /tmp symlink plant).
	symlinkSync(secret, linkFull);
	// Names in the working directory that a path-like code could hit.
	symlinkSync(secret, join(work, "abc123"));
	symlinkSync(secret, join(work, "link"));
	writeFileSync(session, session3());
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

function cli(args: string[], wrap: string[] = []) {
	const argv = [...wrap, NODE_BIN, nodeCli, ...args];
	const r = spawnSync(argv[0] as string, argv.slice(1), {
		cwd: work,
		env: { PATH: process.env.PATH, PI_CODING_AGENT_DIR: join(root, "agent"), HOME: root },
		encoding: "utf8",
		stdio: ["ignore", "pipe", "pipe"],
		timeout: 60_000,
	});
	expect(`${r.stdout}${r.stderr}`).not.toContain(MARKER);
	return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const PATHLIKE = [
	"../../etc/passwd",
	"../outside/secret.txt",
	secret,
	"/etc/passwd",
	"%2e%2e/%2e%2e/outside/secret.txt",
	"..%2fsecret",
	`file://${secret}`,
	"{#../outside/secret.txt FOLDED}",
	"abc123",
	"./link",
	"link",
	"~/.ssh/id_rsa",
	`${"../".repeat(40)}etc/passwd`,
];

describe("dist/cli.js recall is confined to the session and what it recorded", () => {
	test("path-like codes are unknown codes: exit 7, a clear message, nothing opened", () => {
		for (const code of PATHLIKE) {
			const r = cli(["recall", session, code]);
			expect(r.code).toBe(7);
			expect(r.stdout).toBe("");
			expect(r.stderr).toContain("no folded block is called");
			expect(r.stderr).toContain("Closest codes:");
		}
	});

	test("a code with a NUL byte (in process: argv cannot carry one) is an unknown code too", async () => {
		for (const code of ["abc\0def", `${codes.legit}\0${secret}`, `\0${secret}`]) {
			const r = await runCli(["recall", session, code], memIo({ cwd: work, env: { HOME: root } }));
			expect(r.code).toBe(7);
			expect(`${r.stdout}${r.stderr}`).not.toContain(MARKER);
			expect(r.stderr).toContain("no folded block is called");
		}
	});

	test("a recorded full-output file that is now a symlink is not followed; the folded text answers", () => {
		const r = cli(["recall", session, codes.link, "--grep", "OUTSIDE"]);
		expect(r.code).toBe(0);
		expect(r.stdout).toContain("no line matches");
		expect(r.stdout).toContain("is a symbolic link now");
		const lines = cli(["recall", session, codes.link, "--lines", "1-3"]);
		expect(lines.code).toBe(0);
		expect(lines.stdout).toContain("L1: link result head");
	});

	test("the full-output file the tool result recorded is read; a path only the fold record claims is not", () => {
		const legit = cli(["recall", session, codes.legit, "--grep", "legit needle"]);
		expect(legit.code).toBe(0);
		expect(legit.stdout).toContain(`(from the full output file ${legitFull})`);
		expect(legit.stdout).toContain("legit needle here");
		const claimed = cli(["recall", session, codes.claimed, "--grep", "MARKER"]);
		expect(claimed.code).toBe(0);
		expect(claimed.stdout).toContain("no line matches");
		expect(claimed.stdout).not.toContain(secret);
	});

	test("--grep, --lines and --search values that look like paths are only text", () => {
		for (const value of [secret, "../outside/secret.txt", "abc123", "./link"]) {
			const g = cli(["recall", session, codes.legit, "--grep", value]);
			expect(g.code).toBe(0);
			expect(g.stdout).toContain("no line matches");
			const s = cli(["recall", session, "--search", value]);
			expect(s.code).toBe(0);
			expect(s.stdout).toContain("no match in 3 folded block(s)");
		}
		for (const value of [secret, "../../etc/passwd", "1-2/../../x"]) {
			const l = cli(["recall", session, codes.legit, "--lines", value]);
			expect(l.code).toBe(7);
			expect(l.stdout).toBe("");
		}
		expect(cli(["recall", session, "--search", "5e1c9a-never"]).stdout).toContain("no match in 3 folded block(s)");
	});

	test("the session path is the user's own: one with .. in it is fine", () => {
		const r = cli(["recall", join(work, "sessions", "..", "sessions", "s.jsonl"), codes.legit, "--lines", "1-1"]);
		expect(r.code).toBe(0);
		expect(r.stdout).toContain("L1: legit full output line 1");
	});

	const strace = ["/usr/bin/strace", "/bin/strace"].find((p) => existsSync(p));
	test.skipIf(strace === undefined)("under strace: no open ever reaches the outside file or the planted links", () => {
		const log = join(root, "strace.log");
		const runs: string[][] = [
			["recall", session, codes.link, "--grep", "OUTSIDE"],
			["recall", session, codes.claimed, "--lines", "1-2"],
			["recall", session, "--search", "output"],
			...PATHLIKE.map((c) => ["recall", session, c]),
		];
		let refusedLink = 0;
		for (const args of runs) {
			cli(args, [strace as string, "-f", "-qq", "-e", "trace=open,openat,openat2,creat", "-o", log]);
			const opens = readFileSync(log, "utf8")
				.split("\n")
				.filter((l) => /open/.test(l));
			expect(opens.length).toBeGreaterThan(0);
			for (const l of opens) {
				expect(l).not.toContain(outside);
				expect(l).not.toMatch(/\/(abc123|link)"/);
				expect(l).not.toContain("/etc/passwd");
				// The recorded full-output link is tried once, without following it, and refused.
				if (l.includes(linkFull)) {
					expect(l).toMatch(/O_NOFOLLOW.*= -1 ELOOP/);
					refusedLink++;
				}
			}
			const inWork = opens.filter((l) => l.includes(work)).map((l) => /"([^"]+)"/.exec(l)?.[1]);
			for (const p of inWork)
				expect([session, legitFull, linkFull, work, join(work, "sessions")]).toContain(p as string);
		}
		expect(refusedLink).toBe(1);
	});
});
