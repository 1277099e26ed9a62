// handoff, simulate, sessions, session discovery and the error handler, through main(argv, io).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { main } from "../../src/cli/main.ts";
import { renderHandoff } from "../../src/core/handoff.ts";
import { extractSeedRecord } from "../../src/core/seed/extract.ts";
import { DEFAULT_SEED_MAX_CHARS, renderSeed } from "../../src/core/seed/render.ts";
import { sha256 } from "../../src/store/hash.ts";
import { sessionDataDir } from "../../src/store/paths.ts";
import { appendSeedRecord, readSeedIndex } from "../../src/store/seed-index.ts";
import { foldInput } from "../core/seed/fixtures.ts";
import {
	COMPACT_ID,
	LARGE_ID,
	memIo,
	OTHER_CWD,
	runCli,
	SMALL_ID,
	smallSession,
	TRACE_CWD,
	type TraceAgent,
	traceAgent,
} from "./helpers.ts";

describe("the command line itself", () => {
	test("--version, --help, and usage errors with exit 2", async () => {
		expect(await runCli(["--version"], memIo())).toEqual({ code: 0, stdout: "dev\n", stderr: "" });
		const help = await runCli(["--help"], memIo());
		expect(help.code).toBe(0);
		expect(help.stdout).toContain("Usage: context-fold <command> [options]");
		expect((await runCli(["simulate", "--help"], memIo())).stdout).toContain(
			"Usage: context-fold simulate <session...>",
		);
		const none = await runCli([], memIo());
		expect(none.code).toBe(2);
		expect(none.stderr.split("\n")[0]).toBe("context-fold: missing <command>");
		expect((await runCli(["frobnicate"], memIo())).stderr.split("\n")[0]).toBe(
			'context-fold: unknown command "frobnicate"',
		);
		expect((await runCli(["status", "--bogus"], memIo())).code).toBe(2);
		expect((await runCli(["status", "--window"], memIo())).stderr.split("\n")[0]).toBe(
			"context-fold: --window needs a value",
		);
		expect((await runCli(["simulate", "x", "--ttl", "2h"], memIo())).code).toBe(2);
		expect((await runCli(["status", "--price", "cheap", "x"], memIo())).code).toBe(2);
	});

	test("an unexpected error: one line naming the file that holds the details, exit 1", async () => {
		const io = memIo();
		const broken = {
			...io,
			stdout: {
				write() {
					throw new Error("disk on fire");
				},
			} as unknown as typeof io.stdout,
		};
		const code = await main(["--version"], broken);
		await new Promise((r) => setImmediate(r));
		expect(code).toBe(1);
		const m = /^context-fold: internal error: disk on fire \(details in (\S+)\)\. Please report it\.\n$/.exec(io.err());
		expect(m).not.toBeNull();
		expect(readFileSync(m?.[1] as string, "utf8")).toContain("Error: disk on fire");
		rmSync(m?.[1] as string);
	});

	test("unknown session (3), unreadable or non-session file (5), each with its own message", async () => {
		const env = { PI_CODING_AGENT_DIR: "/nonexistent/agent" };
		const unknown = await runCli(["status", "abc123"], memIo({ env }));
		expect(unknown).toMatchObject({ code: 3, stdout: "" });
		expect(unknown.stderr).toBe(
			'context-fold: no session matches "abc123" (looked for a session id or id prefix in /nonexistent/agent/sessions)\n',
		);
		const missing = await runCli(["status", "/nonexistent/s.jsonl"], memIo({ env }));
		expect(missing).toEqual({
			code: 3,
			stdout: "",
			stderr: "context-fold: session file not found: /nonexistent/s.jsonl\n",
		});
		const dir = join(import.meta.dir, "..");
		const notSession = await runCli(["status", join(import.meta.dir, "helpers.ts")], memIo({ env }));
		expect(notSession.code).toBe(5);
		expect(notSession.stderr).toContain("is not a Pi session file");
		expect((await runCli(["status", `${dir}/`], memIo({ env }))).code).toBe(5);
		const none = await runCli(["status"], memIo({ env, cwd: "/tmp" }));
		expect(none.code).toBe(3);
		expect(none.stderr).toContain("no session of /tmp in /nonexistent/agent/sessions/--tmp--");
	});
});

