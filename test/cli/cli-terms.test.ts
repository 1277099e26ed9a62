// The CLI speaks its own terms (issues 12 and 15), through main(argv, io) on small synthetic
// sessions: parseArgs' strict parsing with today's messages, help and JSON errors that agree across
// commands, recall's messages in flags, one line numbering for search and grep, recall --json lines,
// session ids long enough to tell apart, unreadable files listed, and one net and money format for
// status and sessions.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { COMMANDS } from "../../src/cli/main.ts";
import { formatDollars } from "../../src/core/wording.ts";
import { memIo, runCli } from "./helpers.ts";
import { FOLDED_CODE, writeFoldedSession } from "./sessions-fixture.ts";

let root = "";
let dir = "";
let env: NodeJS.ProcessEnv = {};
/** A session whose bash result Pi truncated: the block holds lines 6-10 of the 10 in its full-output file. */
let truncated = "";
let fullOutput = "";
const ID = "0190aaaa-1111-7000-8000-000000000001";
const FULL = Array.from(
	{ length: 10 },
	(_, i) => `row ${i + 1}${i + 1 === 2 ? " NEEDLE dropped" : i + 1 === 8 ? " NEEDLE kept" : ""}`,
);
const BLOCK = `${FULL.slice(5).join("\n")}\n\n[Showing lines 6-10 of 10. Full output: ${"<full>"}]`;

