/**
 * `context-fold recall`: the in-Pi recall_folded answers from outside Pi. Same store code, same
 * checks: an original is served only if its sha256 still matches the one recorded at fold time.
 * Unlike the tool, answers are not capped unless --max-tokens asks for it.
 */
import { renderPath } from "../../core/inputs.ts";
import type { MaskedBlock } from "../../core/layers.ts";
import { normalizeCode } from "../../core/recall.ts";
import { Ledger } from "../../store/ledger.ts";
import { findOriginal } from "../../store/originals.ts";
import { answerRecall } from "../../store/recall.ts";
import { intFlag, stringFlag } from "../args.ts";
import type { CommandContext } from "../context.ts";
import { CliError, usageError } from "../errors.ts";
import { groupDigits } from "../format.ts";
import { println } from "../io.ts";
import { loadSession } from "../session-load.ts";
import { chooseSession } from "../session-pick.ts";
import type { Command } from "./command.ts";

const USAGE = `Usage: context-fold recall <session> <code> [--grep TEXT | --lines A-B] [--max-tokens N] [--json]
       context-fold recall <session> --search TEXT [--max-tokens N] [--json]

Read back the original of a folded block ({#code FOLDED}), verified against the sha256 recorded when
it was folded, or search every folded block of the session's active branch.

  session          a session file path, a session id, or a unique id prefix
  code             the fold code, as in {#a1b2c3 FOLDED} (a1b2c3, #a1b2c3 and {#a1b2c3} all work)
  --grep TEXT      matching lines of that block, with two lines of context
  --lines A-B      a 1-based line range of that block
  --search TEXT    matching lines in every folded block
  --max-tokens N   cap the answer as the in-Pi tool does (default: no cap)
  --json           one JSON document (schema context-fold/recall@1)

Exit codes: 6 when the session file no longer matches what was folded (sha256), 7 for any other
recall failure (unknown code, bad range).`;

export const recallCommand: Command = {
	name: "recall",
	summary: "read back a folded original (sha256-verified), or search every folded block",
	usage: USAGE,
	flags: {
		grep: { type: "string" },
		lines: { type: "string" },
		search: { type: "string" },
		"max-tokens": { type: "string" },
	},
	async run(ctx, args) {
		if (args.positionals.length > 2) throw usageError("recall takes a session and a code", USAGE);
		const [sessionArg, codeArg] = args.positionals;
		let code = codeArg;
		let search = stringFlag(args, "search");
		const grep = stringFlag(args, "grep");
		const lines = stringFlag(args, "lines");
		const maxTokens = intFlag(args, "max-tokens", USAGE) ?? null;
		if (search !== undefined && (code !== undefined || grep !== undefined || lines !== undefined))
			throw usageError("--search looks through every block; give it without a code, --grep or --lines", USAGE);
		if (code === undefined && search === undefined && ctx.prompts === null)
			throw usageError(
				sessionArg === undefined ? "missing <session> and <code>" : "missing <code> (or --search TEXT)",
				USAGE,
			);
		const chosen = await chooseSession(ctx, sessionArg, { fallback: "pick", usage: USAGE });
		// Recall needs the fold records only: the session's messages are read back through the ledger.
		const loaded = loadSession(ctx, chosen.path, undefined, { foldRecordsOnly: true });
		const index = loaded.replay.index;
		if (code === undefined && search === undefined) {
			const picked = await pickCode(ctx, [...index.byCode.values()]);
			if (picked.type === "search") search = picked.text;
			else code = picked.code;
		}
		const ledger = new Ledger(chosen.path);
		if (code !== undefined) {
			const block = index.byCode.get(normalizeCode(code));
			if (block !== undefined) {
				// Check the bytes first, so a changed session file gets its own message and exit code.
				const original = findOriginal(block, ledger);
				if (!original.ok)
					throw new CliError(original.reason === "sha-mismatch" ? "sha-mismatch" : "recall", original.message);
			}
		}
		const answer = answerRecall(
			{
				...(code !== undefined && { code }),
				...(search !== undefined && { search }),
				...(grep !== undefined && { grep }),
				...(lines !== undefined && { lines }),
				maxTokens,
			},
			{ index, ledger },
		);
		if (!answer.ok) throw new CliError("recall", answer.text);
		if (ctx.json) {
			println(
				ctx.io.stdout,
				JSON.stringify(
					{
						schema: "context-fold/recall@1",
						session: { id: loaded.file.header?.id ?? null, path: loaded.file.path },
						request: {
							code: code === undefined ? null : normalizeCode(code),
							search: search ?? null,
							grep: grep ?? null,
							lines: lines ?? null,
							maxTokens,
						},
						served: answer.served,
						text: answer.text,
					},
					null,
					2,
				),
			);
		} else if (ctx.guided && ctx.prompts !== null) ctx.prompts.note(answer.text, "recall");
		else println(ctx.io.stdout, answer.text);
		return 0;
	},
};

type Picked = { type: "code"; code: string } | { type: "search"; text: string };

/** With a person there and no code given: choose a folded block, or search them all. */
async function pickCode(ctx: CommandContext, blocks: readonly MaskedBlock[]): Promise<Picked> {
	const prompts = ctx.prompts;
	if (prompts === null) throw usageError("missing <code> (or --search TEXT)", USAGE);
	if (blocks.length === 0) throw new CliError("recall", "nothing has been folded on this session's active branch");
	const choice = await prompts.select<string | null>(
		"Which folded block?",
		[
			{ value: null, label: "Search every folded block…" },
			...blocks.map((b) => ({
				value: b.code,
				label: `{#${b.code}} ${b.kind === "thinking" ? "thinking" : (b.toolName ?? "tool")}${b.kind === "input" ? ` input ${renderPath(b.path ?? [])}` : ""}`,
				hint: `${groupDigits(b.chars)} chars, ${groupDigits(b.lines)} lines`,
			})),
		],
		12,
	);
	if (choice !== null) return { type: "code", code: choice };
	const text = await prompts.text("Search for", {
		placeholder: "text to find (case-insensitive)",
		validate: (v) => (v.trim() === "" ? "type something to look for" : undefined),
	});
	return { type: "search", text };
}
