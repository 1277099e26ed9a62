/**
 * `context-fold sessions`: recent Pi sessions under the agent directory (or the custom session
 * directory), newest first, with size, requests, fold events and what folding saved so far: tokens
 * not sent, and their value at the provider preset's cache-read price, net of re-writes.
 */
import { BranchReplay } from "../../core/session/branch-state.ts";
import { formatTokens, groupDigits } from "../../core/tokens.ts";
import { formatDollars, plural } from "../../core/wording.ts";
import { type ModelsFile, readModelsFile } from "../../store/models-file.ts";
import { parseIsoTime, readSessionFile } from "../../store/session-file.ts";
import { listSessionFiles, type SessionInfo, type UnreadableSession } from "../../store/sessions.ts";
import { boolFlag, exclusiveFlags, intFlag } from "../args.ts";
import { usageError } from "../errors.ts";
import { formatAge, formatBytes, renderTable, shortId, uniqueIdLength } from "../format.ts";
import { println } from "../io.ts";
import { foldNet, pricesFor } from "../prices.ts";
import type { Command } from "./command.ts";

const USAGE = `Usage: context-fold sessions [--limit N | --all] [--json]

Recent sessions under the agent directory (PI_CODING_AGENT_DIR, default ~/.pi/agent), newest first,
with size, requests, fold events and estimated savings. --session-dir lists that directory instead.
Files there that are not readable sessions (empty, no header) are listed as unreadable.

  --limit N        how many sessions to read (default 20)
  --all            every session
  --json           one JSON document (schema context-fold/sessions@1)`;

export interface SessionRow {
	id: string | null;
	path: string;
	cwd: string | null;
	size: number | null;
	modified: string | null;
	requests: number | null;
	folds: number | null;
	/** Tokens folding kept out of requests so far. */
	maskedSent: number | null;
	/** Dollar value of that, net of re-writes, at the prices `status` uses; null where status shows no net. */
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
		exclusiveFlags(args, ["limit", "all"], USAGE);
		const limit = boolFlag(args, "all") ? Number.POSITIVE_INFINITY : (intFlag(args, "limit", USAGE) ?? 20);
		const found = listSessionFiles(ctx.places);
		const all = found.sessions;
		const models = readModelsFile(ctx.io.env);
		const rows = [...all.slice(0, limit).map((s) => describe(s, models)), ...found.unreadable.map(unreadableRow)];
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
		const idLength = uniqueIdLength(rows.map((r) => r.id));
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
				r.id === null && r.error !== null ? "(unreadable)" : shortId(r.id, idLength),
				r.modified === null ? "?" : formatAge(Date.parse(r.modified), now),
				r.size === null ? "?" : formatBytes(r.size),
				r.requests === null ? "?" : groupDigits(r.requests),
				r.folds === null ? "?" : String(r.folds),
				r.maskedSent === null ? "?" : `${formatTokens(r.maskedSent)} tok`,
				r.savedNet === null ? "—" : formatDollars(r.savedNet),
				r.error === null ? (r.cwd ?? "?") : r.id === null ? `${r.path}  (${r.error})` : `${r.cwd ?? "?"}  (${r.error})`,
			]),
		);
		const more =
			all.length > limit ? `\n(${plural(all.length - limit, "older session")} not shown; --all lists them)` : "";
		println(ctx.io.stdout, `${table}${more}`);
		return 0;
	},
};

function unreadableRow(u: UnreadableSession): SessionRow {
	return {
		id: null,
		path: u.path,
		cwd: null,
		size: u.size,
		modified: u.mtimeMs === null ? null : new Date(u.mtimeMs).toISOString(),
		requests: null,
		folds: null,
		maskedSent: null,
		savedNet: null,
		malformed: null,
		error: u.reason,
	};
}

function describe(info: SessionInfo, models: ModelsFile): SessionRow {
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
		const last = replay.lastAssistant;
		const provider = typeof last?.provider === "string" ? last.provider : null;
		const model = typeof last?.model === "string" ? last.model : null;
		const prices = pricesFor(provider, models.models.get(`${provider}/${model}`), undefined, model);
		return {
			...base,
			requests: replay.responses,
			folds: replay.index.layers.length,
			maskedSent: a.maskedSent,
			savedNet: foldNet(a, prices),
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
