// Shared pieces of the CLI tests: in-memory I/O for main(argv, io), a private agent directory with
// sessions in Pi's layout, the real traces (vendored in test/fixtures/traces, decompressed to a
// temporary directory), and a copy of a trace carrying the fold records the extension would have
// written (the last two live in test/helpers/traces.ts, re-exported here).
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import type { CliIo } from "../../src/cli/io.ts";
import { main } from "../../src/cli/main.ts";
import { defaultSessionDir } from "../../src/store/paths.ts";
import { TRACE, withFoldRecords } from "../helpers/traces.ts";

export { TRACE, withFoldRecords } from "../helpers/traces.ts";

export const REPO = join(import.meta.dir, "../..");
/** The traces' project directory and ids, as their headers say. */
export const TRACE_CWD = "/Users/badlogic/workspaces/pi-mono";
export const LARGE_ID = "d703a1a9-1b7b-4fb1-b512-c9738b1fe617";
export const COMPACT_ID = "ffae836b-9420-4060-ac13-7745215f90ff";

/** A fixed clock: 2026-01-01T00:00:00Z. */
export const NOW = Date.parse("2026-01-01T00:00:00Z");

export interface MemIo extends CliIo {
	out(): string;
	err(): string;
	/** Feed keystrokes to an interactive run. */
	type(keys: string): void;
}

export function memIo(options: { env?: NodeJS.ProcessEnv; cwd?: string; interactive?: boolean } = {}): MemIo {
	const stdout = new PassThrough();
	const stderr = new PassThrough();
	const stdin = new PassThrough();
	let out = "";
	let err = "";
	stdout.setEncoding("utf8").on("data", (s: string) => {
		out += s;
	});
	stderr.setEncoding("utf8").on("data", (s: string) => {
		err += s;
	});
	return {
		stdout,
		stderr,
		stdin,
		env: options.env ?? {},
		cwd: options.cwd ?? REPO,
		now: () => NOW,
		interactive: options.interactive ?? false,
		columns: 120,
		out: () => out,
		err: () => err,
		type: (keys) => stdin.write(keys),
	};
}

export interface CliRun {
	code: number;
	stdout: string;
	stderr: string;
}

export async function runCli(argv: string[], io: MemIo): Promise<CliRun> {
	const code = await main(argv, io);
	// Let the PassThrough streams deliver what was written.
	await new Promise((r) => setImmediate(r));
	return { code, stdout: io.out(), stderr: io.err() };
}

export interface AgentDir {
	root: string;
	agentDir: string;
	env: NodeJS.ProcessEnv;
	/** Copy a session file into Pi's layout for `cwd`, as <stamp>_<id>.jsonl; returns its path. */
	addSession(source: string, cwd: string, name: string): string;
	cleanup(): void;
}

export function agentDir(): AgentDir {
	const root = mkdtempSync(join(tmpdir(), "cf-cli-"));
	const agent = join(root, "agent");
	mkdirSync(agent, { recursive: true });
	const env = { PI_CODING_AGENT_DIR: agent, HOME: join(root, "home") };
	return {
		root,
		agentDir: agent,
		env,
		addSession(source, cwd, name) {
			const dir = defaultSessionDir(cwd, env);
			mkdirSync(dir, { recursive: true });
			const path = join(dir, name);
			copyFileSync(source, path);
			return path;
		},
		cleanup: () => rmSync(root, { recursive: true, force: true }),
	};
}

export const OTHER_CWD = "/other/project";
/** Shares its first four characters with the large trace's id, so "d703" is an ambiguous prefix. */
export const SMALL_ID = "d703ffff-0000-4000-8000-000000000001";

/** A tiny v3 session: one prompt, one answer with usage. */
export function smallSession(id = SMALL_ID, cwd = OTHER_CWD): string {
	const t = "2025-12-01T10:00:00.000Z";
	return [
		{ type: "session", version: 3, id, timestamp: t, cwd },
		{
			type: "message",
			id: "m1",
			parentId: null,
			timestamp: t,
			message: { role: "user", content: [{ type: "text", text: "hello" }], timestamp: 1 },
		},
		{
			type: "message",
			id: "m2",
			parentId: "m1",
			timestamp: t,
			message: {
				role: "assistant",
				content: [{ type: "text", text: "hi" }],
				api: "anthropic-messages",
				provider: "anthropic",
				model: "claude-sonnet-4-5",
				usage: { input: 100, output: 5, cacheRead: 0, cacheWrite: 0 },
				stopReason: "stop",
				timestamp: 2,
			},
		},
	]
		.map((e) => JSON.stringify(e))
		.join("\n")
		.concat("\n");
}

export interface TraceAgent extends AgentDir {
	large: string;
	recorded: string;
	small: string;
	/** Layers written into the recorded copy of before-compaction.v3. */
	recordedLayers: number;
}

/**
 * An agent directory holding: large-session (v1) and a recorded copy of before-compaction (v3, with
 * fold records, the newest) for the traces' project, and a tiny session of another project whose id
 * shares a prefix with large-session's.
 */
export function traceAgent(): TraceAgent {
	const agent = agentDir();
	const large = agent.addSession(TRACE.largeV1, TRACE_CWD, `2025-11-20T23-33-50-805Z_${LARGE_ID}.jsonl`);
	const recordedSource = join(agent.root, "recorded.jsonl");
	const { layers } = withFoldRecords(TRACE.compactV3, recordedSource);
	const recorded = agent.addSession(recordedSource, TRACE_CWD, `2025-12-09T00-53-29-825Z_${COMPACT_ID}.jsonl`);
	const smallSource = join(agent.root, "small.jsonl");
	writeFileSync(smallSource, smallSession());
	const small = agent.addSession(smallSource, OTHER_CWD, `2025-12-01T10-00-00-000Z_${SMALL_ID}.jsonl`);
	// Modification times decide "most recent": recorded newest, then small, then large.
	utimesSync(large, new Date(NOW - 3 * 86_400_000), new Date(NOW - 3 * 86_400_000));
	utimesSync(small, new Date(NOW - 2 * 86_400_000), new Date(NOW - 2 * 86_400_000));
	utimesSync(recorded, new Date(NOW - 86_400_000), new Date(NOW - 86_400_000));
	return { ...agent, large, recorded, small, recordedLayers: layers };
}