beforeAll(() => {
	root = mkdtempSync(join(tmpdir(), "cf-terms-"));
	dir = join(root, "sessions");
	mkdirSync(dir);
	env = { PI_CODING_AGENT_DIR: join(root, "agent"), HOME: join(root, "home") };
	fullOutput = join(root, "pi-bash-0123456789abcdef.log");
	writeFileSync(fullOutput, `${FULL.join("\n")}\n`);
	truncated = writeFoldedSession(join(dir, "truncated.jsonl"), {
		id: ID,
		text: BLOCK.replace("<full>", fullOutput),
		fullOutputPath: fullOutput,
	});
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

const io = () => memIo({ env, cwd: root });
const cli = (argv: string[]) => runCli(["--session-dir", dir, ...argv], io());

describe("arguments: parseArgs from node:util, strict, with the usage messages kept", () => {
	test.each([
		[["status", "--bogus"], "context-fold: unknown option --bogus"],
		[["status", "-z"], "context-fold: unknown option -z"],
		[["sessions", "--all=yes"], "context-fold: --all takes no value"],
		[["status", "--window"], "context-fold: --window needs a value"],
		[["sessions", "--limit", "0"], 'context-fold: --limit needs a positive whole number, got "0"'],
	])("%p is a usage error (exit 2): %p", async (argv, first) => {
		const r = await cli(argv);
		expect(r.code).toBe(2);
		expect(r.stderr.split("\n")[0]).toBe(first);
	});

	test("a value starting with a dash after a flag that takes one is that flag's value (--grep -pPW)", async () => {
		const r = await cli(["recall", truncated, FOLDED_CODE, "--grep", "-pPW"]);
		expect(r.code).toBe(0);
		expect(r.stdout).toStartWith(`{#${FOLDED_CODE}} bash · `);
		expect(r.stdout).toContain('no line matches "-pPW"');
	});

	test("-h is --help; `--` ends the options", async () => {
		expect((await cli(["sessions", "-h"])).stdout).toStartWith("Usage: context-fold sessions");
		const r = await cli(["status", "--", "--json"]);
		expect(r.code).toBe(3);
		expect(r.stderr).toContain('no session matches "--json"');
	});

	test("contradictory flags are a usage error: --limit with --all, --grep with --lines", async () => {
		const both = await cli(["sessions", "--limit", "1", "--all"]);
		expect(both.code).toBe(2);
		expect(both.stderr.split("\n")[0]).toBe("context-fold: --limit and --all contradict each other; give one");
		const recall = await cli(["recall", truncated, FOLDED_CODE, "--grep", "x", "--lines", "1-2"]);
		expect(recall.code).toBe(2);
		expect(recall.stderr.split("\n")[0]).toBe("context-fold: --grep and --lines contradict each other; give one");
	});

	test("every command's --help names --session-dir", async () => {
		for (const name of COMMANDS.keys()) {
			const r = await runCli([name, "--help"], io());
			expect(r.code).toBe(0);
			expect(r.stdout).toContain("--session-dir DIR");
		}
	});

	test("--json: errors are a JSON document on stdout too (schema context-fold/error@1), exit codes unchanged", async () => {
		const unknown = await cli(["status", "nosuch", "--json"]);
		expect(unknown.code).toBe(3);
		expect(JSON.parse(unknown.stdout)).toEqual({
			schema: "context-fold/error@1",
			error: {
				code: "unknown-session",
				exit: 3,
				message: `no session matches "nosuch" (looked for a session id or id prefix in ${dir})`,
			},
		});
		expect(unknown.stderr).toBe(`context-fold: ${JSON.parse(unknown.stdout).error.message}\n`);
		const usage = await cli(["sessions", "--json", "--limit", "1", "--all"]);
		expect(usage.code).toBe(2);
		expect(JSON.parse(usage.stdout).error).toMatchObject({ code: "usage", exit: 2 });
		const recall = await cli(["recall", truncated, "zzzzzz", "--json"]);
		expect(recall.code).toBe(7);
		expect(JSON.parse(recall.stdout).error.code).toBe("recall");
	});
});

describe("recall speaks the CLI's flags", () => {
	test.each([
		[
			["--lines", "abc"],
			2,
			"--lines abc is not a range; use --lines a-b with 1-based line numbers, e.g. --lines 40-80",
		],
		[["--lines", "5-2"], 2, "--lines 5-2 is inverted; the first line must not be after the last"],
		[["--lines", "0-3"], 2, "--lines 0-3: line numbers start at 1"],
		[["--grep", " "], 2, "--grep needs some text to look for"],
		[["--lines", "400-410"], 7, `{#${FOLDED_CODE}} has 10 lines (from the full output file`],
	])("%p exits %p: %p", async (flags, code, message) => {
		const r = await cli(["recall", truncated, FOLDED_CODE, ...flags]);
		expect(r.code).toBe(code);
		expect(r.stderr).toContain(`context-fold: ${message}`);
		expect(r.stderr).not.toMatch(/lines=|grep=|recall_folded/);
	});

	test("past the end, an unknown code, and a capped answer name flags and a command to paste", async () => {
		const past = await cli(["recall", truncated, FOLDED_CODE, "--lines", "400-410"]);
		expect(past.stderr).toContain("; --lines 400-410 is past the end.");
		const unknown = await cli(["recall", truncated, "zzzzzz"]);
		expect(unknown.stderr).toContain(
			`Closest codes: {#${FOLDED_CODE}}. Or use --search TEXT to find a detail in every folded block.`,
		);
		const capped = await cli(["recall", truncated, FOLDED_CODE, "--max-tokens", "8"]);
		expect(capped.code).toBe(0);
		expect(capped.stdout).toMatch(
			new RegExp(`not shown\\. Run context-fold recall ${ID} ${FOLDED_CODE} --lines \\d+-\\d+ or --grep TEXT\\]\\n$`),
		);
		expect(capped.stdout).not.toMatch(/recall_folded|lines=|grep=/);
	});
});

describe("one line numbering for --search and --grep, and they say which file", () => {
	test("both number the full output file while it exists (the kept line is L8, not L3 of the block)", async () => {
		const search = await cli(["recall", truncated, "--search", "NEEDLE"]);
		expect(search.code).toBe(0);
		expect(search.stdout).toBe(
			[
				'search "NEEDLE": 2 matching lines in 1 of 1 folded block.',
				`{#${FOLDED_CODE}} bash · ${BLOCK.replace("<full>", fullOutput).length} chars, 7 lines: 2 matches (from the full output file ${fullOutput})`,
				"  L2: row 2 NEEDLE dropped",
				"  L8: row 8 NEEDLE kept",
				"",
			].join("\n"),
		);
		const grep = await cli(["recall", truncated, FOLDED_CODE, "--grep", "NEEDLE kept"]);
		expect(grep.stdout).toContain(`1 matching line for "NEEDLE kept" (from the full output file ${fullOutput})`);
		expect(grep.stdout).toContain("L8: row 8 NEEDLE kept");
	});

	test("without the full output file both number the folded block, and say so", async () => {
		const path = join(root, "gone.jsonl");
		const missing = join(root, "pi-bash-fedcba9876543210.log");
		writeFoldedSession(path, {
			id: "0190bbbb-0000-7000-8000-000000000009",
			text: BLOCK.replace("<full>", missing),
			fullOutputPath: missing,
		});
		const search = await runCli(["recall", path, "--search", "NEEDLE kept"], io());
		const grep = await runCli(["recall", path, FOLDED_CODE, "--grep", "NEEDLE kept"], io());
		const note = `(from the folded text only: the full output file ${missing} no longer exists, so lines dropped by truncation are gone)`;
		expect(search.stdout).toContain(`1 match ${note}\n  L3: row 8 NEEDLE kept`);
		expect(grep.stdout).toContain(`for "NEEDLE kept" ${note}`);
		expect(grep.stdout).toContain("L3: row 8 NEEDLE kept");
	});
});

describe("recall --json gives the lines as data", () => {
	test("grep: each line with its number, whether it matches, and whose numbering it is", async () => {
		const r = await cli(["recall", truncated, FOLDED_CODE, "--grep", "NEEDLE kept", "--json"]);
		const j = JSON.parse(r.stdout);
		expect(j.blocks).toEqual([
			{
				code: FOLDED_CODE,
				source: { type: "full-output", path: fullOutput },
				total: 1,
				lines: [6, 7, 8, 9, 10].map((n) => ({ line: n, text: FULL[n - 1], match: n === 8 })),
			},
		]);
		expect(typeof j.text).toBe("string");
	});

	test("search and a whole block", async () => {
		const s = JSON.parse((await cli(["recall", truncated, "--search", "needle", "--json"])).stdout);
		expect(s.blocks).toEqual([
			{
				code: FOLDED_CODE,
				source: { type: "full-output", path: fullOutput },
				total: 2,
				lines: [
					{ line: 2, text: FULL[1] },
					{ line: 8, text: FULL[7] },
				],
			},
		]);
		const whole = JSON.parse((await cli(["recall", truncated, FOLDED_CODE, "--json"])).stdout);
		expect(whole.blocks[0].source).toEqual({ type: "block" });
		expect(whole.blocks[0].lines.map((l: { text: string }) => l.text).join("\n")).toBe(
			BLOCK.replace("<full>", fullOutput),
		);
	});
});

describe("sessions", () => {
	test("ids as long as it takes to tell them apart (git-style), in the list and the error", async () => {
		const flat = join(root, "close-ids");
		mkdirSync(flat);
		// Started within the same minute: their first 8 (and 12) characters are the same.
		writeFoldedSession(join(flat, "a.jsonl"), {
			id: "0190cccc-dd11-7000-8000-00000000000a",
			text: "x",
			unfolded: true,
		});
		writeFoldedSession(join(flat, "b.jsonl"), {
			id: "0190cccc-dd12-7000-8000-00000000000b",
			text: "y",
			unfolded: true,
		});
		writeFoldedSession(join(flat, "c.jsonl"), {
			id: "0190dddd-0000-7000-8000-00000000000c",
			text: "z",
			unfolded: true,
		});
		const r = await runCli(["--session-dir", flat, "sessions"], io());
		const ids = r.stdout
			.split("\n")
			.slice(2)
			.filter((l) => l !== "")
			.map((l) => l.split(/\s+/)[0])
			.sort();
		expect(ids).toEqual(["0190cccc-dd11", "0190cccc-dd12", "0190dddd-0000"]);
		// What the list shows can be typed back.
		expect((await runCli(["--session-dir", flat, "status", "0190cccc-dd12", "--json"], io())).code).toBe(0);
		expect((await runCli(["--session-dir", flat, "status", "0190cccc"], io())).code).toBe(4);
	});

	test("empty and unreadable .jsonl files are listed as unreadable, not left out", async () => {
		const flat = join(root, "with-bad");
		mkdirSync(flat);
		writeFoldedSession(join(flat, "good.jsonl"), {
			id: "0190eeee-0000-7000-8000-000000000001",
			text: "x",
			unfolded: true,
		});
		writeFileSync(join(flat, "empty.jsonl"), "");
		writeFileSync(join(flat, "junk.jsonl"), "not json at all\n");
		const r = await runCli(["--session-dir", flat, "sessions"], io());
		expect(r.code).toBe(0);
		const rows = r.stdout.split("\n").slice(2);
		expect(rows.find((l) => l.includes("empty.jsonl"))).toMatch(
			new RegExp(
				`^\\(unreadable\\)\\s+.*\\s0 B\\s+\\?\\s+\\?\\s+\\?\\s+—\\s+${join(flat, "empty.jsonl")}  \\(empty file\\)$`,
			),
		);
		expect(rows.find((l) => l.includes("junk.jsonl"))).toContain(`${join(flat, "junk.jsonl")}  (no session header)`);
		const j = JSON.parse((await runCli(["--session-dir", flat, "sessions", "--json"], io())).stdout);
		expect(j.total).toBe(1);
		expect(j.sessions[0].error).toBeNull();
		expect(
			j.sessions
				.slice(1)
				.map((s: { error: string }) => s.error)
				.sort(),
		).toEqual(["empty file", "no session header"]);
	});

	test("status and sessions show one net, from the same prices (models.json), formatted one way", async () => {
		const agent = join(root, "priced-agent");
		mkdirSync(agent, { recursive: true });
		writeFileSync(
			join(agent, "models.json"),
			JSON.stringify({
				providers: {
					myproxy: { models: [{ id: "big-1", cost: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 } }] },
				},
			}),
		);
		const flat = join(root, "priced");
		mkdirSync(flat);
		const path = writeFoldedSession(join(flat, "p.jsonl"), {
			id: "0190ffff-0000-7000-8000-000000000001",
			text: "a lot of output\n".repeat(400),
			provider: "myproxy",
			model: "big-1",
		});
		const pricedIo = () => memIo({ env: { PI_CODING_AGENT_DIR: agent, HOME: join(root, "home") }, cwd: root });
		const status = JSON.parse((await runCli(["status", path, "--json"], pricedIo())).stdout);
		expect(status.foldCost.prices.source).toBe("models.json");
		expect(status.foldCost.net).not.toBeNull();
		const net = status.foldCost.net as number;
		expect(status.text).toContain(`  net: ${formatDollars(net, { signed: true })} (saved `);
		const listed = JSON.parse((await runCli(["--session-dir", flat, "sessions", "--json"], pricedIo())).stdout);
		expect(listed.sessions[0].savedNet).toBe(net);
		const table = (await runCli(["--session-dir", flat, "sessions"], pricedIo())).stdout;
		expect(table).toContain(`  ${formatDollars(net)}  /p/app`);
	});
});
