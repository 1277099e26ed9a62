// Hardening, round two (issue 16), on the built products: dist/cli.js under Node 22 and the compiled
// binary. Inputs that used to hang or crash the CLI: a FIFO given as the session file (status,
// recall, handoff and simulate blocked forever), a FIFO named *.jsonl in the sessions directory
// (sessions and bare status blocked), context-fold.json pointing at a FIFO or /dev/zero, a session
// line over 512 MiB ("Cannot create a string longer than …"). And what the CLI echoes: control
// characters in arguments, settings values and paths come back escaped.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { execFileSync, spawnSync } from "node:child_process";
import {
	closeSync,
	mkdirSync,
	mkdtempSync,
	openSync,
	readFileSync,
	rmSync,
	symlinkSync,
	writeFileSync,
	writeSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CONTROL_CHAR } from "../../src/core/escape.ts";
import { defaultSessionDir } from "../../src/store/paths.ts";
import { NODE_BIN } from "../e2e/harness/pi-env.ts";
import { ensureCli } from "./build.ts";
import { smallSession } from "./helpers.ts";

const root = mkdtempSync(join(tmpdir(), "cf-harden-"));
const agent = join(root, "agent");
const cwd = join(root, "project");
const env = { PI_CODING_AGENT_DIR: agent, HOME: join(root, "home") };
let builds: Array<[string, string[]]> = [];

