// Spawning Pi under the pinned Node and collecting its output, with a hard deadline.
import { type ChildProcess, spawn } from "node:child_process";
import { NODE_BIN, type PiVersion, piCliPath } from "./pi-env.ts";

export interface SpawnedPi {
	child: ChildProcess;
	/** Resolves with the exit code (or null on a signal) once the process is gone. */
	exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
	/** SIGKILLs Pi and any tool processes it started (they share its process group). */
	kill(): void;
}

export function spawnPi(
	version: PiVersion,
	args: string[],
	options: { cwd: string; env: Record<string, string>; stdin: "pipe" | "ignore" },
): SpawnedPi {
	// detached: Pi leads its own process group, so a timeout can take bash tool children down with it.
	const child = spawn(NODE_BIN, [piCliPath(version), ...args], {
		cwd: options.cwd,
		env: options.env,
		stdio: [options.stdin, "pipe", "pipe"],
		detached: true,
	});
	const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve, reject) => {
		child.once("error", reject);
		child.once("close", (code, signal) => resolve({ code, signal }));
	});
	return {
		child,
		exited,
		kill() {
			if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
			try {
				process.kill(-child.pid, "SIGKILL");
			} catch {
				// Already gone.
			}
		},
	};
}

export interface PiRunResult {
	stdout: string;
	stderr: string;
	code: number | null;
	signal: NodeJS.Signals | null;
	durationMs: number;
}

/** Runs Pi to completion; a run past `timeoutMs` is killed and reported as an error with its output. */
export async function runToExit(
	version: PiVersion,
	args: string[],
	options: { cwd: string; env: Record<string, string>; timeoutMs: number },
): Promise<PiRunResult> {
	const started = performance.now();
	const pi = spawnPi(version, args, { ...options, stdin: "ignore" });
	let stdout = "";
	let stderr = "";
	pi.child.stdout?.setEncoding("utf8").on("data", (s: string) => {
		stdout += s;
	});
	pi.child.stderr?.setEncoding("utf8").on("data", (s: string) => {
		stderr += s;
	});
	let timer: ReturnType<typeof setTimeout> | undefined;
	const timeout = new Promise<"timeout">((resolve) => {
		timer = setTimeout(() => resolve("timeout"), options.timeoutMs);
	});
	const outcome = await Promise.race([pi.exited, timeout]);
	clearTimeout(timer);
	if (outcome === "timeout") {
		pi.kill();
		await pi.exited;
		throw new Error(
			`pi ${version} ${args.join(" ")} timed out after ${options.timeoutMs} ms\n--- stdout\n${stdout}\n--- stderr\n${stderr}`,
		);
	}
	return { stdout, stderr, code: outcome.code, signal: outcome.signal, durationMs: performance.now() - started };
}
