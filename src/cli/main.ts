/**
 * The CLI: main(argv, io) parses the command line, runs one command, and is the one place errors
 * become exit codes. Coded errors (CliError) print one line; anything else is a bug, reported with
 * where its details were written.
 */
import { writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { escapeControls } from "../core/escape.ts";
import { sessionPlaces } from "../store/sessions.ts";
import { boolFlag, type FlagSpecs, parseArgs, stringFlag } from "./args.ts";
import type { Command } from "./commands/command.ts";
import type { CommandContext } from "./context.ts";
import { CliError, EXIT_CODES, usageError } from "./errors.ts";
import { runMenu } from "./interactive.ts";
import { type CliIo, println } from "./io.ts";
import { clackPrompts } from "./prompts.ts";
import { VERSION } from "./version.ts";

/**
 * Every command, loaded only when it runs: `--version` and `--help` evaluate none of them, which keeps
 * the binary's cold start close to the runtime's own.
 */
export const COMMANDS: ReadonlyMap<string, { summary: string; load(): Promise<Command> }> = new Map([
	[
		"status",
		{
			summary: "fold position, masked tokens, fold events, cache ratios, fold cost and advisories",
			load: async () => (await import("./commands/status.ts")).statusCommand,
		},
	],
	[
		"recall",
		{
			summary: "read back a folded original (sha256-verified), or search every folded block",
			load: async () => (await import("./commands/recall.ts")).recallCommand,
		},
	],
	[
		"handoff",
		{
			summary: "write a seed for a fresh session (goal + deterministic index), as /fold-handoff does",
			load: async () => (await import("./commands/handoff.ts")).handoffCommand,
		},
	],
	[
		"simulate",
		{
			summary: "replay sessions through the fold ladder offline: tokens, cache and cost with and without folding",
			load: async () => (await import("./commands/simulate.ts")).simulateCommand,
		},
	],
	[
		"sessions",
		{
			summary: "recent sessions with size, requests, folds and estimated savings",
			load: async () => (await import("./commands/sessions.ts")).sessionsCommand,
		},
	],
]);

const GLOBAL_FLAGS: FlagSpecs = {
	help: { type: "boolean", short: "h" },
	version: { type: "boolean", short: "V" },
	json: { type: "boolean" },
	"session-dir": { type: "string" },
};

/** The options every command takes, in every command's help as in the main one. */
const GLOBAL_HELP = `Options for every command:
  --session-dir DIR  where sessions live (as pi --session-dir; else PI_CODING_AGENT_SESSION_DIR,
                     settings.json sessionDir, or <agentDir>/sessions); agentDir is PI_CODING_AGENT_DIR
                     or ~/.pi/agent
  --json             one JSON document on stdout; errors too (schema context-fold/error@1)`;

/** A command's --help: its own usage, then the options every command takes. */
export function renderCommandUsage(command: Pick<Command, "usage">): string {
	return `${command.usage}\n\n${GLOBAL_HELP}\n  -h, --help         this help`;
}

export function renderMainUsage(): string {
	const width = Math.max(...[...COMMANDS.keys()].map((n) => n.length));
	return `context-fold ${VERSION}: the companion CLI of the context-fold extension for the Pi coding agent

Usage: context-fold <command> [options]

Commands:
${[...COMMANDS].map(([name, c]) => `  ${name.padEnd(width)}  ${c.summary}`).join("\n")}

${GLOBAL_HELP}
  -h, --help         help for a command: context-fold <command> --help
  -V, --version      the version

A session is a file path, a session id, or a unique id prefix. With no command in a terminal, an
interactive menu picks a session and an action; without a terminal nothing ever prompts.

Exit codes: 0 ok, 1 internal error, 2 usage, 3 unknown session, 4 ambiguous id prefix, 5 unreadable
session file, 6 sha256 mismatch on recall, 7 other recall failure, 8 file I/O, 130 cancelled.`;
}

export async function main(argv: readonly string[], io: CliIo): Promise<number> {
	try {
		return await run(argv, io);
	} catch (error) {
		return report(error, io, wantsJson(argv));
	}
}

/** --json anywhere before `--`: then even a usage error is answered as JSON on stdout. */
function wantsJson(argv: readonly string[]): boolean {
	const end = argv.indexOf("--");
	return (end < 0 ? argv : argv.slice(0, end)).includes("--json");
}

async function run(argv: readonly string[], io: CliIo): Promise<number> {
	const { name, rest, leading } = splitCommand(argv);
	if (name === undefined) {
		const args = parseArgs(leading, GLOBAL_FLAGS, renderMainUsage());
		if (boolFlag(args, "version")) return printed(io, VERSION);
		if (boolFlag(args, "help")) return printed(io, renderMainUsage());
		if (!io.interactive || boolFlag(args, "json")) throw usageError("missing <command>", renderMainUsage());
		const places = sessionPlaces({ flag: stringFlag(args, "session-dir"), env: io.env, cwd: io.cwd });
		return runMenu(io, places, await clackPrompts(io), (n) => load(n));
	}
	const command = await load(name);
	const args = parseArgs([...leading, ...rest], { ...GLOBAL_FLAGS, ...command.flags }, command.usage);
	if (boolFlag(args, "version")) return printed(io, VERSION);
	if (boolFlag(args, "help")) return printed(io, renderCommandUsage(command));
	const json = boolFlag(args, "json");
	const ctx: CommandContext = {
		io,
		places: sessionPlaces({ flag: stringFlag(args, "session-dir"), env: io.env, cwd: io.cwd }),
		json,
		// JSON output must stay one document on stdout, so it never prompts.
		prompts: io.interactive && !json ? await clackPrompts(io) : null,
		guided: false,
	};
	return command.run(ctx, args);
}

async function load(name: string): Promise<Command> {
	const entry = COMMANDS.get(name);
	if (entry === undefined) throw usageError(`unknown command "${name}"`, renderMainUsage());
	return entry.load();
}

/** The command is the first word that is not a global flag or its value; global flags may come before it. */
function splitCommand(argv: readonly string[]): { name: string | undefined; leading: string[]; rest: string[] } {
	const leading: string[] = [];
	for (let i = 0; i < argv.length; i++) {
		const a = argv[i] as string;
		if (!a.startsWith("-") || a === "-") return { name: a, leading, rest: argv.slice(i + 1) };
		leading.push(a);
		if (a === "--session-dir") {
			const value = argv[i + 1];
			if (value !== undefined) leading.push(value);
			i++;
		}
	}
	return { name: undefined, leading, rest: [] };
}

function printed(io: CliIo, text: string): number {
	println(io.stdout, text);
	return EXIT_CODES.ok;
}

/**
 * The one place errors become exit codes: one line on stderr, and with --json the same error as a
 * JSON document on stdout (the exit code is the same either way).
 */
function report(error: unknown, io: CliIo, json: boolean): number {
	if (error instanceof CliError) {
		// A message may quote an argument or a path: one line, no terminal escapes (the usage is ours).
		println(io.stderr, `context-fold: ${escapeControls(error.message)}`);
		if (error.detail !== undefined && !json) println(io.stderr, `\n${error.detail}`);
		if (json) printJsonError(io, error.code, error.exit, escapeControls(error.message));
		return error.exit;
	}
	const e = error instanceof Error ? error : new Error(String(error));
	let where = "";
	try {
		const file = join(tmpdir(), `context-fold-error-${io.now()}.log`);
		writeFileSync(file, `${e.stack ?? e.message}\n`, { mode: 0o600 });
		where = ` (details in ${file})`;
	} catch {
		where = ` (${e.stack?.split("\n")[1]?.trim() ?? "no stack"})`;
	}
	const message = `internal error: ${escapeControls(e.message)}${where}. Please report it.`;
	println(io.stderr, `context-fold: ${message}`);
	if (json) printJsonError(io, "internal", EXIT_CODES.internal, message);
	return EXIT_CODES.internal;
}

export const ERROR_SCHEMA = "context-fold/error@1";

function printJsonError(io: CliIo, code: string, exit: number, message: string): void {
	try {
		println(io.stdout, JSON.stringify({ schema: ERROR_SCHEMA, error: { code, exit, message } }, null, 2));
	} catch {
		// stdout itself failed (the internal error may be that): stderr already has the message.
	}
}
