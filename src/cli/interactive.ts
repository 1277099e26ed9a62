/**
 * `context-fold` with no command, in a terminal: pick a session (most recent first, with project and
 * size), pick what to do, follow along, then pick the next thing to do until Quit. Escape goes back
 * one step (from the first step it leaves); Ctrl+C ends the program cleanly with a message at any
 * step. A command that fails says so inside the frame and the menu goes on.
 */
import type { SessionPlaces } from "../store/sessions.ts";
import type { Command } from "./commands/command.ts";
import type { CommandContext } from "./context.ts";
import { CliError } from "./errors.ts";
import type { CliIo } from "./io.ts";
import { GoBack, type Prompts } from "./prompts.ts";
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
	// Escape at the session list has no step to go back to: GoBack leaves, as a clean cancel (130).
	for (let path = await pickSession(ctx); ; path = await pickSession(ctx)) {
		if ((await runActions(ctx, prompts, path, load)) === "quit") {
			prompts.outro("done");
			return 0;
		}
	}
}

const ANOTHER_SESSION = "another-session";
const QUIT = "quit";

/** Actions on one session, one after another, until Quit or another session (Escape is the latter). */
async function runActions(
	ctx: CommandContext,
	prompts: Prompts,
	path: string,
	load: (name: string) => Promise<Command>,
): Promise<"quit" | "another-session"> {
	for (;;) {
		let action: MenuAction | typeof ANOTHER_SESSION | typeof QUIT;
		try {
			action = await prompts.select<MenuAction | typeof ANOTHER_SESSION | typeof QUIT>("What now?", [
				...MENU.map((a) => ({ value: a, label: a.label, hint: a.hint })),
				{ value: ANOTHER_SESSION, label: "Another session", hint: "back to the list (Escape)" },
				{ value: QUIT, label: "Quit" },
			]);
		} catch (error) {
			if (error instanceof GoBack) return ANOTHER_SESSION;
			throw error;
		}
		if (action === QUIT || action === ANOTHER_SESSION) return action;
		const command = await load(action.command);
		try {
			await command.run(ctx, { positionals: [path], flags: { ...action.flags } });
		} catch (error) {
			// Escape inside an action comes back here; a failed action is said in the frame, and the menu goes on.
			if (error instanceof GoBack) continue;
			if (error instanceof CliError && error.code !== "cancelled") prompts.error(error.message);
			else throw error;
		}
	}
}
