/**
 * Every way the CLI touches the outside world, injected: the entry (bin/context-fold.ts) passes the
 * real process; tests pass in-memory streams, an environment and a clock.
 */
import type { Readable, Writable } from "node:stream";

export interface CliIo {
	stdout: Writable;
	stderr: Writable;
	stdin: Readable;
	env: NodeJS.ProcessEnv;
	cwd: string;
	now(): number;
	/** A person is at a terminal: prompts are allowed. Without one the CLI never prompts. */
	interactive: boolean;
	/** Terminal width for tables, when known. */
	columns?: number;
}

export function processIo(): CliIo {
	const stdin = process.stdin as Readable & { isTTY?: boolean };
	const stdout = process.stdout as Writable & { isTTY?: boolean; columns?: number };
	return {
		stdout,
		stderr: process.stderr,
		stdin,
		env: process.env,
		cwd: process.cwd(),
		now: () => Date.now(),
		interactive: stdin.isTTY === true && stdout.isTTY === true,
		...(stdout.columns !== undefined && { columns: stdout.columns }),
	};
}

/** Write a block of text followed by a newline. */
export function println(stream: Writable, text = ""): void {
	stream.write(text.endsWith("\n") ? text : `${text}\n`);
}
