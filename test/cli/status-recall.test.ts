// `status` and `recall` through main(argv, io), on the real traces in a private agent directory.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { MaskedInput } from "../../src/core/input-records.ts";
import { renderPath, valueAt } from "../../src/core/inputs.ts";
import { parseSessionText } from "../../src/core/session/entries.ts";
import { COMPACT_ID, LARGE_ID, memIo, runCli, TRACE_CWD, type TraceAgent, traceAgent } from "./helpers.ts";

describe("status", () => {
	let agent: TraceAgent;
	beforeAll(() => {
		agent = traceAgent();
	});
	afterAll(() => agent.cleanup());
	const io = (cwd = TRACE_CWD) => memIo({ env: agent.env, cwd });

	test("with no session: the most recent session of the directory, and it says which", async () => {
		const r = await runCli(["status"], io());
		expect(r.code).toBe(0);
		expect(r.stderr).toBe(
			`using the most recent session of ${TRACE_CWD} (as pi -c would): ${COMPACT_ID} ${agent.recorded}\n`,
		);
		expect(r.stdout).toContain(`session ${COMPACT_ID}  ${agent.recorded}`);
		// Every recorded fold event counts; the compactions since took the older folded blocks out of context.
		expect(r.stdout).toMatch(
			new RegExp(
				`context-fold status\\n {2}folds: ${agent.recordedLayers} events, \\d+ blocks masked, ~[\\d.]+k tok out of every request\\n`,
			),
		);
		expect(r.stdout).toMatch(/\n {2}cache: \d+% hit over the session, \d+% on the last response \(465 responses\)/);
		expect(r.stdout).toContain("  fold cost: ~");
		// Money reads one way everywhere (formatDollars): cents from $1, four decimals below.
		expect(r.stdout).toMatch(/\n {2}net: [+-]\$(\d+\.\d\d|0\.\d{4}) \(saved \$/);
		// The traces are a year old against the test clock: the idle advisory speaks.
		expect(r.stdout).toContain("advisories:\n  ⚠ cache may have expired: ~");
	});

	test("--json: the documented schema, with exact fold facts", async () => {
		const r = await runCli(["status", "--json", LARGE_ID.slice(0, 6)], io());
		expect(r.code).toBe(0);
		const j = JSON.parse(r.stdout);
		expect(Object.keys(j)).toEqual([
			"schema",
			"session",
			"model",
			"position",
			"folds",
			"cache",
			"foldCost",
			"flags",
			"advisories",
			"text",
		]);
		expect(j.schema).toBe("context-fold/status@1");
		expect(j.session).toEqual({
			id: LARGE_ID,
			path: agent.large,
			version: 1,
			cwd: TRACE_CWD,
			size: 974031,
			entries: 1018,
			branchEntries: 1018,
			malformed: 0,
			chosen: "argument",
			brokenChain: null,
		});
		expect(j.model).toEqual({
			provider: "anthropic",
			model: "claude-sonnet-4-5",
			window: 200000,
			windowSource: "default",
		});
		// No context-fold ran in this session: nothing folded yet; at 89% of the window, the next request folds.
		expect(j.folds).toEqual({ events: 0, maskedBlocks: 0, maskedTokens: 0, invalidRecords: 0, layers: [] });
		expect(j.position).toMatchObject({
			usage: 177657,
			usageSource: "reported",
			state: "fold",
			armed: true,
			budget: 150000,
		});
		expect(j.position.pendingFold).toMatchObject({ reason: "budget" });
		expect(j.position.pendingFold.blocks).toBeGreaterThan(0);
		// One set of numbers: the position line names the due fold (blocks and tokens) instead of the gauge.
		expect(j.text).toContain(
			`; fold due on the next request (budget): ${j.position.pendingFold.blocks} blocks, ~${Math.round(j.position.pendingFold.tokens / 1000)}k tok\n`,
		);
		expect(j.text).not.toContain("next fold:");
		expect(j.text).not.toContain("next request:");
		expect(j.cache.responses).toBe(431);
		expect(Object.keys(j.flags)).toEqual([
			"offWire",
			"irreducible",
			"recallChurn",
			"secondForcedCompaction",
			"coldCarry",
		]);
		expect(j.flags).toMatchObject({ offWire: false, recallChurn: [], secondForcedCompaction: false, coldCarry: false });
		expect(j.advisories.map((a: { kind: string }) => a.kind)).toEqual(["idle"]);
	});

	test("--window and --price are taken and reported", async () => {
		const r = await runCli(["status", "--json", "--window", "1000000", "--price", "openai", agent.large], io());
		const j = JSON.parse(r.stdout);
		expect(j.model.window).toBe(1000000);
		expect(j.model.windowSource).toBe("--window");
		expect(j.foldCost.prices).toEqual({
			input: 1.25,
			output: 10,
			cacheRead: 0.125,
			cacheWrite: 0,
			source: "--price openai",
		});
		expect(j.position.pendingFold).toBeNull();
	});

	test("malformed lines are skipped, counted and reported", async () => {
		const lines = readFileSync(agent.large, "utf8").split("\n");
		lines.splice(5, 0, "{not json", '{"type":"label"}{"type":"label"}');
		const path = join(agent.root, "damaged.jsonl");
		writeFileSync(path, lines.join("\n"));
		const r = await runCli(["status", "--json", path], io());
		expect(r.code).toBe(0);
		expect(JSON.parse(r.stdout).session.malformed).toBe(2);
		expect(r.stderr).toBe(
			`2 unreadable lines in ${path} were skipped (line 6: not valid JSON; line 7: two JSON objects glued on one line)\n`,
		);
	});
});

describe("recall", () => {
	let agent: TraceAgent;
	let code = "";
	let original = "";
	beforeAll(() => {
		agent = traceAgent();
		const parsed = parseSessionText(readFileSync(agent.recorded, "utf8"));
		const layer = parsed.entries.find((e) => e.type === "custom")?.data as {
			blocks: Array<{ code: string; entryId: string; blockIndex: number }>;
		};
		const block = layer.blocks[0] as { code: string; entryId: string; blockIndex: number };
		code = block.code;
		const entry = parsed.entries.find((e) => e.id === block.entryId);
		const content = (entry?.message?.content ?? []) as Array<{ text?: string; thinking?: string }>;
		const part = content[block.blockIndex];
		original = part?.text ?? part?.thinking ?? "";
	});
	afterAll(() => agent.cleanup());
	const io = () => memIo({ env: agent.env, cwd: TRACE_CWD });

	test("a code: the whole original, sha256-verified, uncapped", async () => {
		const r = await runCli(["recall", COMPACT_ID, `{#${code} FOLDED}`], io());
		expect(r.code).toBe(0);
		expect(r.stdout).toMatch(
			new RegExp(`^\\{#${code}\\} \\S+ · [\\d,]+ chars, [\\d,]+ lines \\(sha256 verified\\):\\n`),
		);
		// After the header line, the original's exact bytes (and a final newline if it had none).
		expect(r.stdout).toBe(`${r.stdout.split("\n")[0]}\n${original}${original.endsWith("\n") ? "" : "\n"}`);
	});

	test("--lines, --grep, --search and --max-tokens answer as the in-Pi tool does", async () => {
		const lines = await runCli(["recall", COMPACT_ID, code, "--lines", "1-2"], io());
		expect(lines.stdout).toContain(`lines 1-2 of`);
		expect(lines.stdout.split("\n")[1]).toBe(`L1: ${original.split("\n")[0]}`);
		const word = (original.match(/[A-Za-z]{6,}/) ?? ["import"])[0];
		const grep = await runCli(["recall", COMPACT_ID, code, "--grep", word], io());
		expect(grep.code).toBe(0);
		expect(grep.stdout).toMatch(/matching lines? for/);
		const search = await runCli(["recall", COMPACT_ID, "--search", word, "--json"], io());
		const j = JSON.parse(search.stdout);
		expect(j.schema).toBe("context-fold/recall@1");
		expect(j.request).toEqual({ code: null, search: word, grep: null, lines: null, maxTokens: null });
		expect(j.served).toContain(code);
		const capped = await runCli(["recall", COMPACT_ID, code, "--max-tokens", "50"], io());
		expect(capped.stdout).toContain("cut at the answer cap");
		expect(capped.stdout.length).toBeLessThan(400);
	});

	test("a folded tool-call input: the argument value, sha256-verified, with grep", async () => {
		const parsed = parseSessionText(readFileSync(agent.recorded, "utf8"));
		const input = parsed.entries
			.filter((e) => e.type === "custom")
			.flatMap((e) => (e.data as { inputs?: { blocks: MaskedInput[] } }).inputs?.blocks ?? [])[0] as MaskedInput;
		expect(input).toBeDefined();
		const entry = parsed.entries.find((e) => e.id === input.entryId);
		const part = (entry?.message?.content as Array<{ arguments?: unknown }> | undefined)?.[input.blockIndex];
		const value = valueAt(part?.arguments, input.path) as string;
		expect(value.length).toBe(input.chars);
		const r = await runCli(["recall", COMPACT_ID, input.code], io());
		expect(r.code).toBe(0);
		expect(r.stdout).toBe(
			`{#${input.code}} ${input.toolName} input ${renderPath(input.path)} · ${input.chars.toLocaleString("en-US")} chars, ${input.lines.toLocaleString("en-US")} lines (sha256 verified):\n${value}${value.endsWith("\n") ? "" : "\n"}`,
		);
		const word = (value.match(/[A-Za-z]{6,}/) ?? ["import"])[0];
		const grep = await runCli(["recall", COMPACT_ID, input.code, "--grep", word], io());
		expect(grep.code).toBe(0);
		expect(grep.stdout).toMatch(/: \d+ matching lines? for "/);
	});

	test("an unknown code: exit 7 with the closest codes", async () => {
		const r = await runCli(["recall", COMPACT_ID, "zzzzzz"], io());
		expect(r.code).toBe(7);
		expect(r.stdout).toBe("");
		expect(r.stderr).toMatch(/^context-fold: no folded block is called "zzzzzz"\. Closest codes: \{#[0-9a-f]{6}\}/);
	});

	test("a session file edited after the fold: refused with exit 6, never wrong bytes", async () => {
		const text = readFileSync(agent.recorded, "utf8");
		const first = original.split("\n")[0] as string;
		const edited = text.replace(JSON.stringify(first).slice(1, -1), `${JSON.stringify(first).slice(1, -1)} (edited)`);
		expect(edited).not.toBe(text);
		const path = join(agent.root, "edited.jsonl");
		writeFileSync(path, edited);
		const r = await runCli(["recall", path, code], io());
		expect(r.code).toBe(6);
		expect(r.stdout).toBe("");
		expect(r.stderr).toMatch(
			new RegExp(
				`^context-fold: \\{#${code}\\}: refused\\. The bytes now at entry \\S+ block \\d+ do not match what was folded`,
			),
		);
	});

	test("without a terminal, missing arguments are a usage error (exit 2), never a prompt", async () => {
		for (const argv of [["recall"], ["recall", COMPACT_ID]]) {
			const r = await runCli(argv, io());
			expect(r.code).toBe(2);
			expect(r.stderr).toContain("Usage: context-fold recall <session> <code>");
		}
		const both = await runCli(["recall", COMPACT_ID, code, "--search", "x"], io());
		expect(both.code).toBe(2);
	});
});
