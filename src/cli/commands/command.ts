/** The shape of one CLI command: its own flags and usage, and a run that returns the exit code. */
import type { FlagSpecs, ParsedArgs } from "../args.ts";
import type { CommandContext } from "../context.ts";

export interface Command {
	name: string;
	/** One line for the command list. */
	summary: string;
	usage: string;
	/** Flags of this command (the global ones are added by main). */
	flags: FlagSpecs;
	run(ctx: CommandContext, args: ParsedArgs): Promise<number>;
}
