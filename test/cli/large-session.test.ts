// A session file of more than 100 MB through the built CLI under Node 22 (dist/cli.js): status,
// recall by code, recall --grep and recall --search all answer correctly, and the file is
// streamed (read in 1 MiB chunks, only the active branch kept). The file is generated in the system
// temp directory (an abandoned branch in the middle, a fold layer every 8 rounds) and deleted after.
// Peak RSS is measured inside each run (VmHWM at exit) and printed, not asserted
// beyond a wide bound that only holding the file several times over would break.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { NODE_BIN } from "../e2e/harness/pi-env.ts";
import { type BigSessionFacts, needle, SESSION_ID, writeBigSession } from "../helpers/big-session.ts";
import { ensureCli } from "./build.ts";
import { REPO } from "./helpers.ts";

const dir = mkdtempSync(join(tmpdir(), "cf-big-"));
let facts: BigSessionFacts;
let nodeCli = "";
const PRELOAD = join(dir, "rss.cjs");
const RSS_FILE = join(dir, "rss.txt");

beforeAll(() => {
	({ nodeCli } = ensureCli());
	writeFileSync(
		PRELOAD,
		// VmHWM, not resourceUsage().maxRSS: Linux carries maxRSS over exec, so a child would report its parent's.
		[
			'process.on("exit", () => {',
			'	const fs = require("node:fs");',
			'	const kb = /VmHWM:\\s+(\\d+) kB/.exec(fs.readFileSync("/proc/self/status", "utf8"));',
			"	fs.writeFileSync(process.env.CF_RSS_FILE, String(kb ? Number(kb[1]) * 1024 : process.resourceUsage().maxRSS * 1024));",
			"});",
		].join("\n"),
	);
	facts = writeBigSession(join(dir, `2025-12-01T10-00-00-000Z_${SESSION_ID}.jsonl`));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function cli(args: string[]): { code: number | null; stdout: string; stderr: string; rss: number; ms: number } {
	const started = performance.now();
	const r = spawnSync(NODE_BIN, [nodeCli, ...args], {
		cwd: REPO,
		env: {
			PATH: process.env.PATH,
			PI_CODING_AGENT_DIR: join(dir, "agent"),
			HOME: dir,
			NODE_OPTIONS: `--require ${PRELOAD}`,
			CF_RSS_FILE: RSS_FILE,
		},
		encoding: "utf8",
		stdio: ["ignore", "pipe", "pipe"],
		maxBuffer: 64 * 1024 * 1024,
		timeout: 60_000,
	});
	const ms = performance.now() - started;
	return { code: r.status, stdout: r.stdout, stderr: r.stderr, rss: Number(readFileSync(RSS_FILE, "utf8")), ms };
}

const MB = (n: number) => `${(n / 1024 / 1024).toFixed(0)} MB`;
const report = (what: string, r: { rss: number; ms: number }) =>
	console.log(`[large session] ${what} on ${MB(facts.bytes)}: peak RSS ${MB(r.rss)}, ${r.ms.toFixed(0)} ms`);

describe("a session file of more than 100 MB, through dist/cli.js", () => {
	test(
		"status counts every entry, replays the branch and its fold layers",
		() => {
			expect(facts.bytes).toBeGreaterThan(100 * 1024 * 1024);
			const r = cli(["status", "--json", facts.path]);
			expect(r.stderr).toBe("");
			expect(r.code).toBe(0);
			const j = JSON.parse(r.stdout);
			expect(j.session).toMatchObject({
				id: SESSION_ID,
				size: facts.bytes,
				entries: facts.entries,
				branchEntries: facts.branchEntries,
				malformed: 0,
			});
			expect(facts.entries).toBeGreaterThan(facts.branchEntries);
			expect(j.folds.events).toBe(facts.layers);
			expect(j.folds.invalidRecords).toBe(0);
			expect(j.model).toMatchObject({ provider: "anthropic", model: "claude-sonnet-4-5" });
			report("status", r);
			// Holding the whole text (twice its bytes as UTF-16) besides the entries would pass this.
			expect(r.rss).toBeLessThan(3 * facts.bytes + 256 * 1024 * 1024);
		},
		{ timeout: 120_000 },
	);

	test(
		"recall by code serves the exact original, and --grep reads inside it",
		() => {
			const block = facts.folded[Math.floor(facts.folded.length / 2)] as BigSessionFacts["folded"][number];
			const whole = cli(["recall", facts.path, block.code]);
			expect(whole.code).toBe(0);
			expect(whole.stdout).toBe(
				`{#${block.code}} bash · ${block.text.length.toLocaleString("en-US")} chars, ${block.text.split("\n").length.toLocaleString("en-US")} lines (sha256 verified):\n${block.text}\n`,
			);
			report("recall <code>", whole);
			// Only the fold records are built from the session file: well under its size, whatever the GC does.
			expect(whole.rss).toBeLessThan(facts.bytes + 128 * 1024 * 1024);
			const grep = cli(["recall", facts.path, `{#${block.code}}`, "--grep", needle(block.round), "--json"]);
			expect(grep.code).toBe(0);
			const g = JSON.parse(grep.stdout);
			expect(g.served).toEqual([block.code]);
			expect(g.text).toContain(`L1: ${needle(block.round)}`);
		},
		{ timeout: 120_000 },
	);

	test(
		"recall --search finds a needle in exactly its block; the abandoned branch is not searched",
		() => {
			const block = facts.folded[3] as BigSessionFacts["folded"][number];
			const r = cli(["recall", facts.path, "--search", needle(block.round)]);
			expect(r.code).toBe(0);
			expect(r.stdout).toStartWith(
				`search "${needle(block.round)}": 1 matching line in 1 of ${facts.folded.length} folded blocks.\n{#${block.code}} bash`,
			);
			report("recall --search", r);
			const off = cli(["recall", facts.path, "--search", facts.offBranchNeedle]);
			expect(off.code).toBe(0);
			expect(off.stdout).toStartWith(
				`search "${facts.offBranchNeedle}": no match in ${facts.folded.length} folded blocks.`,
			);
		},
		{ timeout: 120_000 },
	);
});
