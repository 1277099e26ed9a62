/**
 * `context-fold` with no command, in a terminal: pick a session (most recent first, with project and
 * size), pick what to do, and follow along. Every step can be cancelled with Ctrl+C or Escape, which
 * ends the program cleanly with a message and changes nothing.
 */
import type { SessionPlaces } from "../store/sessions.ts";
import type { Command } from "./commands/command.ts";
import type { CommandContext } from "./context.ts";
import type { CliIo } from "./io.ts";
import type { Prompts } from "./prompts.ts";
import { pickSession } from "./session-pick.ts";
import { VERSION } from "./version.ts";

export interface MenuAction {
	command: string;
	label: string;
	hint: string;
	/** Flags the menu passes, e.g. the summary only for simulate (the full table is for the shell). */
	flags?: Record<string, string | boolean>;
}

export const MENU: readonly MenuAction[] = [
	{ command: "status", label: "Status", hint: "fold position, masked tokens, cache, fold cost, advisories" },
	{
		command: "simulate",
		label: "Simulate folding",
		hint: "replay it: tokens and cost with and without folding",
		flags: { "no-table": true },
	},
	{ command: "recall", label: "Recall a folded block", hint: "read one back (sha256-verified) or search them all" },
	{ command: "handoff", label: "Write a handoff seed", hint: "goal + index for a fresh session, as /fold-handoff" },
];

export async function runMenu(
	io: CliIo,
	places: SessionPlaces,
	prompts: Prompts,
	load: (name: string) => Promise<Command>,
): Promise<number> {
	prompts.intro(`context-fold ${VERSION}`);
	const ctx: CommandContext = { io, places, json: false, prompts, guided: true };
	const path = await pickSession(ctx);
	const action = await prompts.select(
		"What now?",
		MENU.map((a) => ({ value: a, label: a.label, hint: a.hint })),
	);
	const command = await load(action.command);
	const code = await command.run(ctx, { positionals: [path], flags: { ...action.flags } });
	prompts.outro("done");
	return code;
}
