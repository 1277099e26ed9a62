/** What every command gets: the injected I/O, where sessions live, the output mode, and prompts when a person is there. */

import { escapeControls } from "../core/escape.ts";
import type { SessionPlaces } from "../store/sessions.ts";
import type { CliIo } from "./io.ts";
import type { Prompts } from "./prompts.ts";

export interface CommandContext {
	io: CliIo;
	places: SessionPlaces;
	/** --json: one JSON document on stdout, notes on stderr. */
	json: boolean;
	/** Present only in a terminal with a person at it; commands never prompt without it. */
	prompts: Prompts | null;
	/** Inside the interactive menu: results are shown as notes instead of plain text. */
	guided: boolean;
}

/**
 * A side remark (which session was chosen, lines skipped): stderr, so stdout stays clean for pipes.
 * Paths and values in it may come from outside: control characters are escaped.
 */
export function remark(ctx: CommandContext, text: string): void {
	const line = escapeControls(text);
	if (ctx.guided && ctx.prompts !== null) ctx.prompts.info(line);
	else ctx.io.stderr.write(`${line}\n`);
}
