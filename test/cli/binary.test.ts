// The real artifacts: the compiled binary (dist/context-fold) and the Node build (dist/cli.js), run
// as processes without a terminal: every command on the real traces, the JSON schemas, exit codes,
// no prompts without a TTY, and no bunfig/.env auto-loading.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { NODE_BIN } from "../e2e/harness/pi-env.ts";
import { ensureCli } from "./build.ts";
import { COMPACT_ID, LARGE_ID, REPO, type TraceAgent, traceAgent } from "./helpers.ts";
import { toolLoopSession } from "./simulate-fixtures.ts";

const VERSION = (JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")) as { version: string }).version;
let binary = "";
let nodeCli = "";
beforeAll(() => {
	({ binary, nodeCli } = ensureCli());
});

interface Run {
	code: number | null;
	stdout: string;
	stderr: string;
}

function run(cmd: string[], env: NodeJS.ProcessEnv, cwd = REPO): Run {
	// stdin is /dev/null and stdout a pipe: no terminal, as in a script or CI.
	const r = spawnSync(cmd[0] as string, cmd.slice(1), {
		cwd,
		env: { PATH: process.env.PATH, ...env },
		encoding: "utf8",
		stdio: ["ignore", "pipe", "pipe"],
		timeout: 30_000,
	});
	// A process that waits for input is killed at the timeout: its status is then null, never an exit code.
	return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe("dist/context-fold and dist/cli.js", () => {
	test("--version is the package's version, baked in", () => {
		expect(run([binary, "--version"], {})).toMatchObject({ code: 0, stdout: `${VERSION}\n`, stderr: "" });
		expect(run([NODE_BIN, nodeCli, "--version"], {})).toMatchObject({ code: 0, stdout: `${VERSION}\n`, stderr: "" });
	});

	test("without a terminal nothing prompts: missing arguments give usage and exit 2 at once", () => {
		for (const argv of [[], ["recall"], ["handoff"], ["simulate"]]) {
			const r = run([binary, ...argv], { PI_CODING_AGENT_DIR: "/nonexistent" });
			expect(r.code).toBe(2);
			expect(r.stdout).toBe("");
			expect(r.stderr).toMatch(/^context-fold: missing [^\n]*\n\n[\s\S]*Usage: context-fold/);
		}
	});

	test("the model catalog is built into both: simulate prices a claude-opus session at Opus rates", () => {
		const dir = join(REPO, ".tmp", "catalog-probe");
		mkdirSync(dir, { recursive: true });
		const path = join(dir, "opus.jsonl");
		writeFileSync(path, toolLoopSession());
		const line = "  prices: anthropic/claude-opus-4-5 at $5/$25/$0.50/$6.25 per Mtok in/out/read/write (pi-ai catalog)";
		for (const cmd of [[binary], [NODE_BIN, nodeCli]]) {
			const r = run([...cmd, "simulate", path], { PI_CODING_AGENT_DIR: join(dir, "agent") });
			expect(r.code).toBe(0);
			expect(r.stdout.split("\n")).toContain(line);
			expect(r.stdout).toContain("· window 200,000 (from the pi-ai catalog)");
		}
	});

	test("bunfig.toml and .env in the working directory are never loaded", () => {
		const dir = join(REPO, ".tmp", "autoload-probe");
		mkdirSync(dir, { recursive: true });
		// Variables the caller did not set: a loaded .env would change where sessions are looked for.
		writeFileSync(join(dir, ".env"), "PI_CODING_AGENT_SESSION_DIR=/from-dotenv\n");
		writeFileSync(join(dir, "preload.ts"), 'console.log("bunfig preload ran");\n');
		writeFileSync(join(dir, "bunfig.toml"), 'preload = ["./preload.ts"]\n');
		const r = run([binary, "sessions", "--json"], { PI_CODING_AGENT_DIR: "/from-env" }, dir);
		expect(r.code).toBe(0);
		expect(r.stdout).not.toContain("bunfig preload ran");
		expect(JSON.parse(r.stdout).directory).toBe("/from-env/sessions");
	});
});

describe("every command on the real traces, as processes", () => {
	let agent: TraceAgent;
	beforeAll(() => {
		agent = traceAgent();
	});
	afterAll(() => agent.cleanup());
	const bin = (argv: string[], env: NodeJS.ProcessEnv = {}) => run([binary, ...argv], { ...agent.env, ...env });

	test("status (text and JSON), on Bun and on Node", () => {
		const text = bin(["status", LARGE_ID]);
		expect(text.code).toBe(0);
		expect(text.stdout).toContain("context-fold status\n  folds: 0 events");
		const viaBun = JSON.parse(bin(["status", "--json", COMPACT_ID]).stdout);
		const viaNode = JSON.parse(run([NODE_BIN, nodeCli, "status", "--json", COMPACT_ID], agent.env).stdout);
		expect(viaBun.schema).toBe("context-fold/status@1");
		// Same answer on both runtimes except for the advisory clock.
		expect({ ...viaNode, advisories: [], text: "" }).toEqual({ ...viaBun, advisories: [], text: "" });
	});

	test("recall: a verified original (0), an unknown code (7)", () => {
		const status = JSON.parse(bin(["status", "--json", COMPACT_ID]).stdout);
		expect(status.folds.events).toBe(agent.recordedLayers);
		const search = bin(["recall", COMPACT_ID, "--search", "import", "--json"]);
		expect(search.code).toBe(0);
		const served = JSON.parse(search.stdout).served as string[];
		expect(served.length).toBeGreaterThan(0);
		const one = bin(["recall", COMPACT_ID, served[0] as string]);
		expect(one.code).toBe(0);
		expect(one.stdout.split("\n")[0]).toMatch(/\(sha256 verified\):$/);
		expect(bin(["recall", COMPACT_ID, "ffffff"]).code).toBe(7);
	});

	test("handoff, simulate, sessions: exit 0 and their schemas", () => {
		const handoff = JSON.parse(bin(["handoff", COMPACT_ID, "--goal", "next", "--json"]).stdout);
		expect(handoff.schema).toBe("context-fold/handoff@1");
		expect(readFileSync(handoff.path, "utf8")).toContain("## Goal\n\nnext\n");
		const sim = bin(["simulate", "--json", LARGE_ID, COMPACT_ID]);
		expect(sim.code).toBe(0);
		const j = JSON.parse(sim.stdout);
		expect(j.schema).toBe("context-fold/simulate@1");
		expect(j.sessions.map((s: { summary: { requests: number } }) => s.summary.requests)).toEqual([453, 484]);
		const sessions = JSON.parse(bin(["sessions", "--json"]).stdout);
		expect(sessions.sessions).toHaveLength(3);
	});

	test("exit codes: unknown (3), ambiguous (4), unreadable (5), sha mismatch (6)", () => {
		expect(bin(["status", "nope"]).code).toBe(3);
		expect(bin(["status", "d703"]).code).toBe(4);
		expect(bin(["status", join(REPO, "package.json")]).code).toBe(5);
		const edited = join(agent.root, "edited.jsonl");
		const text = readFileSync(agent.recorded, "utf8");
		const lines = text.split("\n");
		// Change one character inside every tool result: whatever code is asked for no longer matches.
		writeFileSync(
			edited,
			lines.map((l) => (l.includes('"role":"toolResult"') ? l.replace('"text":"', '"text":"~') : l)).join("\n"),
		);
		expect(JSON.parse(bin(["status", "--json", edited]).stdout).folds.layers).toHaveLength(agent.recordedLayers);
		const search = JSON.parse(bin(["recall", COMPACT_ID, "--search", "import", "--json"]).stdout).served as string[];
		const r = bin(["recall", edited, search[0] as string]);
		expect(r.code).toBe(6);
		expect(r.stderr).toContain("refused");
	});
});
