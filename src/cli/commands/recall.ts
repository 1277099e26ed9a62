/**
 * `context-fold recall`: the in-Pi recall_folded answers from outside Pi. Same store code, same
 * checks: an original is served only if its sha256 still matches the one recorded at fold time.
 * Unlike the tool, answers are not capped unless --max-tokens asks for it, and messages name the
 * CLI's flags (`--lines 40-80`), not the tool's arguments.
 */

import { escapeControls } from "../../core/escape.ts";
import { renderPath } from "../../core/inputs.ts";
import type { MaskedBlock } from "../../core/layers.ts";
import { normalizeCode, parseLineRange, type RecallSyntax, validateNeedle } from "../../core/recall.ts";
import { groupDigits } from "../../core/tokens.ts";
import { Ledger } from "../../store/ledger.ts";
import { findOriginal } from "../../store/originals.ts";
import { answerRecall } from "../../store/recall.ts";
import { exclusiveFlags, intFlag, stringFlag } from "../args.ts";
import type { CommandContext } from "../context.ts";
import { CliError, usageError } from "../errors.ts";
import { shellQuote } from "../format.ts";
import { println } from "../io.ts";
import { GoBack } from "../prompts.ts";
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
  --json           one JSON document (schema context-fold/recall@1), the lines as data

Line numbers are those of the full output file a truncated bash result left (Pi keeps its tail in the
session) while that file exists, else those of the folded block; answers say which.

Exit codes: 6 when the session file no longer matches what was folded (sha256), 7 for any other
recall failure (unknown code, a range past the end).`;

/** Blocks longer than this ask how much to show (all, grep, a range) in a terminal. */
export const SHOW_WHOLE_MAX_LINES = 200;

/** The CLI's words for recall's arguments: flags, and commands that can be pasted as they are. */
export function cliRecallSyntax(session: string): RecallSyntax {
	const flag = (name: string) => `--${name}`;
	return {
		command: "recall",
		verb: "Run",
		arg: (name, value) =>
			`${flag(name)} ${/^<.*>$/.test(value) ? value.slice(1, -1).toUpperCase() : shellQuote(value)}`,
		echo: (name, raw) => `${flag(name)} ${shellQuote(raw)}`,
		name: flag,
		ask: (code, name, value) =>
			`context-fold recall ${escapeControls(shellQuote(session))} ${code} ${flag(name)} ${escapeControls(shellQuote(value))}`,
	};
}

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
		let request: Picked | undefined;
		const search = stringFlag(args, "search");
		const grep = stringFlag(args, "grep");
		const lines = stringFlag(args, "lines");
		const maxTokens = intFlag(args, "max-tokens", USAGE) ?? null;
		if (search !== undefined && (codeArg !== undefined || grep !== undefined || lines !== undefined))
			throw usageError("--search looks through every block; give it without a code, --grep or --lines", USAGE);
		exclusiveFlags(args, ["grep", "lines"], USAGE);
		// Malformed flags are usage errors (exit 2), worded in flags, before any session is read.
		const syntax = cliRecallSyntax(sessionArg ?? "<session>");
		checkFlags({ search, grep, lines }, syntax);
		if (codeArg !== undefined) request = { type: "code", code: codeArg, grep, lines };
		else if (search !== undefined) request = { type: "search", text: search };
		else if (ctx.prompts === null)
			throw usageError(
				sessionArg === undefined ? "missing <session> and <code>" : "missing <code> (or --search TEXT)",
				USAGE,
			);
		const chosen = await chooseSession(ctx, sessionArg, { fallback: "pick", usage: USAGE });
		// Recall needs the fold records only: the session's messages are read back through the ledger.
		const loaded = loadSession(ctx, chosen.path, undefined, { foldRecordsOnly: true });
		const index = loaded.replay.index;
		const sessionRef = loaded.file.header?.id ?? chosen.path;
		if (request === undefined) request = await pickRequest(ctx, [...index.byCode.values()], sessionRef);
		const ledger = new Ledger(chosen.path);
		if (request.type === "code") {
			const block = index.byCode.get(normalizeCode(request.code));
			if (block !== undefined) {
				// Check the bytes first, so a changed session file gets its own message and exit code.
				const original = findOriginal(block, ledger);
				if (!original.ok)
					throw new CliError(original.reason === "sha-mismatch" ? "sha-mismatch" : "recall", original.message);
			}
		}
		const answer = answerRecall(
			{
				...(request.type === "code"
					? {
							code: request.code,
							...(request.grep !== undefined && { grep: request.grep }),
							...(request.lines !== undefined && { lines: request.lines }),
						}
					: { search: request.text }),
				maxTokens,
				syntax: cliRecallSyntax(sessionRef),
				withLines: ctx.json,
			},
			{ index, ledger },
		);
		if (!answer.ok) throw new CliError("recall", answer.text);
		if (ctx.json) {
			const code = request.type === "code" ? request : null;
			println(
				ctx.io.stdout,
				JSON.stringify(
					{
						schema: "context-fold/recall@1",
						session: { id: loaded.file.header?.id ?? null, path: loaded.file.path },
						request: {
							code: code === null ? null : normalizeCode(code.code),
							search: request.type === "search" ? request.text : null,
							grep: code?.grep ?? null,
							lines: code?.lines ?? null,
							maxTokens,
						},
						served: answer.served,
						blocks: answer.blocks ?? [],
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

function checkFlags(flags: { search?: string; grep?: string; lines?: string }, syntax: RecallSyntax): void {
	const problems = [
		flags.lines === undefined ? null : parseLineRange(flags.lines, syntax),
		flags.grep === undefined ? null : validateNeedle(flags.grep, "grep", syntax),
		flags.search === undefined ? null : validateNeedle(flags.search, "search", syntax),
	];
	for (const p of problems) if (p !== null && "type" in p) throw usageError(p.message.replace(/\.$/, ""), USAGE);
}

type Picked = { type: "code"; code: string; grep?: string; lines?: string } | { type: "search"; text: string };

/**
 * With a person there and no code given: choose a folded block (each shown with its command, size
 * and first line) or search them all; a long block then offers grep or a line range before printing
 * thousands of lines. Escape goes back one step.
 */
async function pickRequest(ctx: CommandContext, blocks: readonly MaskedBlock[], session: string): Promise<Picked> {
	const prompts = ctx.prompts;
	if (prompts === null) throw usageError("missing <code> (or --search TEXT)", USAGE);
	if (blocks.length === 0) throw new CliError("recall", "nothing has been folded on this session's active branch");
	const syntax = cliRecallSyntax(session);
	// clack wraps an option wider than the terminal; keep each to one line ("│  ○ " comes first).
	const width = Math.max(40, ((ctx.io.stdout as { columns?: number }).columns ?? 80) - 6);
	for (;;) {
		const choice = await prompts.select<MaskedBlock | null>(
			"Which folded block?",
			[
				{ value: null, label: "Search every folded block…" },
				...blocks.map((b) => ({ value: b, label: blockLabel(b, width) })),
			],
			12,
		);
		try {
			if (choice === null) {
				const text = await prompts.text("Search for", {
					placeholder: "text to find (case-insensitive)",
					validate: (v) => validateNeedle(v, "search", syntax)?.message,
				});
				return { type: "search", text };
			}
			return await pickPart(ctx, choice, syntax);
		} catch (error) {
			if (error instanceof GoBack) continue;
			throw error;
		}
	}
}

/** The whole block when it is short; otherwise ask: all of it, the lines matching a text, or a range. */
async function pickPart(ctx: CommandContext, block: MaskedBlock, syntax: RecallSyntax): Promise<Picked> {
	const prompts = ctx.prompts;
	if (prompts === null || block.lines <= SHOW_WHOLE_MAX_LINES) return { type: "code", code: block.code };
	for (;;) {
		const how = await prompts.select<"all" | "grep" | "lines">(
			`{#${block.code}} has ${groupDigits(block.lines)} lines`,
			[
				{ value: "grep", label: "Lines matching a text…", hint: "with two lines of context" },
				{ value: "lines", label: "A line range…", hint: `1-${block.lines}` },
				{ value: "all", label: `All ${groupDigits(block.lines)} lines` },
			],
		);
		if (how === "all") return { type: "code", code: block.code };
		try {
			if (how === "grep") {
				const grep = await prompts.text("Lines matching", {
					placeholder: "text to find (case-insensitive)",
					validate: (v) => validateNeedle(v, "grep", syntax)?.message,
				});
				return { type: "code", code: block.code, grep };
			}
			const lines = await prompts.text("Lines", {
				placeholder: `e.g. 1-${Math.min(block.lines, 100)}`,
				validate: (v) => {
					const range = parseLineRange(v, syntax);
					return "type" in range ? range.message : undefined;
				},
			});
			return { type: "code", code: block.code, lines };
		} catch (error) {
			if (error instanceof GoBack) continue;
			throw error;
		}
	}
}

