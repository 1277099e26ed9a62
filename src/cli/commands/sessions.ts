/**
 * `context-fold sessions`: recent Pi sessions under the agent directory (or the custom session
 * directory), newest first, with size, requests, fold events and what folding saved so far: tokens
 * not sent, and their value at the provider preset's cache-read price, net of re-writes.
 */
import { foldValue, PRICE_PRESETS } from "../../core/accounting.ts";
import { BranchReplay } from "../../core/session/branch-state.ts";
import { parseIsoTime, readSessionFile } from "../../store/session-file.ts";
import { listSessions, type SessionInfo } from "../../store/sessions.ts";
import { boolFlag, intFlag } from "../args.ts";
import { usageError } from "../errors.ts";
import { formatAge, formatBytes, formatDollars, formatTokens, groupDigits, renderTable, shortId } from "../format.ts";
import { println } from "../io.ts";
import type { Command } from "./command.ts";
import { presetForProvider } from "./status.ts";

const USAGE = `Usage: context-fold sessions [--limit N | --all] [--json]

Recent sessions under the agent directory (PI_CODING_AGENT_DIR, default ~/.pi/agent), newest first,
with size, requests, fold events and estimated savings. --session-dir lists that directory instead.

  --limit N        how many sessions to read (default 20)
  --all            every session
  --json           one JSON document (schema context-fold/sessions@1)`;

export interface SessionRow {
	id: string | null;
	path: string;
	cwd: string | null;
	size: number;
	modified: string;
	requests: number | null;
	folds: number | null;
	/** Tokens folding kept out of requests so far. */
	maskedSent: number | null;
	/** Dollar value of that, net of re-writes, at the provider preset; null without a preset. */
	savedNet: number | null;
	malformed: number | null;
	error: string | null;
}

export const sessionsCommand: Command = {
	name: "sessions",
	summary: "recent sessions with size, requests, folds and estimated savings",
	usage: USAGE,
	flags: { limit: { type: "string" }, all: { type: "boolean" } },
	async run(ctx, args) {
		if (args.positionals.length > 0) throw usageError("sessions takes no arguments", USAGE);
		const limit = boolFlag(args, "all") ? Number.POSITIVE_INFINITY : (intFlag(args, "limit", USAGE) ?? 20);
		const all = listSessions(ctx.places);
		const rows = all.slice(0, limit).map(describe);
		if (ctx.json) {
			println(
				ctx.io.stdout,
				JSON.stringify(
					{
						schema: "context-fold/sessions@1",
						directory: ctx.places.custom ?? ctx.places.root,
						total: all.length,
						sessions: rows,
					},
					null,
					2,
				),
			);
			return 0;
		}
		if (rows.length === 0) {
			println(ctx.io.stdout, `no sessions in ${ctx.places.custom ?? ctx.places.root}`);
			return 0;
		}
		const now = ctx.io.now();
		const table = renderTable(
			[
				{ title: "id" },
				{ title: "modified" },
				{ title: "size", align: "right" },
				{ title: "requests", align: "right" },
				{ title: "folds", align: "right" },
				{ title: "not sent", align: "right" },
				{ title: "saved", align: "right" },
				{ title: "project" },
			],
			rows.map((r) => [
				shortId(r.id),
				formatAge(Date.parse(r.modified), now),
				formatBytes(r.size),
				r.requests === null ? "?" : groupDigits(r.requests),
				r.folds === null ? "?" : String(r.folds),
				r.maskedSent === null ? "?" : `${formatTokens(r.maskedSent)} tok`,
				r.savedNet === null ? "—" : formatDollars(r.savedNet),
				r.error !== null ? `${r.cwd ?? "?"}  (${r.error})` : (r.cwd ?? "?"),
			]),
		);
		const more =
			all.length > rows.length ? `\n(${all.length - rows.length} older session(s) not shown; --all lists them)` : "";
		println(ctx.io.stdout, `${table}${more}`);
		return 0;
	},
};

function describe(info: SessionInfo): SessionRow {
	const base = {
		id: info.id,
		path: info.path,
		cwd: info.cwd,
		size: info.size,
		modified: new Date(info.mtimeMs).toISOString(),
	};
	try {
		const file = readSessionFile(info.path);
		const replay = new BranchReplay(parseIsoTime);
		for (const e of file.branch) replay.consume(e);
		const a = replay.accounting();
		const provider = typeof replay.lastAssistant?.provider === "string" ? replay.lastAssistant.provider : null;
		const preset = presetForProvider(provider);
		return {
			...base,
			requests: replay.responses,
			folds: replay.index.layers.length,
			maskedSent: a.maskedSent,
			savedNet: preset === null ? null : foldValue(a, PRICE_PRESETS[preset]).net,
			malformed: file.malformed,
			error: null,
		};
	} catch (error) {
		return {
			...base,
			requests: null,
			folds: null,
			maskedSent: null,
			savedNet: null,
			malformed: null,
			error: (error as Error).message,
		};
	}
}