describe("with the traces in an agent directory", () => {
	let agent: TraceAgent;
	beforeAll(() => {
		agent = traceAgent();
	});
	afterAll(() => agent.cleanup());
	const io = (cwd = TRACE_CWD) => memIo({ env: agent.env, cwd });

	test("an id prefix shared by two sessions is ambiguous (exit 4); a longer one is not", async () => {
		const r = await runCli(["status", "d703"], io());
		expect(r.code).toBe(4);
		expect(r.stderr).toBe(
			`context-fold: "d703" matches 2 sessions: ${SMALL_ID} (${OTHER_CWD}), ${LARGE_ID} (${TRACE_CWD}); give more of the id\n`,
		);
		expect((await runCli(["status", "d703a", "--json"], io())).code).toBe(0);
		expect((await runCli(["status", SMALL_ID, "--json"], io())).code).toBe(0);
	});

	test("sessions: newest first, with size, requests, folds and savings; --json; --limit", async () => {
		const r = await runCli(["sessions"], io());
		expect(r.code).toBe(0);
		const lines = r.stdout.trimEnd().split("\n");
		expect(lines[0]).toMatch(/^id\s+modified\s+size\s+requests\s+folds\s+not sent\s+saved\s+project$/);
		expect(lines.slice(2).map((l) => l.split(/\s+/)[0])).toEqual(["ffae836b", "d703ffff", "d703a1a9"]);
		const row =
			/^ffae836b {2}24 h ago\s+2\.\d MB\s+484\s+(\d+)\s+[\d.]+M tok\s+\$\d+\.\d{2} {2}\/Users\/badlogic\/workspaces\/pi-mono$/;
		expect(lines[2]).toMatch(row);
		expect(Number(row.exec(lines[2] ?? "")?.[1])).toBe(agent.recordedLayers);
		const j = JSON.parse((await runCli(["sessions", "--json", "--limit", "2"], io())).stdout);
		expect(j.schema).toBe("context-fold/sessions@1");
		expect(j.total).toBe(3);
		expect(j.sessions.map((s: { id: string }) => s.id)).toEqual([COMPACT_ID, SMALL_ID]);
		expect(Object.keys(j.sessions[0])).toEqual([
			"id",
			"path",
			"cwd",
			"size",
			"modified",
			"requests",
			"folds",
			"maskedSent",
			"savedNet",
			"malformed",
			"error",
		]);
		expect(j.sessions[1]).toMatchObject({
			requests: 1,
			folds: 0,
			maskedSent: 0,
			savedNet: 0,
			malformed: 0,
			error: null,
		});
	});

	test("--session-dir and PI_CODING_AGENT_SESSION_DIR: a flat directory, filtered by the header's cwd", async () => {
		const flat = join(agent.root, "flat");
		mkdirSync(flat, { recursive: true });
		writeFileSync(join(flat, "a.jsonl"), smallSession("aaaa0000-0000-4000-8000-000000000001", "/p/one"));
		writeFileSync(join(flat, "b.jsonl"), smallSession("bbbb0000-0000-4000-8000-000000000002", "/p/two"));
		const listed = JSON.parse((await runCli(["--session-dir", flat, "sessions", "--json"], io())).stdout);
		expect(listed.directory).toBe(flat);
		expect(listed.sessions.map((s: { cwd: string }) => s.cwd).sort()).toEqual(["/p/one", "/p/two"]);
		const chosen = await runCli(["status", "--json", "--session-dir", flat], memIo({ env: agent.env, cwd: "/p/two" }));
		expect(JSON.parse(chosen.stdout).session.id).toBe("bbbb0000-0000-4000-8000-000000000002");
		const viaEnv = await runCli(
			["status", "--json", "aaaa"],
			memIo({ env: { ...agent.env, PI_CODING_AGENT_SESSION_DIR: flat }, cwd: "/p/two" }),
		);
		expect(JSON.parse(viaEnv.stdout).session.cwd).toBe("/p/one");
	});

	test("handoff: writes the seed /fold-handoff writes, prints its path and how to start Pi with it", async () => {
		const dir = sessionDataDir(COMPACT_ID, agent.env);
		appendSeedRecord(dir, extractSeedRecord(foldInput()));
		const r = await runCli(["handoff", COMPACT_ID.slice(0, 8), "--goal", "finish the refactor"], io());
		expect(r.code).toBe(0);
		const path = join(dir, "handoff-2026-01-01T00-00-00Z.md");
		expect(r.stdout).toBe(
			[
				`Seed written: ${path}`,
				`  from 1 index record in ${join(dir, "seed-index.jsonl")}`,
				"Start a fresh Pi session with it (the seed becomes the first message):",
				`  cd ${TRACE_CWD} && pi @${path}`,
				"Or, inside Pi: /new, then paste it (or ask the new session to read that path).",
				"",
			].join("\n"),
		);
		const index = readSeedIndex(dir);
		expect(readFileSync(path, "utf8")).toBe(
			renderHandoff({
				goal: "finish the refactor",
				parentFile: agent.recorded,
				sessionId: COMPACT_ID,
				indexPath: index.path,
				records: 1,
				rendered: renderSeed(index.records, {
					maxChars: DEFAULT_SEED_MAX_CHARS,
					invalid: 0,
					truncatedTail: false,
					hash: sha256,
				}),
			}),
		);
		expect(readFileSync(path, "utf8")).toContain("src/auth/login.ts");
		// A second one in the same second never overwrites the first.
		const again = JSON.parse((await runCli(["handoff", COMPACT_ID, "--json"], io())).stdout);
		expect(again).toMatchObject({
			schema: "context-fold/handoff@1",
			path: join(dir, "handoff-2026-01-01T00-00-00Z-1.md"),
			records: 1,
			goal: "",
		});
		expect(existsSync(path)).toBe(true);
		expect((await runCli(["handoff"], io())).code).toBe(2);
	});

	test("simulate --table: summary, chart and per-request table; several sessions add up", async () => {
		const r = await runCli(["simulate", agent.large, COMPACT_ID, "--table"], io());
		expect(r.code).toBe(0);
		const lines = r.stdout.split("\n");
		expect(lines[0]).toStartWith("session d703a1a9-1b7b-4fb1-b512-c9738b1fe617  ");
		expect(
			lines.filter((l) =>
				/^req\s+reported\s+no fold\s+folded\s+read\s+read fold\s+\$ no fold\s+\$ folded\s+event$/.test(l),
			),
		).toHaveLength(2);
		// A table row: the request number, then the reported prompt, then more columns.
		expect(lines.filter((l) => /^\s*\d+ {2}\s*[\d,—]+ {2}/.test(l))).toHaveLength(453 + 484);
		expect(
			lines.filter((l) => l === "  context per request (prompt tokens): . without folding, * with folding, # both"),
		).toHaveLength(2);
		// Each session's first fold event. Its request either rewrites the prefix, or comes after the cache
		// expired (idle past its lifetime), when the priced rule folds because the rewrite is free.
		expect(
			lines.filter((l) =>
				/ {2}fold #1 threshold \(\d+ blocks?, ~[\d,]+ tok\); (prefix rewritten|cache expired)$/.test(l),
			),
		).toHaveLength(2);
		const n = agent.recordedLayers;
		expect(r.stdout).toContain(`fold events: ${n} (`);
		expect(r.stdout).toContain(`· recorded by the extension: ${n}, identical in the replay: ${n}`);
		expect(r.stdout).toMatch(
			/\nboth sessions: prompt tokens [\d,]+ -> [\d,]+ \(-\d+\.\d%\), est\. cost \$\d+\.\d\d -> \$\d+\.\d\d/,
		);
	});

	test("simulate --json: the documented schema; --html: a page with the chart", async () => {
		const html = join(agent.root, "out.html");
		const r = await runCli(
			["simulate", COMPACT_ID, "--json", "--price", "openai", "--ttl", "1h", "--html", html],
			io(),
		);
		expect(r.code).toBe(0);
		expect(r.stderr).toBe(`wrote ${html}\n`);
		const j = JSON.parse(r.stdout);
		expect(j).toMatchObject({ schema: "context-fold/simulate@1", price: "openai", ttl: "1h" });
		const s = j.sessions[0];
		expect(Object.keys(s)).toEqual([
			"session",
			"model",
			"window",
			"windowSource",
			"prices",
			"costCheck",
			"summary",
			"requests",
		]);
		expect(s.prices).toEqual([
			{
				provider: "anthropic",
				model: "claude-opus-4-5",
				prices: { input: 1.25, output: 10, cacheRead: 0.125, cacheWrite: 0 },
				source: { type: "preset", preset: "openai", why: "--price" },
				requests: 484,
			},
		]);
		// The recording was folded at Anthropic's read/write ratios. OpenAI's prices have no write premium,
		// so a rewrite costs less and folds pay sooner: the replay folds more often than at Anthropic's.
		const n = s.summary.foldEvents;
		const anthropic = await runCli(["simulate", COMPACT_ID, "--json", "--price", "anthropic", "--ttl", "1h"], io());
		expect(n).toBeGreaterThan(JSON.parse(anthropic.stdout).sessions[0].summary.foldEvents);
		expect(s.summary).toMatchObject({ requests: 484, billed: 465 });
		expect(s.summary.recorded.layers).toBe(agent.recordedLayers);
		expect(s.summary.folded.input).toBeGreaterThan(0);
		expect(s.summary.folded.cacheWrite).toBe(0);
		expect(s.requests).toHaveLength(484);
		expect(Object.keys(s.requests[0])).toEqual([
			"index",
			"entryId",
			"at",
			"provider",
			"model",
			"reported",
			"usage",
			"state",
			"maskedTokens",
			"fold",
			"compacted",
			"foldedCompacted",
			"baselineCompacted",
			"baseline",
			"folded",
			"baselineSummaries",
		]);
		expect(s.requests.filter((q: { fold: unknown }) => q.fold !== null)).toHaveLength(n);
		expect(s.requests.filter((q: { compacted: boolean }) => q.compacted)).toHaveLength(2);
		const page = readFileSync(html, "utf8");
		expect(page.startsWith("<!doctype html>")).toBe(true);
		expect(page).toContain("<svg");
		expect(page.match(/<title>fold #\d+<\/title>/g)).toHaveLength(n);
		expect(page.match(/<title>compaction \(recorded\)<\/title>/g)).toHaveLength(2);
		expect(page).toContain("budget 150,000");
		// Deterministic: the same replay writes the same page.
		await runCli(["simulate", COMPACT_ID, "--json", "--price", "openai", "--ttl", "1h", "--html", html], io());
		expect(readFileSync(html, "utf8")).toBe(page);
	});
});
