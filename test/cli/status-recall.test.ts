// `status` and `recall` through main(argv, io), on the real traces in a private agent directory.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
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
			"rule",
			"pricing",
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
		// No context-fold ran in this session: nothing folded yet. The trace is a year old against the
		// clock, so the prompt cache is long gone: the priced rule folds everything foldable at once (the
		// rewrite costs nothing more than the cold prompt would). The layer records 0.1.0's "threshold"
		// for older readers; `rule` says why it fires.
		expect(j.folds).toEqual({ events: 0, maskedBlocks: 0, maskedTokens: 0, invalidRecords: 0, layers: [] });
		expect(j.position).toMatchObject({
			usage: 177657,
			usageSource: "reported",
			state: "fold",
			armed: true,
			budget: 150000,
			threshold: null,
			step: null,
		});
		expect(j.position.pendingFold).toMatchObject({ reason: "threshold", rule: "cold" });
		expect(Object.keys(j.position.pendingFold)).toEqual(["reason", "rule", "blocks", "tokens"]);
		expect(j.position.pendingFold.blocks).toBeGreaterThan(0);
		// One set of numbers: the position line names the due fold (blocks and tokens) instead of the gauge.
		expect(j.text).toContain(
			`; fold due on the next request (cache cold: idle past the cache lifetime): ${j.position.pendingFold.blocks} blocks, ~${Math.round(j.position.pendingFold.tokens / 1000)}k tok\n`,
		);
		expect(j.rule).toEqual({ active: "priced", pinnedBy: null, pins: [] });
		// Sonnet 4.5's catalog prices: reads at a tenth of the input price, writes at 1.25 times.
		expect(j.pricing).toMatchObject({
			basis: "model",
			rates: { read: 0.1, write: 1.25 },
			prices: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
			cold: "idle",
			lastFold: null,
		});
		const next = j.pricing.next;
		expect(next).toMatchObject({ state: "due", rule: "cold", requestsUntilDue: 0, paysBackAfter: 0 });
		// Cold, the event only removes tokens: it saves on the very next request (a negative rewrite).
		expect(next.rewrite).toBeLessThan(0);
		expect(next.payback).toBe(Math.round(next.freed * 0.1));
		expect(next.words).toBe(
			`saves from the first request: ~${(next.payback / 1000).toFixed(1)}k tok-eq ($${((next.payback * 3) / 1e6).toFixed(4)}) per request`,
		);
		expect(j.text).toContain(
			"\n  rule: priced (read 0.10×, write 1.25× the input price; cache cold: idle past the cache lifetime)\n",
		);
		expect(j.text).toContain(`\n  payback: fold due: ${next.words}\n`);
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
		// The preset's prices decide: no write premium (OpenAI-style), so a write costs what input does.
		expect(j.pricing).toMatchObject({
			basis: "model",
			rates: { read: 0.1, write: 1 },
			prices: { input: 1.25, output: 10, cacheRead: 0.125, cacheWrite: 0 },
		});
		// 18 % of a 1M window, but the cache is cold (a year old): everything foldable folds at once.
		expect(j.position.pendingFold).toMatchObject({ reason: "threshold", rule: "cold" });
		expect(j.text).toContain("; fold due on the next request (cache cold: idle past the cache lifetime): ");
	});

	test("fold points pinned by hand: the fixed ladder, said in the header and in the JSON", async () => {
		writeFileSync(join(agent.agentDir, "context-fold.json"), JSON.stringify({ v: 1, foldStep: 0.1 }));
		try {
			const env = { ...agent.env, CONTEXTFOLD_FOLD_AT: "0.4" };
			const r = await runCli(["status", "--json", agent.large], memIo({ env, cwd: TRACE_CWD }));
			expect(r.code).toBe(0);
			const j = JSON.parse(r.stdout);
			expect(j.rule).toEqual({
				active: "fixed",
				pinnedBy: "hand",
				pins: [
					{ knob: "foldAt", name: "CONTEXTFOLD_FOLD_AT", source: "env", value: 0.4 },
					{ knob: "foldStep", name: "foldStep", source: "file", value: 0.1 },
				],
			});
			// Over the budget (178k of 150k): the ladder's budget fold, which the priced rule does not price.
			expect(j.position).toMatchObject({ threshold: 80000, step: 20000 });
			expect(j.position.pendingFold).toMatchObject({ reason: "budget", rule: null });
			expect(j.pricing.next).toBeNull();
			const notice =
				'  ⚠ fold points pinned by hand: CONTEXTFOLD_FOLD_AT=0.4 (environment), foldStep 0.1 (context-fold.json). The priced fold rule is off for this session: folds come at these fixed points, as in 0.1.0. Unset them (or choose "default" in /context-fold Settings) to return to the priced rule.';
			const header = j.text.split("\ncontext-fold status\n")[0].split("\n");
			expect(header.at(-1)).toBe(notice);
			expect(j.text).toContain(
				"\n  rule: fixed fold points, set by hand: CONTEXTFOLD_FOLD_AT=0.4 (environment), foldStep 0.1 (context-fold.json); the priced rule is off until they are unset\n",
			);
			expect(j.text).not.toContain("payback:");
		} finally {
			rmSync(join(agent.agentDir, "context-fold.json"));
		}
		// The test seam runs the same ladder without the notice, and says what it is.
		const seam = await runCli(
			["status", "--json", agent.large],
			memIo({ env: { ...agent.env, CONTEXTFOLD_TEST_FIXED_FOLDS: "1" }, cwd: TRACE_CWD }),
		);
		const j = JSON.parse(seam.stdout);
		expect(j.rule).toEqual({ active: "fixed", pinnedBy: "test-seam", pins: [] });
		expect(j.text).not.toContain("pinned by hand");
		expect(j.text).toContain("\n  rule: fixed fold points (test seam CONTEXTFOLD_TEST_FIXED_FOLDS=1)\n");
	});

	test("the last fold's payback, from the decision record the priced rule left on its layer", async () => {
		const entries = readFileSync(agent.recorded, "utf8")
			.split("\n")
			.filter((l) => l.includes('"customType":"context-fold"'))
			.map((l) => JSON.parse(l).data);
		const last = entries.at(-1);
		expect(last.decision).toBeDefined();
		const r = await runCli(["status", "--json", agent.recorded], io());
		const j = JSON.parse(r.stdout);
		expect(j.folds.layers.map((l: { decision: unknown }) => l.decision)).toEqual(entries.map((e) => e.decision));
		const { v, rule, prices, basis, rewrite, payback, rent } = last.decision;
		const after = Math.ceil(rewrite / payback);
		// Decided without prices (the trace helper plans in tokens): no dollars in the words.
		expect(basis).toBe("ratios");
		expect(j.pricing.lastFold).toEqual({
			seq: last.seq,
			v,
			rule,
			prices,
			basis,
			rewrite,
			payback,
			rent,
			cold: last.decision.cold ?? null,
			paysBackAfter: after,
			words: expect.stringMatching(
				new RegExp(
					`^rewrite ~[\\d.]+k tok-eq once, saves ~[\\d.]+k? per later request: pays back after ${after} requests$`,
				),
			),
		});
		expect(j.text).toContain(`\n  payback: last fold #${last.seq} (`);
		expect(j.text).toContain(`): ${j.pricing.lastFold.words}\n`);
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