/**
 * A folded block in one line of `width` characters, as its digest introduces it: the tool, its
 * size, its command or path, and its first line. The digest was recorded with the fold, so listing
 * the blocks reads nothing.
 */
export function blockLabel(block: MaskedBlock, width: number): string {
	const [header = "", second] = block.digest.split("\n");
	// The digest's call summary, without its clip count and without a leading `cd <project> &&`.
	const call = /`(.*)`/
		.exec(header)?.[1]
		?.replace(/…\[\+\d+ chars\]$/, "…")
		.replace(/^cd \S+ && /, "");
	const what =
		block.kind === "thinking"
			? "thinking"
			: `${block.toolName ?? "tool"}${block.kind === "input" ? ` input ${renderPath(block.path ?? [])}` : ""}`;
	const head = `{#${block.code}} ${what} · ${groupDigits(block.lines)} lines`;
	const parts = [head];
	// A path says most at its end, a command at its start.
	const room = Math.max(16, Math.floor((width - head.length) / 2));
	if (call !== undefined && call !== "")
		parts.push(`\`${/\s/.test(call) ? clipTo(call, room) : clipStart(call, room)}\``);
	if (second?.startsWith("> ")) parts.push(second);
	return clipTo(parts.join(" · "), width);
}

function clipTo(text: string, width: number): string {
	return text.length <= width ? text : `${text.slice(0, Math.max(0, width - 1))}…`;
}

function clipStart(text: string, width: number): string {
	return text.length <= width ? text : `…${text.slice(text.length - width + 1)}`;
}
