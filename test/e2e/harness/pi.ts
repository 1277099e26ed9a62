// Entry point for driving real Pi in tests: one-shot print and JSON runs, plus re-exports of the RPC client.
import { parseJsonl } from "./jsonl.ts";
import { type PiArgsOptions, type PiVersion, piArgs, piEnv } from "./pi-env.ts";
import { type PiRunResult, runToExit } from "./process.ts";
import type { Sandbox } from "./sandbox.ts";

export {
	forEachPiVersion,
	NET_GUARD,
	type NetRecord,
	NODE_BIN,
	netLogPath,
	netRecords,
	netViolations,
	PI_VERSIONS,
	type PiVersion,
	piCliPath,
	sanitizedEnv,
} from "./pi-env.ts";
export type { PiRunResult } from "./process.ts";
export { type PiRpc, type RpcOptions, startRpc } from "./rpc.ts";
export { assistantMessages, createSandbox, entriesOfType, type Sandbox, type SessionEntry } from "./sandbox.ts";

export interface PiRunOptions extends PiArgsOptions {
	version: PiVersion;
	sandbox: Sandbox;
	/** Extra env for this run only. */
	env?: Record<string, string>;
	/** Kill Pi after this long; default 30 s (a healthy run takes about a second). */
	timeoutMs?: number;
}

export interface PrintOptions extends PiRunOptions {
	prompt: string;
}

/** `pi -p <prompt>`: one prompt, text answer on stdout. */
export function runPrint(options: PrintOptions): Promise<PiRunResult> {
	const args = [...piArgs(options.sandbox, options), "-p", options.prompt];
	return runToExit(options.version, args, {
		cwd: options.sandbox.cwd,
		env: piEnv(options.sandbox, options.env),
		timeoutMs: options.timeoutMs ?? 30_000,
	});
}

/** A record of `--mode json` output; the first one is the session header. */
export interface JsonEvent {
	type: string;
	[key: string]: unknown;
}

export interface JsonRunResult extends PiRunResult {
	/** Every record, header included. */
	events: JsonEvent[];
	/** The `{"type":"session"}` header, if Pi wrote one. */
	header: JsonEvent | undefined;
}

export interface JsonOptions extends PiRunOptions {
	/** One or more prompts, run in order like Pi's positional messages. */
	prompt: string | string[];
}

/** `pi --mode json <prompt...>`: the JSONL event stream of one invocation. */
export async function runJson(options: JsonOptions): Promise<JsonRunResult> {
	const prompts = Array.isArray(options.prompt) ? options.prompt : [options.prompt];
	const args = [...piArgs(options.sandbox, options), "--mode", "json", ...prompts];
	const result = await runToExit(options.version, args, {
		cwd: options.sandbox.cwd,
		env: piEnv(options.sandbox, options.env),
		timeoutMs: options.timeoutMs ?? 30_000,
	});
	const events = parseJsonl<JsonEvent>(result.stdout);
	return { ...result, events, header: events[0]?.type === "session" ? events[0] : undefined };
}

/** Throws with Pi's output when a run did not exit 0, so a failing test shows why. */
export function expectSuccess(result: PiRunResult): PiRunResult {
	if (result.code !== 0) {
		throw new Error(
			`pi exited with ${result.code ?? result.signal}\n--- stdout\n${result.stdout}\n--- stderr\n${result.stderr}`,
		);
	}
	return result;
}