beforeAll(() => {
	const { binary, nodeCli } = ensureCli();
	builds = [
		["node dist/cli.js", [NODE_BIN, nodeCli]],
		["dist/context-fold", [binary]],
	];
	mkdirSync(agent, { recursive: true });
	mkdirSync(cwd, { recursive: true });
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

interface Run {
	code: number | null;
	stdout: string;
	stderr: string;
	/** Killed by the timeout: the CLI hung. */
	hung: boolean;
}

function run(cmd: string[], args: string[], extraEnv: NodeJS.ProcessEnv = {}): Run {
	const r = spawnSync(cmd[0] as string, [...cmd.slice(1), ...args], {
		cwd,
		env: { PATH: process.env.PATH, ...env, ...extraEnv },
		encoding: "utf8",
		stdio: ["ignore", "pipe", "pipe"],
		// The defects made the CLI wait forever: a hang shows up here as a kill, not a stuck suite.
		timeout: 20_000,
		killSignal: "SIGKILL",
	});
	return { code: r.status, stdout: r.stdout, stderr: r.stderr, hung: r.signal === "SIGKILL" };
}

/** A session with one folded tool result, written where Pi keeps sessions for `cwd`. */
function foldedSession(name: string): { path: string; code: string } {
	const dir = defaultSessionDir(cwd, env);
	mkdirSync(dir, { recursive: true });
	const path = join(dir, name);
	const text = `${"ordinary output line\n".repeat(30)}the needle line\nlast line`;
	const lines = smallSession("f01de000-0000-4000-8000-000000000001", cwd).trimEnd().split("\n");
	const code = "c0ffee";
	const sha = new Bun.CryptoHasher("sha256").update(text).digest("hex");
	lines.push(
		JSON.stringify({
			type: "message",
			id: "t1",
			parentId: "m2",
			timestamp: "2025-12-01T10:00:00.000Z",
			message: { role: "toolResult", toolCallId: "c1", toolName: "bash", content: [{ type: "text", text }] },
		}),
		JSON.stringify({
			type: "custom",
			customType: "context-fold",
			id: "cf1",
			parentId: "t1",
			timestamp: "2025-12-01T10:00:00.000Z",
			data: {
				type: "layer",
				v: 1,
				seq: 1,
				reason: "step",
				lastResponseAt: 2,
				usageBefore: 9000,
				usageAfter: 1000,
				blocks: [
					{
						code,
						entryId: "t1",
						blockIndex: 0,
						kind: "toolResult",
						toolName: "bash",
						sha256: sha,
						chars: text.length,
						bytes: Buffer.byteLength(text),
						lines: 32,
						tokens: Math.ceil(text.length / 4),
						digest: `{#${code} FOLDED} bash`,
					},
				],
			},
		}),
	);
	writeFileSync(path, `${lines.join("\n")}\n`);
	return { path, code };
}

describe("the CLI never hangs on a FIFO, a device or a huge line", () => {
	test("a FIFO given as the session file: status, recall, handoff and simulate exit 5 at once, both builds", () => {
		const fifo = join(root, "given.jsonl");
		execFileSync("mkfifo", [fifo]);
		for (const [name, cmd] of builds) {
			for (const args of [
				["status", fifo],
				["recall", fifo, "abc123"],
				["recall", fifo, "--search", "x"],
				["handoff", fifo, "--goal", "go on"],
				["simulate", fifo],
			]) {
				const r = run(cmd, args);
				expect([name, args[0], r.hung, r.code]).toEqual([name, args[0], false, 5]);
				expect(r.stderr).toBe(
					`context-fold: ${fifo} is not a regular file (a FIFO, a device or a socket), not a session file; it was not read\n`,
				);
			}
		}
	});

	test("a FIFO named *.jsonl in the sessions directory is listed as unreadable, never read, and bare status skips it, both builds", () => {
		const { path } = foldedSession("2025-12-01T10-00-00-000Z_f01de000-0000-4000-8000-000000000001.jsonl");
		const fifo = join(defaultSessionDir(cwd, env), "2025-12-02T10-00-00-000Z_fifo.jsonl");
		execFileSync("mkfifo", [fifo]);
		for (const [name, cmd] of builds) {
			const list = run(cmd, ["sessions", "--json"]);
			expect([name, list.hung, list.code]).toEqual([name, false, 0]);
			const listed = (JSON.parse(list.stdout) as { sessions: Array<{ path: string; error: string | null }> }).sessions;
			expect(listed.map((s) => [s.path, s.error])).toEqual([
				[path, null],
				[fifo, "unreadable (not a regular file)"],
			]);
			const status = run(cmd, ["status"]);
			expect([name, status.hung, status.code]).toEqual([name, false, 0]);
			expect(status.stderr).toContain(`using the most recent session of ${cwd}`);
			expect(status.stderr).toContain(path);
		}
		rmSync(fifo);
	});

	test("context-fold.json as a FIFO or /dev/zero: reported and ignored, the command goes on, both builds", () => {
		const { path } = foldedSession("2025-12-01T10-00-00-000Z_f01de000-0000-4000-8000-000000000001.jsonl");
		const settings = join(agent, "context-fold.json");
		for (const kind of ["fifo", "/dev/zero"]) {
			rmSync(settings, { force: true });
			if (kind === "fifo") execFileSync("mkfifo", [settings]);
			else symlinkSync(kind, settings);
			for (const [name, cmd] of builds) {
				const r = run(cmd, ["status", path]);
				expect([name, kind, r.hung, r.code]).toEqual([name, kind, false, 0]);
				expect(r.stderr).toContain(
					`setting ignored: ${settings} is not a regular file; ignored, using defaults and environment.`,
				);
			}
		}
		rmSync(settings, { force: true });
	});

	test("a session line over 512 MiB is skipped and counted, with memory bounded; the rest is read, both builds", () => {
		const { path, code } = foldedSession("2025-12-03T10-00-00-000Z_huge.jsonl");
		const lines = readFileSync(path, "utf8").trimEnd().split("\n");
		// header, user, then a 600 MiB line of NULs (a hole in a sparse file: no disk), then the rest.
		const huge = join(root, "huge.jsonl");
		const fd = openSync(huge, "w");
		const head = `${lines.slice(0, 2).join("\n")}\n`;
		writeSync(fd, head);
		const hole = 600 * 1024 * 1024;
		writeSync(fd, `\n${lines.slice(2).join("\n")}\n`, Buffer.byteLength(head) + hole);
		closeSync(fd);
		const rssFile = join(root, "rss.txt");
		const preload = join(root, "rss.cjs");
		writeFileSync(
			preload,
			'process.on("exit", () => { const fs = require("node:fs"); const kb = /VmHWM:\\s+(\\d+) kB/.exec(fs.readFileSync("/proc/self/status", "utf8")); fs.writeFileSync(process.env.CF_RSS_FILE, String(Number(kb[1]) * 1024)); });',
		);
		for (const [name, cmd] of builds) {
			const nodeEnv = name.startsWith("node") ? { NODE_OPTIONS: `--require ${preload}`, CF_RSS_FILE: rssFile } : {};
			const status = run(cmd, ["status", huge, "--json"], nodeEnv);
			expect([name, status.hung, status.code]).toEqual([name, false, 0]);
			expect(status.stderr).toContain(
				`1 unreadable line in ${huge} was skipped (line 3: longer than 536805376 bytes, skipped unread)`,
			);
			if (name.startsWith("node")) {
				// Skipping holds one 1 MiB chunk: the peak stays far below the line's 600 MiB.
				expect(Number(readFileSync(rssFile, "utf8"))).toBeLessThan(256 * 1024 * 1024);
			}
			const recall = run(cmd, ["recall", huge, code, "--grep", "needle"]);
			expect([name, recall.hung, recall.code]).toEqual([name, false, 0]);
			expect(recall.stdout).toContain("L31: the needle line");
		}
	}, 120_000);
});

describe("what the CLI echoes is escaped", () => {
	const ESC = "\u001b[31m";
	test("arguments, settings values and environment values come back escaped; a number as written; lines= too wide", () => {
		const { path, code } = foldedSession("2025-12-01T10-00-00-000Z_f01de000-0000-4000-8000-000000000001.jsonl");
		writeFileSync(join(agent, "context-fold.json"), '{"reconTokens": 1e400}');
		for (const [name, cmd] of builds) {
			const cases: Array<[string[], NodeJS.ProcessEnv]> = [
				[["recall", path, `${ESC}abc\u0007`], {}],
				[["recall", path, code, "--grep", `needle${ESC}\r`], {}],
				[["recall", path, "--search", `x${ESC}\u007f`], {}],
				[["recall", path, code, "--lines", `1${ESC}`], {}],
				[["recall", `no-such-${ESC}`, "abc123"], {}],
				[["status", path], { CONTEXTFOLD_FOLD_AT: `${ESC}\u001b[2J\nline two` }],
				[[`--${ESC}`], {}],
			];
			for (const [args, extra] of cases) {
				const r = run(cmd, args, extra);
				expect([name, args.join(" "), r.hung]).toEqual([name, args.join(" "), false]);
				// One message line per report, no raw control character in it.
				expect(CONTROL_CHAR.test(`${r.stdout}${r.stderr}`.replace(/\n/g, ""))).toBe(false);
				expect(`${r.stdout}${r.stderr}`).toContain("\\u001b[31m");
			}
			const status = run(cmd, ["status", path], { CONTEXTFOLD_FOLD_AT: `${ESC}\nline two` });
			expect(status.stderr).toContain(
				'setting ignored: context-fold.json: "reconTokens" is 1e400; expected a whole number from 0 to 10000000.',
			);
			expect(status.stderr).toContain("setting ignored: CONTEXTFOLD_FOLD_AT=\\u001b[31m\\nline two is invalid");
			const lines = run(cmd, ["recall", path, code, "--lines", "1-99999999999999999999"]);
			// A usage error in the CLI's own terms (exit 2), without a made-up span.
			expect(lines.code).toBe(2);
			expect(lines.stderr).toContain(
				"context-fold: --lines 1-99999999999999999999 is wider than 5,000 lines; ask for at most 5,000 at a time, e.g. --lines 1-5000",
			);
		}
		rmSync(join(agent, "context-fold.json"));
	});
});
