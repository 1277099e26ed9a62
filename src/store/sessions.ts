/**
 * Finding Pi sessions on disk the way Pi does: the session directory from --session-dir, then
 * PI_CODING_AGENT_SESSION_DIR, then `sessionDir` in the agent's settings.json, else one directory per
 * project under <agentDir>/sessions. "The most recent session of this directory" is `pi -c`'s choice:
 * the newest file (by modification time) with a readable header, filtered by the header's cwd when
 * the directory is a custom one. Only headers are read here; nothing is ever written. Only regular
 * files are listed: a FIFO or a device named `*.jsonl` is skipped without being opened for a read.
 */
import { closeSync, existsSync, fstatSync, readdirSync, readSync, statSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { agentDir, defaultSessionDir, expandHome, sessionsRoot } from "./paths.ts";
import { NotRegularFileError, openRegular, readBoundedFile } from "./regular-file.ts";
import { SessionFileError } from "./session-file.ts";

/** Pi's settings.json is small; the CLI reads at most this much of it. */
const MAX_PI_SETTINGS_BYTES = 16 * 1024 * 1024;

export interface SessionPlaces {
	/** A custom session directory (flat), or null for Pi's per-project layout. */
	custom: string | null;
	/** Where the custom directory came from. */
	customFrom: "--session-dir" | "PI_CODING_AGENT_SESSION_DIR" | "settings.json" | null;
	root: string;
	cwd: string;
	/** Pi's default session directory for `cwd`. */
	cwdDir: string;
}

export function sessionPlaces(opts: { flag?: string; env: NodeJS.ProcessEnv; cwd: string }): SessionPlaces {
	const root = sessionsRoot(opts.env);
	const base = { root, cwd: resolve(opts.cwd), cwdDir: defaultSessionDir(opts.cwd, opts.env) };
	if (opts.flag !== undefined && opts.flag !== "")
		return { ...base, custom: resolve(opts.cwd, expandHome(opts.flag)), customFrom: "--session-dir" };
	const env = opts.env.PI_CODING_AGENT_SESSION_DIR;
	if (env !== undefined && env !== "")
		return { ...base, custom: resolve(expandHome(env)), customFrom: "PI_CODING_AGENT_SESSION_DIR" };
	const fromSettings = settingsSessionDir(opts.env);
	if (fromSettings !== null) return { ...base, custom: resolve(expandHome(fromSettings)), customFrom: "settings.json" };
	return { ...base, custom: null, customFrom: null };
}

function settingsSessionDir(env: NodeJS.ProcessEnv): string | null {
	const data = readPiSettings(join(agentDir(env), "settings.json"));
	return typeof data.sessionDir === "string" && data.sessionDir !== "" ? data.sessionDir : null;
}

/**
 * Pi's compaction settings from its files, as Pi 0.80.6 merges them: the global settings file, then
 * the project's (`<cwd>/.pi/settings.json`) over it, compaction fields only, as `{ compaction }`.
 */
export function readPiCompactionFiles(env: NodeJS.ProcessEnv, cwd: string | undefined): { compaction: object } {
	const compactionOf = (path: string): Record<string, unknown> => {
		const raw = readPiSettings(path).compaction;
		return typeof raw === "object" && raw !== null && !Array.isArray(raw) ? (raw as Record<string, unknown>) : {};
	};
	return {
		compaction: {
			...compactionOf(join(agentDir(env), "settings.json")),
			...(cwd !== undefined ? compactionOf(join(cwd, ".pi", "settings.json")) : {}),
		},
	};
}

/**
 * A Pi settings file as an object, read bounded and only if it is a regular file (a FIFO there would
 * block the read): missing, unreadable, too large or malformed reads as empty, so Pi's defaults apply.
 */
export function readPiSettings(path: string): Record<string, unknown> {
	const read = readBoundedFile(path, MAX_PI_SETTINGS_BYTES);
	if (read.status !== "ok") return {};
	try {
		const data = JSON.parse(read.text) as unknown;
		return typeof data === "object" && data !== null && !Array.isArray(data) ? (data as Record<string, unknown>) : {};
	} catch {
		return {};
	}
}

export interface SessionInfo {
	path: string;
	/** Session id from the header (null when the header has none). */
	id: string | null;
	/** Project directory from the header. */
	cwd: string | null;
	version: number;
	size: number;
	mtimeMs: number;
}

/** Every session file Pi would list, newest first. Files without a readable header are left out. */
export function listSessions(places: SessionPlaces): SessionInfo[] {
	return listSessionFiles(places).sessions;
}

/** A `.jsonl` file in a session directory that is not a readable session (empty, no header, unreadable). */
export interface UnreadableSession {
	path: string;
	size: number | null;
	mtimeMs: number | null;
	/** missing: no such file; unreadable: cannot be read; not-a-session: empty, or no session header. */
	code: "missing" | "unreadable" | "not-a-session";
	reason: string;
	/** A FIFO, a device or a socket: never opened for a read. */
	notRegular?: true;
}

/** Every `.jsonl` file of the session directories: the sessions newest first, and the files that are not sessions. */
export function listSessionFiles(places: SessionPlaces): { sessions: SessionInfo[]; unreadable: UnreadableSession[] } {
	const files: string[] = [];
	if (places.custom !== null) files.push(...jsonlIn(places.custom));
	else if (existsSync(places.root)) {
		for (const name of safeReaddir(places.root)) {
			const dir = join(places.root, name);
			if (isDir(dir)) files.push(...jsonlIn(dir));
		}
	}
	const sessions: SessionInfo[] = [];
	const unreadable: UnreadableSession[] = [];
	for (const path of files) {
		const probe = probeSession(path);
		if ("reason" in probe) unreadable.push(probe);
		else sessions.push(probe);
	}
	const newest = <T extends { path: string; mtimeMs: number | null }>(a: T, b: T) =>
		(b.mtimeMs ?? 0) - (a.mtimeMs ?? 0) || basename(b.path).localeCompare(basename(a.path));
	return { sessions: sessions.sort(newest), unreadable: unreadable.sort(newest) };
}

/** `pi -c`: the newest session of the working directory, or null. */
export function mostRecentSession(places: SessionPlaces): SessionInfo | null {
	const dir = places.custom ?? places.cwdDir;
	const filterCwd = places.custom !== null && places.custom !== places.cwdDir;
	const infos = jsonlIn(dir)
		.map(sessionInfo)
		.filter((i): i is SessionInfo => i !== null)
		.sort((a, b) => b.mtimeMs - a.mtimeMs);
	for (const info of infos) {
		if (!filterCwd || (info.cwd !== null && resolve(info.cwd) === places.cwd)) return info;
	}
	return null;
}

export type SessionMatch =
	| { type: "found"; path: string; by: "path" | "id" | "prefix" }
	| { type: "not-found"; searched: string }
	| { type: "ambiguous"; matches: SessionInfo[] };

/**
 * A session argument, as Pi's --session takes it: anything that looks like a path is a path;
 * otherwise an exact session id, then a unique id prefix, over every session Pi would list.
 */
export function findSession(arg: string, places: SessionPlaces): SessionMatch {
	if (arg.includes("/") || arg.includes("\\") || arg.endsWith(".jsonl"))
		return { type: "found", path: resolve(places.cwd, expandHome(arg)), by: "path" };
	const all = listSessions(places);
	const exact = all.filter((s) => s.id === arg);
	if (exact.length === 1) return { type: "found", path: (exact[0] as SessionInfo).path, by: "id" };
	if (exact.length > 1) return { type: "ambiguous", matches: exact };
	const prefixed = all.filter((s) => s.id?.startsWith(arg));
	if (prefixed.length === 1) return { type: "found", path: (prefixed[0] as SessionInfo).path, by: "prefix" };
	if (prefixed.length > 1) return { type: "ambiguous", matches: prefixed };
	return { type: "not-found", searched: places.custom ?? places.root };
}

/** Header facts of one file, or null when its first readable line is not a session header. */
export function sessionInfo(path: string): SessionInfo | null {
	const probe = probeSession(path);
	return "reason" in probe ? null : probe;
}

/** Header facts of one file, or why it is not a readable session. Reads the header only. */
export function probeSession(path: string): SessionInfo | UnreadableSession {
	let fd: number;
	try {
		// A FIFO or a device named *.jsonl is never opened for a blocking read: it is listed as unreadable.
		fd = openRegular(path);
	} catch (error) {
		const code =
			error instanceof NotRegularFileError ? "not a regular file" : ((error as NodeJS.ErrnoException).code ?? "error");
		return {
			path,
			size: null,
			mtimeMs: null,
			code: code === "ENOENT" ? "missing" : "unreadable",
			reason: `unreadable (${code})`,
			...(error instanceof NotRegularFileError && { notRegular: true as const }),
		};
	}
	let st: { size: number; mtimeMs: number } | null = null;
	try {
		st = fstatSync(fd);
		const at = { path, size: st.size, mtimeMs: st.mtimeMs };
		if (st.size === 0) return { ...at, code: "not-a-session", reason: "empty file" };
		const header = readHeader(fd);
		if (header === null) return { ...at, code: "not-a-session", reason: "no session header" };
		return {
			path,
			id: typeof header.id === "string" ? header.id : null,
			cwd: typeof header.cwd === "string" ? header.cwd : null,
			version: typeof header.version === "number" ? header.version : 1,
			size: st.size,
			mtimeMs: st.mtimeMs,
		};
	} catch (error) {
		const code = (error as NodeJS.ErrnoException).code ?? "error";
		return {
			path,
			size: st?.size ?? null,
			mtimeMs: st?.mtimeMs ?? null,
			code: "unreadable",
			reason: `unreadable (${code})`,
		};
	} finally {
		closeSync(fd);
	}
}

/**
 * A session file's header alone (id, project, version), for a command that needs nothing else: the
 * rest of the file is never read. Errors are the session reader's, with the same codes.
 */
export function readSessionHeader(path: string): SessionInfo {
	const probe = probeSession(path);
	if (!("reason" in probe)) return probe;
	if (probe.code === "missing") throw new SessionFileError(`session file not found: ${path}`, "missing");
	if (probe.code === "not-a-session")
		throw new SessionFileError(
			`${path} is not a Pi session file: ${probe.reason === "empty file" ? "it is empty" : "its first readable line is not a session header"}`,
			"not-a-session",
		);
	if (probe.notRegular === true)
		throw new SessionFileError(
			`${path} is not a regular file (a FIFO, a device or a socket), not a session file; it was not read`,
			"unreadable",
		);
	throw new SessionFileError(`session file ${probe.reason}: ${path}`, "unreadable");
}

/** Headers are short, but a cwd can be long; like Pi, stop looking after 1 MiB. */
const HEADER_SCAN_BYTES = 1 << 20;

function readHeader(fd: number): Record<string, unknown> | null {
	const chunk = Buffer.allocUnsafe(16 * 1024);
	let text = "";
	let pos = 0;
	while (pos < HEADER_SCAN_BYTES) {
		const n = readSync(fd, chunk, 0, chunk.length, pos);
		const done = n <= 0;
		if (!done) {
			text += chunk.toString("utf8", 0, n);
			pos += n;
		}
		let nl = text.indexOf("\n");
		while (nl >= 0 || (done && text.length > 0)) {
			const line = nl >= 0 ? text.slice(0, nl) : text;
			text = nl >= 0 ? text.slice(nl + 1) : "";
			if (line.trim() !== "") {
				try {
					const value = JSON.parse(line) as unknown;
					if (typeof value === "object" && value !== null && !Array.isArray(value)) {
						const v = value as Record<string, unknown>;
						return v.type === "session" ? v : null;
					}
				} catch {
					// Pi skips unreadable lines while looking for the header; so do we.
				}
			}
			nl = text.indexOf("\n");
		}
		if (done) return null;
	}
	return null;
}

function jsonlIn(dir: string): string[] {
	return safeReaddir(dir)
		.filter((n) => n.endsWith(".jsonl"))
		.map((n) => join(dir, n));
}

function safeReaddir(dir: string): string[] {
	try {
		return readdirSync(dir);
	} catch {
		return [];
	}
}

function isDir(path: string): boolean {
	try {
		return statSync(path).isDirectory();
	} catch {
		return false;
	}
}
