/**
 * Reading one Pi session file for the CLI, streamed: the file is read in fixed-size chunks (1 MiB),
 * split on the newline byte, and each line is decoded on its own and fed to the core's incremental
 * parser (v1 to v3, tolerant), so the whole text is never one string. Errors say which file and why.
 * Never writes: the session file is Pi's.
 *
 * At most two passes over the same bytes. Pass one parses every line, keeps a small skeleton per
 * entry (id, parent, line, type) and holds the entries of the path from the root to the newest entry,
 * letting go of those the file shows were left behind (an entry that continues from an earlier one
 * cuts the path back to it). The active branch is then walked on the skeletons. Its entries are
 * usually all still held; those that are not (the user went back to an old branch with /tree) are
 * built in pass two, which reads the file again and decodes only their lines. So entries on abandoned
 * branches are not kept. (A v1 file is a single chain: every entry is on the branch, one pass.)
 *
 * Pi may be appending while we read: both passes stop at the size seen when the file was opened, and
 * a last line without a newline is parsed if it is complete, as before. If the bytes change between
 * the passes (Pi rewrote the file), the read starts over, a few times at most.
 */
import { closeSync, fstatSync, readSync } from "node:fs";
import { type BranchNode, branchPath, SessionParser, type SessionSummary } from "../core/session/entries.ts";
import type { PiEntry } from "../core/session/view.ts";
import { MAX_LINE_BYTES, NotRegularFileError, openRegular } from "./regular-file.ts";

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
	/** Passes over the file: 1 when the branch was held while reading, 2 when part of it was read again. */
	passes: 1 | 2;
	/** The active branch (root to the last entry), as Pi opens it; only the entries `keep` accepted, when given. */
	branch: PiEntry[];
	/**
	 * The branch's first entry continues from a parent that is not in the file (its line was
	 * unreadable, or the file was cut): the branch, and every figure taken from it, covers only what
	 * follows that line. Null for an intact chain (and for v1 files, which have no parent ids).
	 */
	brokenChain: { line: number; missingParent: string } | null;
	/** Assistant messages in the whole file, on every branch. */
	responses: number;
}

/** What `keep` sees of an entry before it is built. */
export interface EntryKind {
	type: string;
	customType?: string;
}

export interface ReadOptions {
	/** Bytes read at a time (tests use small ones to put boundaries everywhere). */
	chunkBytes?: number;
	/** Build only the branch entries this accepts (recall needs only the fold records). */
	keep?: (entry: EntryKind) => boolean;
	/** Longest line decoded (tests use small ones); a longer line is skipped and counted. */
	maxLineBytes?: number;
}

/** Bytes read at a time. */
export const CHUNK_BYTES = 1 << 20;
export { MAX_LINE_BYTES } from "./regular-file.ts";

/** Reads started over because the file changed between the two passes, before giving up. */
const ATTEMPTS = 3;

interface Skeleton extends BranchNode, EntryKind {
	line: number;
}

export function readSessionFile(path: string, options: ReadOptions = {}): SessionFile {
	const chunkBytes = Math.max(1, Math.floor(options.chunkBytes ?? CHUNK_BYTES));
	const limits = { chunkBytes, maxLineBytes: Math.max(1, Math.floor(options.maxLineBytes ?? MAX_LINE_BYTES)) };
	for (let attempt = 1; ; attempt++) {
		const fd = openSession(path);
		try {
			const file = readOnce(fd, path, limits, options.keep ?? (() => true));
			if (file !== null) return file;
		} finally {
			closeSync(fd);
		}
		if (attempt >= ATTEMPTS)
			throw new SessionFileError(`session file unreadable (it kept changing while being read): ${path}`, "unreadable");
	}
}

function openSession(path: string): number {
	try {
		// Without blocking, and only a regular file: a FIFO given as the session would hang the read.
		return openRegular(path);
	} catch (error) {
		const code = (error as NodeJS.ErrnoException).code;
		if (code === "ENOENT") throw new SessionFileError(`session file not found: ${path}`, "missing");
		if (code === "EISDIR") throw new SessionFileError(`${path} is a directory, not a session file`, "unreadable");
		if (error instanceof NotRegularFileError)
			throw new SessionFileError(
				`${path} is not a regular file (a FIFO, a device or a socket), not a session file; it was not read`,
				"unreadable",
			);
		throw new SessionFileError(`session file unreadable (${code ?? (error as Error).message}): ${path}`, "unreadable");
	}
}

