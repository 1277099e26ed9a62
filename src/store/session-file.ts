/**
 * Reading one Pi session file for the CLI, streamed: the file is read in fixed-size chunks (1 MiB),
 * split on the newline byte, and each line is decoded on its own and fed to the core's incremental
 * parser (v1 to v3, tolerant), so the whole text is never one string. Errors say which file and why.
 * Never writes: the session file is Pi's.
 *
 * Two passes over the same bytes. Pass one parses every line and keeps only a small skeleton per
 * entry (id, parent, line, byte offset); the active branch is walked on the skeletons. Pass two reads
 * the file again and builds only the branch's entries, skipping every other line without decoding
 * it, so entries on abandoned branches are never held. (A v1 file is a single chain, every entry is
 * on the branch: its entries are kept in pass one and there is no pass two.)
 *
 * Pi may be appending while we read: both passes stop at the size seen when the file was opened, and
 * a last line without a newline is parsed if it is complete, as before. If the bytes change between
 * the passes (Pi rewrote the file), the read starts over, a few times at most.
 */
import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import { type BranchNode, branchPath, SessionParser, type SessionSummary } from "../core/session/entries.ts";
import type { PiEntry } from "../core/session/view.ts";

export class SessionFileError extends Error {
	constructor(
		message: string,
		readonly code: "missing" | "unreadable" | "not-a-session",
	) {
		super(message);
	}
}

export interface SessionFile extends Omit<SessionSummary, "entryCount"> {
	path: string;
	size: number;
	mtimeMs: number;
	/** Entries in the file (every branch), counted; only the active branch is kept. */
	entryCount: number;
	/** The active branch (root to the last entry), as Pi opens it. */
	branch: PiEntry[];
}

export interface ReadOptions {
	/** Bytes read at a time (tests use small ones to put boundaries everywhere). */
	chunkBytes?: number;
}

/** Bytes read at a time. */
export const CHUNK_BYTES = 1 << 20;
/** Reads started over because the file changed between the two passes, before giving up. */
const ATTEMPTS = 3;

interface Skeleton extends BranchNode {
	line: number;
}

export function readSessionFile(path: string, options: ReadOptions = {}): SessionFile {
	const chunkBytes = Math.max(1, Math.floor(options.chunkBytes ?? CHUNK_BYTES));
	for (let attempt = 1; ; attempt++) {
		const fd = openSession(path);
		try {
			const file = readOnce(fd, path, chunkBytes);
			if (file !== null) return file;
		} finally {
			closeSync(fd);
		}
		if (attempt >= ATTEMPTS)
			throw new SessionFileError(`session file unreadable (it kept changing while being read): ${path}`, "unreadable");
	}
}

function openSession(path: string): number {
	let fd: number | undefined;
	try {
		fd = openSync(path, "r");
		if (fstatSync(fd).isDirectory())
			throw new SessionFileError(`${path} is a directory, not a session file`, "unreadable");
		return fd;
	} catch (error) {
		if (fd !== undefined) closeSync(fd);
		if (error instanceof SessionFileError) throw error;
		const code = (error as NodeJS.ErrnoException).code;
		if (code === "ENOENT") throw new SessionFileError(`session file not found: ${path}`, "missing");
		if (code === "EISDIR") throw new SessionFileError(`${path} is a directory, not a session file`, "unreadable");
		throw new SessionFileError(`session file unreadable (${code ?? (error as Error).message}): ${path}`, "unreadable");
	}
}

/** Both passes over an open file; null when its bytes changed between them. */
function readOnce(fd: number, path: string, chunkBytes: number): SessionFile | null {
	const st = fstatSync(fd);
	const size = st.size;
	const skeletons: Skeleton[] = [];
	const kept: PiEntry[] = [];
	let v1 = false;
	const parser = new SessionParser((entry, line) => {
		if (v1) kept.push(entry);
		else skeletons.push({ id: entry.id, parentId: entry.parentId ?? null, line });
	});
	let first = true;
	eachLine(fd, size, chunkBytes, (bytes, start, end, terminated) => {
		parser.line(bytes.toString("utf8", start, end), terminated);
		if (first && parser.header !== null) {
			first = false;
			v1 = parser.header.version < 2;
		}
		// The first readable line was not a header: nothing after it can make this a session.
		return !parser.notASession;
	});
	const summary = parser.finish();
	if (summary.header === null) {
		throw new SessionFileError(
			`${path} is not a Pi session file: its first readable line is not a session header`,
			"not-a-session",
		);
	}
	const { entryCount, ...rest } = summary;
	const base = { ...rest, path, size, mtimeMs: st.mtimeMs, entryCount };
	if (v1) return { ...base, branch: branchPath(kept) };

	const skeletonBranch = branchPath(skeletons);
	const wanted = new Map<number, number>();
	for (const [i, s] of skeletonBranch.entries()) wanted.set(s.line, i);
	const branch: PiEntry[] = new Array(skeletonBranch.length);
	let found = 0;
	let changed = false;
	let line = 0;
	eachLine(fd, size, chunkBytes, (bytes, start, end) => {
		const at = wanted.get(++line);
		if (at === undefined) return true;
		const entry = parser.entryAt(bytes.toString("utf8", start, end), line, null);
		if (entry === null || entry.id !== skeletonBranch[at]?.id) {
			changed = true;
			return false;
		}
		branch[at] = entry;
		found++;
		return true;
	});
	if (changed || found !== skeletonBranch.length) return null;
	return { ...base, branch };
}

/**
 * Every line of the first `size` bytes, in order, as a byte range without its "\n"; the last one may
 * have no newline. A line that spans chunks is joined once, whatever its length. Stops early when
 * `onLine` returns false.
 */
function eachLine(
	fd: number,
	size: number,
	chunkBytes: number,
	onLine: (bytes: Buffer, start: number, end: number, terminated: boolean) => boolean,
): void {
	const chunk = Buffer.allocUnsafe(Math.min(chunkBytes, Math.max(size, 1)));
	const pieces: Buffer[] = [];
	let pos = 0;
	while (pos < size) {
		const n = readSync(fd, chunk, 0, Math.min(chunk.length, size - pos), pos);
		if (n <= 0) break; // cut short under us: what was read is all there is
		pos += n;
		let start = 0;
		for (let nl = chunk.indexOf(10, 0); nl >= 0 && nl < n; nl = chunk.indexOf(10, start)) {
			let keepGoing: boolean;
			if (pieces.length > 0) {
				pieces.push(chunk.subarray(start, nl));
				const joined = Buffer.concat(pieces);
				pieces.length = 0;
				keepGoing = onLine(joined, 0, joined.length, true);
			} else keepGoing = onLine(chunk, start, nl, true);
			if (!keepGoing) return;
			start = nl + 1;
		}
		// The rest of this chunk begins a line that ends in a later one: copy it (the chunk is reused).
		if (start < n) pieces.push(Buffer.from(chunk.subarray(start, n)));
	}
	if (pieces.length > 0) {
		const joined = Buffer.concat(pieces);
		onLine(joined, 0, joined.length, false);
	}
}

/** ISO 8601 to milliseconds, NaN when unreadable: the parser the core is given. */
export function parseIsoTime(iso: string): number {
	return Date.parse(iso);
}
