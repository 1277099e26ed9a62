/**
 * `context-fold handoff <session> [--goal "..."]`: the seed file `/fold-handoff` writes, from outside
 * Pi: the goal, where the raw detail lives, and the bounded deterministic rendering of the session's
 * seed index, written beside the index as handoff-<timestamp>.md. Prints its path and how to start
 * Pi with it.
 */
import { handoffFromIndex } from "../../core/handoff.ts";
import { sha256 } from "../../store/hash.ts";
import { sessionDataDir } from "../../store/paths.ts";
import { readSeedIndex, SeedIndexError, writeHandoff } from "../../store/seed-index.ts";
import { stringFlag } from "../args.ts";
import { remark } from "../context.ts";
import { CliError, usageError } from "../errors.ts";
import { shellQuote } from "../format.ts";
import { println } from "../io.ts";
import { loadSession } from "../session-load.ts";
import { chooseSession } from "../session-pick.ts";
import type { Command } from "./command.ts";

const USAGE = `Usage: context-fold handoff <session> [--goal TEXT] [--json]

Write the seed /fold-handoff writes (the goal, where the raw detail lives, and the session's seed
index) to <agentDir>/context-fold/<session-id>/handoff-<timestamp>.md, and say how to start Pi with it.

  session          a session file path, a session id, or a unique id prefix
  --goal TEXT      what the fresh session should do (asked for in a terminal when missing)
  --json           one JSON document (schema context-fold/handoff@1)`;

export const handoffCommand: Command = {
	name: "handoff",
	summary: "write a seed for a fresh session (goal + deterministic index), as /fold-handoff does",
	usage: USAGE,
	flags: { goal: { type: "string" } },
	async run(ctx, args) {
		if (args.positionals.length > 1)
			throw usageError('handoff takes one session (quote the goal: --goal "...")', USAGE);
		const chosen = await chooseSession(ctx, args.positionals[0], { fallback: "pick", usage: USAGE });
		const loaded = loadSession(ctx, chosen.path);
		const header = loaded.file.header;
		if (header?.id == null) throw new CliError("unreadable-session", `${chosen.path} has no session id in its header`);
		let goal = stringFlag(args, "goal");
		if (goal === undefined && ctx.prompts !== null) {
			goal = await ctx.prompts.text("Goal for the fresh session", { placeholder: "what should happen next?" });
		}
		const dir = sessionDataDir(header.id, ctx.io.env);
		let written: { path: string; indexPath: string; records: number; invalid: number };
		try {
			const index = readSeedIndex(dir);
			const text = handoffFromIndex({
				goal: goal ?? "",
				parentFile: loaded.file.path,
				sessionId: header.id,
				index,
				hash: sha256,
			});
			const path = writeHandoff(dir, text, ctx.io.now());
			written = { path, indexPath: index.path, records: index.records.length, invalid: index.invalid };
		} catch (error) {
			if (error instanceof SeedIndexError)
				throw new CliError("io", `handoff failed: ${error.message}; nothing was written`);
			throw error;
		}
		if (written.invalid > 0)
			remark(
				ctx,
				`${written.invalid} line(s) of ${written.indexPath} could not be read; the seed was rendered from the valid records`,
			);
		const cwd = header.cwd ?? ctx.io.cwd;
		const command = `cd ${shellQuote(cwd)} && pi @${shellQuote(written.path)}`;
		if (ctx.json) {
			println(
				ctx.io.stdout,
				JSON.stringify(
					{
						schema: "context-fold/handoff@1",
						session: { id: header.id, path: loaded.file.path },
						path: written.path,
						indexPath: written.indexPath,
						records: written.records,
						invalid: written.invalid,
						goal: goal ?? "",
						command,
					},
					null,
					2,
				),
			);
			return 0;
		}
		const lines = [
			`Seed written: ${written.path}`,
			`  from ${written.records} index record(s) in ${written.indexPath}${written.records === 0 ? " (nothing folded or compacted yet)" : ""}`,
			"Start a fresh Pi session with it (the seed becomes the first message):",
			`  ${command}`,
			"Or, inside Pi: /new, then paste it (or ask the new session to read that path).",
		];
		if (ctx.guided && ctx.prompts !== null) ctx.prompts.note(lines.join("\n"), "handoff");
		else println(ctx.io.stdout, lines.join("\n"));
		return 0;
	},
};