/** Both passes over an open file; null when its bytes changed between them. */
function readOnce(fd: number, path: string, limits: Limits, keep: (entry: EntryKind) => boolean): SessionFile | null {
	const st = fstatSync(fd);
	const size = st.size;
	const skeletons: Skeleton[] = [];
	const kept: PiEntry[] = [];
	const current = new CurrentPath();
	let v1 = false;
	let responses = 0;
	const parser = new SessionParser((entry, line) => {
		if (entry.type === "message" && entry.message?.role === "assistant") responses++;
		if (v1) {
			if (keep(entry)) kept.push(entry);
			return;
		}
		skeletons.push({
			id: entry.id,
			parentId: entry.parentId ?? null,
			line,
			type: entry.type,
			...(typeof entry.customType === "string" && { customType: entry.customType }),
		});
		current.push(entry, line, keep(entry));
	});
	let first = true;
	eachLine(fd, size, limits, (bytes, start, end, terminated) => {
		if (bytes === null) parser.skipLine(`longer than ${limits.maxLineBytes} bytes, skipped unread`, terminated);
		else parser.line(bytes.toString("utf8", start, end), terminated);
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
	const base = { ...rest, path, size, mtimeMs: st.mtimeMs, entryCount, responses };
	// A v1 file is one chain (each entry's parent is the one before it): the branch is every entry.
	if (v1) return { ...base, branch: kept, passes: 1, brokenChain: null };

	// The branch, walked on the skeletons; its entries come from the path held while reading when
	// they are still there, else from a second pass that builds just those lines.
	const walked = branchPath(skeletons);
	const root = walked[0];
	const brokenChain =
		root !== undefined && typeof root.parentId === "string" ? { line: root.line, missingParent: root.parentId } : null;
	const skeletonBranch = walked.filter(keep);
	const held = current.byLine();
	const branch: PiEntry[] = new Array(skeletonBranch.length);
	const wanted = new Map<number, number>();
	for (const [i, s] of skeletonBranch.entries()) {
		const entry = held.get(s.line);
		if (entry !== undefined) branch[i] = entry;
		else wanted.set(s.line, i);
	}
	if (wanted.size === 0) return { ...base, branch, passes: 1, brokenChain };
	if (!buildWanted({ fd, size, limits, parser, wanted, skeletonBranch, branch })) return null;
	return { ...base, branch, passes: 2, brokenChain };
}

/** Pass two: build the branch entries pass one let go of (`wanted`: line to index); false if the file changed. */
function buildWanted(p: {
	fd: number;
	size: number;
	limits: Limits;
	parser: SessionParser;
	wanted: Map<number, number>;
	skeletonBranch: readonly Skeleton[];
	branch: PiEntry[];
}): boolean {
	let found = 0;
	let changed = false;
	let line = 0;
	eachLine(p.fd, p.size, p.limits, (bytes, start, end) => {
		const at = p.wanted.get(++line);
		if (at === undefined) return true;
		if (bytes === null) {
			changed = true;
			return false;
		}
		const entry = p.parser.entryAt(bytes.toString("utf8", start, end), line, null);
		if (entry === null || entry.id !== p.skeletonBranch[at]?.id) {
			changed = true;
			return false;
		}
		p.branch[at] = entry;
		found++;
		return found < p.wanted.size;
	});
	return !changed && found === p.wanted.size;
}

/**
 * The path from a root to the newest entry, as it stands while the file is read. An entry whose
 * parent is on the path cuts the path back to that parent: what was after it is a branch the user
 * left, and its entries are let go. A session without /tree jumps is read in one pass this way; an
 * entry that left the path and turns out to be on the final branch is built again in pass two.
 */
class CurrentPath {
	private readonly steps: Array<{ id: string; line: number; entry: PiEntry | null }> = [];
	private readonly at = new Map<string, number>();

	push(entry: PiEntry, line: number, hold: boolean): void {
		const parent = entry.parentId;
		const pos = typeof parent === "string" ? this.at.get(parent) : undefined;
		const length = pos === undefined ? 0 : pos + 1;
		while (this.steps.length > length) {
			const dropped = this.steps.pop() as { id: string };
			if (this.at.get(dropped.id) === this.steps.length) this.at.delete(dropped.id);
		}
		this.at.set(entry.id, this.steps.length);
		this.steps.push({ id: entry.id, line, entry: hold ? entry : null });
	}

	byLine(): Map<number, PiEntry> {
		const out = new Map<number, PiEntry>();
		for (const s of this.steps) if (s.entry !== null) out.set(s.line, s.entry);
		return out;
	}
}

interface Limits {
	chunkBytes: number;
	maxLineBytes: number;
}

/**
 * Every line of the first `size` bytes, in order, as a byte range without its "\n"; the last one may
 * have no newline. A line inside one chunk is passed as a view of it; a line that spans chunks is not
 * copied piece by piece but read again from the file in one piece once its end is known, and a line
 * longer than `maxLineBytes` is passed as null without ever being held: skipping it costs no memory.
 * Stops early when `onLine` returns false.
 */
function eachLine(
	fd: number,
	size: number,
	limits: Limits,
	onLine: (bytes: Buffer | null, start: number, end: number, terminated: boolean) => boolean,
): void {
	const chunk = Buffer.allocUnsafe(Math.min(limits.chunkBytes, Math.max(size, 1)));
	/** File offset where the current line starts. */
	let lineStart = 0;
	let pos = 0;
	const emit = (end: number, terminated: boolean): boolean => {
		const length = end - lineStart;
		if (length > limits.maxLineBytes) return onLine(null, 0, 0, terminated);
		if (lineStart >= pos) return onLine(chunk, lineStart - pos, end - pos, terminated);
		const whole = Buffer.allocUnsafe(length);
		const got = readFully(fd, whole, lineStart);
		return onLine(whole, 0, got, terminated);
	};
	while (pos < size) {
		const n = readSync(fd, chunk, 0, Math.min(chunk.length, size - pos), pos);
		if (n <= 0) break; // cut short under us: what was read is all there is
		for (let nl = chunk.indexOf(10, 0); nl >= 0 && nl < n; nl = chunk.indexOf(10, nl + 1)) {
			const keepGoing = emit(pos + nl, true);
			lineStart = pos + nl + 1;
			if (!keepGoing) return;
		}
		pos += n;
	}
	// The last line, without a newline: pos is past the last chunk now, so emit() reads it from the file.
	if (lineStart < pos) emit(pos, false);
}

/** Read `buf.length` bytes at `position`, or fewer if the file ends first; how many were read. */
function readFully(fd: number, buf: Buffer, position: number): number {
	let done = 0;
	while (done < buf.length) {
		const n = readSync(fd, buf, done, buf.length - done, position + done);
		if (n <= 0) break;
		done += n;
	}
	return done;
}

/** ISO 8601 to milliseconds, NaN when unreadable: the parser the core is given. */
export function parseIsoTime(iso: string): number {
	return Date.parse(iso);
}
