/**
 * Reading one Pi session file for the CLI: the whole file, parsed tolerantly by the core (v1 to v3),
 * with errors that say which file and why. Never writes: the session file is Pi's.
 */
import { readFileSync, statSync } from "node:fs";
import { branchPath, type ParsedSession, parseSessionText } from "../core/session/entries.ts";
import type { PiEntry } from "../core/session/view.ts";

export class SessionFileError extends Error {
	constructor(
		message: string,
		readonly code: "missing" | "unreadable" | "not-a-session",
	) {
		super(message);
	}
}

export interface SessionFile extends ParsedSession {
	path: string;
	size: number;
	mtimeMs: number;
	/** The active branch (root to the last entry), as Pi opens it. */
	branch: PiEntry[];
}

export function readSessionFile(path: string): SessionFile {
	let text: string;
	let size: number;
	let mtimeMs: number;
	try {
		const st = statSync(path);
		if (st.isDirectory()) throw new SessionFileError(`${path} is a directory, not a session file`, "unreadable");
		size = st.size;
		mtimeMs = st.mtimeMs;
		text = readFileSync(path, "utf8");
	} catch (error) {
		if (error instanceof SessionFileError) throw error;
		const code = (error as NodeJS.ErrnoException).code;
		if (code === "ENOENT") throw new SessionFileError(`session file not found: ${path}`, "missing");
		throw new SessionFileError(`session file unreadable (${code ?? (error as Error).message}): ${path}`, "unreadable");
	}
	const parsed = parseSessionText(text);
	if (parsed.header === null) {
		throw new SessionFileError(
			`${path} is not a Pi session file: its first readable line is not a session header`,
			"not-a-session",
		);
	}
	return { ...parsed, path, size, mtimeMs, branch: branchPath(parsed.entries) };
}

/** ISO 8601 to milliseconds, NaN when unreadable: the parser the core is given. */
export function parseIsoTime(iso: string): number {
	return Date.parse(iso);
}
