/**
 * Which session a command works on: a path, an id, or a unique id prefix given on the command line;
 * otherwise the most recent session of the working directory (status, as `pi -c` picks it) or, with
 * a person at the terminal, a pick from the list (most recent first). Without a terminal a missing
 * session is a usage error; nothing ever waits for input that cannot come.
 */
import { findSession, listSessions, mostRecentSession, type SessionInfo } from "../store/sessions.ts";
import { type CommandContext, remark } from "./context.ts";
import { CliError, usageError } from "./errors.ts";
import { formatAge, formatBytes, shortId, uniqueIdLength } from "./format.ts";

export interface ChosenSession {
	path: string;
	chosen: "argument" | "most-recent" | "picked";
}

export async function chooseSession(
	ctx: CommandContext,
	arg: string | undefined,
	opts: { fallback: "most-recent" | "pick"; usage: string },
): Promise<ChosenSession> {
	if (arg !== undefined) return { path: await resolveSessionArg(ctx, arg), chosen: "argument" };
	if (opts.fallback === "most-recent") {
		const recent = mostRecentSession(ctx.places);
		if (recent !== null) {
			remark(
				ctx,
				`using the most recent session of ${ctx.places.cwd} (as pi -c would): ${recent.id ?? "(no id)"} ${recent.path}`,
			);
			return { path: recent.path, chosen: "most-recent" };
		}
		if (ctx.prompts === null) {
			throw new CliError(
				"unknown-session",
				`no session of ${ctx.places.cwd} in ${ctx.places.custom ?? ctx.places.cwdDir}; give a session path or id (context-fold sessions lists them)`,
			);
		}
	}
	if (ctx.prompts === null) throw usageError("missing <session>: give a session path, id or id prefix", opts.usage);
	return { path: await pickSession(ctx), chosen: "picked" };
}

/**
 * A session argument to a path. An id prefix several sessions share is an error without a person
 * at the terminal (exit 4, naming them); with one, the matches are offered to pick from.
 */
export async function resolveSessionArg(ctx: CommandContext, arg: string): Promise<string> {
	const match = findSession(arg, ctx.places);
	if (match.type === "found") return match.path;
	if (match.type === "ambiguous") {
		if (ctx.prompts !== null)
			return selectSession(ctx, `"${arg}" matches ${match.matches.length} sessions. Which one?`, match.matches);
		const shown = match.matches.slice(0, 5).map((s) => `${s.id} (${s.cwd ?? "?"})`);
		throw new CliError(
			"ambiguous-session",
			`"${arg}" matches ${match.matches.length} sessions: ${shown.join(", ")}${match.matches.length > 5 ? ", …" : ""}; give more of the id`,
		);
	}
	throw new CliError(
		"unknown-session",
		`no session matches "${arg}" (looked for a session id or id prefix in ${match.searched})`,
	);
}

/** Several session arguments, resolved one after the other (each may ask which session was meant). */
export async function resolveSessionArgs(ctx: CommandContext, args: readonly string[]): Promise<string[]> {
	const paths: string[] = [];
	for (const arg of args) paths.push(await resolveSessionArg(ctx, arg));
	return paths;
}

export async function pickSession(ctx: CommandContext): Promise<string> {
	const sessions = listSessions(ctx.places);
	if (sessions.length === 0)
		throw new CliError("unknown-session", `no sessions in ${ctx.places.custom ?? ctx.places.root}`);
	return selectSession(ctx, "Which session?", sessions);
}

/** Sessions to pick from, most recent first, each id as long as it takes to tell them apart. */
async function selectSession(ctx: CommandContext, question: string, sessions: readonly SessionInfo[]): Promise<string> {
	const prompts = ctx.prompts;
	if (prompts === null) throw usageError("missing <session>");
	const now = ctx.io.now();
	const idLength = uniqueIdLength(sessions.map((s) => s.id));
	return prompts.select(
		question,
		sessions.map((s) => ({
			value: s.path,
			label: `${shortId(s.id, idLength)}  ${formatBytes(s.size).padStart(8)}  ${s.cwd ?? "(unknown project)"}`,
			hint: formatAge(s.mtimeMs, now),
		})),
		12,
	);
}
