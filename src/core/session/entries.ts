/**
 * Session text -> entries, for every session format Pi has written (v1 to v3). Tolerant: a line that
 * is not a JSON object with a `type` is skipped and counted, never fatal (Pi's own loader drops such
 * lines silently; we say how many). Pure: the caller reads the file and supplies the clock-free
 * timestamp parser. Incremental: SessionParser takes one line at a time, so a file of any size can
 * be streamed through it; parseSessionText is the same parser over a whole string.
 *
 * v1 files have no ids: entry order is the tree, and a compaction points back with
 * `firstKeptEntryIndex`. Entries get the id `line:<n>` (the 1-based line number), which is the id the
 * ledger (src/store/ledger.ts) gives them, so recall and replay agree on identities.
 */
import type { PiEntry } from "./view.ts";

/** Turns an ISO 8601 timestamp into milliseconds; NaN when it cannot. Injected: the core has no clock. */
export type ParseTime = (iso: string) => number;

export interface SessionHeader {
	/** Session id from the header, or null when it has none. */
	id: string | null;
	/** Format version; a header without one is v1. */
	version: number;
	cwd: string | null;
	timestamp: string | null;
	parentSession: string | null;
}

export interface SessionProblem {
	line: number;
	reason: string;
}

export interface ParsedSession {
	/** Null when the first readable line is not a session header (not a Pi session file). */
	header: SessionHeader | null;
	/** Every entry after the header, in file order, each with a string id and a parentId. */
	entries: PiEntry[];
	/** Lines skipped because they are not JSON objects with a type (glued objects included). */
	malformed: number;
	/** The first few skipped lines and why, for messages. */
	problems: SessionProblem[];
	/** The last line had no newline (Pi may still be writing it); it is parsed if it is complete. */
	unterminated: boolean;
}

const MAX_PROBLEMS = 10;

type Raw = Record<string, unknown>;

/**
 * One line of a session file to an entry object, or why it is skipped (null for a blank line).
 * `body` is the line without its "\n"; a trailing "\r" is dropped here.
 */
function readLine(body: string): { raw: Raw } | { reason: string } | null {
	const text = body.endsWith("\r") ? body.slice(0, -1) : body;
	if (text.trim() === "") return null;
	let value: unknown;
	try {
		value = JSON.parse(text);
	} catch {
		return { reason: /}\s*{/.test(text) ? "two JSON objects glued on one line" : "not valid JSON" };
	}
	if (typeof value !== "object" || value === null || Array.isArray(value)) return { reason: "not a JSON object" };
	const raw = value as Raw;
	if (typeof raw.type !== "string") return { reason: "no entry type" };
	return { raw };
}

/** What a whole parse says besides the entries. */
export type SessionSummary = Omit<ParsedSession, "entries"> & { entryCount: number };

/**
 * The incremental session parser: lines go in one at a time (in file order), entries come out
 * through `emit` as soon as each line is read, so a caller never needs the whole text. Every
 * reader goes through it: parseSessionText over a string, the CLI's file reader over 1 MiB chunks.
 *
 * State kept per line is a number (v1's firstKeptEntryIndex counts parsed lines, so their line
 * numbers are kept); entries are not kept unless the caller keeps them.
 */
export class SessionParser {
	header: SessionHeader | null = null;
	malformed = 0;
	unterminated = false;
	entryCount = 0;
	private lines = 0;
	/** "start" until the first readable line; then whether the file is a session at all. */
	private state: "start" | "session" | "not-a-session" = "start";
	/** Line number of every parsed line (header included), negated for session headers: v1's index space. */
	private readonly parsed: number[] = [];
	/** Line-level problems first, entry-level after (the order the two-pass parser reported them in). */
	private readonly lineProblems: SessionProblem[] = [];
	private readonly entryProblems: SessionProblem[] = [];
	private previous: string | null = null;
	/** v1 compactions whose firstKeptEntryIndex points past the lines read so far: resolved at finish(). */
	private readonly forward: Array<{ entry: PiEntry; index: number }> = [];

	constructor(private readonly emit: (entry: PiEntry, line: number) => void = () => {}) {}

	/** True once the first readable line turned out not to be a session header: nothing more will be emitted. */
	get notASession(): boolean {
		return this.state === "not-a-session";
	}

	/** The next line, without its "\n". `terminated` is false for a last line that had no newline. */
	line(body: string, terminated = true): void {
		const n = ++this.lines;
		if (!terminated) this.unterminated = true;
		const read = readLine(body);
		if (read === null) return;
		if ("reason" in read) {
			this.malformed++;
			if (this.lineProblems.length < MAX_PROBLEMS) this.lineProblems.push({ line: n, reason: read.reason });
			return;
		}
		const raw = read.raw;
		this.parsed.push(raw.type === "session" ? -n : n);
		if (this.state === "not-a-session") return;
		if (this.state === "start") {
			if (raw.type !== "session") {
				this.state = "not-a-session";
				return;
			}
			this.state = "session";
			this.header = {
				id: typeof raw.id === "string" ? raw.id : null,
				version: typeof raw.version === "number" ? raw.version : 1,
				cwd: typeof raw.cwd === "string" ? raw.cwd : null,
				timestamp: typeof raw.timestamp === "string" ? raw.timestamp : null,
				parentSession: typeof raw.parentSession === "string" ? raw.parentSession : null,
			};
			return;
		}
		const entry = this.toEntry(raw, n, this.previous, true);
		if (entry === null) return;
		this.previous = entry.id;
		this.entryCount++;
		this.emit(entry, n);
	}

	/** A line the reader could not decode (too long to hold): counted and reported like a malformed one. */
	skipLine(reason: string, terminated = true): void {
		const n = ++this.lines;
		if (!terminated) this.unterminated = true;
		this.malformed++;
		if (this.lineProblems.length < MAX_PROBLEMS) this.lineProblems.push({ line: n, reason });
	}

	/**
	 * The entry a line that was fed earlier gave, built again from its text: for a reader that first
	 * fed every line keeping nothing, and now wants a few entries back (the CLI's active branch).
	 * `previous` is the id of the entry before it (only v1 files use it). Null when the text does not
	 * give an entry (the file changed in between). Call after finish().
	 */
	entryAt(body: string, line: number, previous: string | null): PiEntry | null {
		const read = readLine(body);
		if (read === null || "reason" in read || this.state !== "session") return null;
		return this.toEntry(read.raw, line, previous, false);
	}

	/** After the last line: the counts, the header, and v1 indices that pointed forward, resolved. */
	finish(): SessionSummary {
		for (const { entry, index } of this.forward.splice(0)) {
			const target = this.parsed[index];
			if (target !== undefined && target > 0) entry.firstKeptEntryId = `line:${target}`;
		}
		const problems = [...this.lineProblems, ...this.entryProblems].slice(0, MAX_PROBLEMS);
		return {
			header: this.header,
			malformed: this.malformed,
			problems,
			unterminated: this.unterminated,
			entryCount: this.entryCount,
		};
	}

	private toEntry(raw: Raw, n: number, previous: string | null, counting: boolean): PiEntry | null {
		const header = this.header as SessionHeader;
		if (raw.type === "session") {
			if (counting) this.entrySkip(n, "a second session header");
			return null;
		}
		let entry: PiEntry;
		if (header.version < 2) {
			entry = { ...raw, type: raw.type as string, id: `line:${n}`, parentId: previous };
			const index = raw.firstKeptEntryIndex;
			if (raw.type === "compaction" && typeof index === "number" && Number.isInteger(index) && index >= 0) {
				if (index < this.parsed.length) {
					const target = this.parsed[index] as number;
					if (target > 0) entry.firstKeptEntryId = `line:${target}`;
				} else if (counting) this.forward.push({ entry, index });
			}
		} else {
			if (typeof raw.id !== "string") {
				if (counting) this.entrySkip(n, "an entry without an id");
				return null;
			}
			entry = {
				...raw,
				type: raw.type as string,
				id: raw.id,
				parentId: typeof raw.parentId === "string" ? raw.parentId : null,
			};
		}
		// v2 files still say hookMessage; v3 renamed the role to custom (Pi migrates the same way).
		if (entry.type === "message" && entry.message?.role === "hookMessage") {
			entry.message = { ...entry.message, role: "custom" };
		}
		return entry;
	}

	private entrySkip(line: number, reason: string): void {
		this.malformed++;
		if (this.entryProblems.length < MAX_PROBLEMS) this.entryProblems.push({ line, reason });
	}
}

/**
 * Text chunks to lines for a SessionParser: split on "\n" whatever the chunk boundaries are, so
 * text can be fed in pieces as it is decoded. end() feeds a last line that has no newline.
 */
export class SessionTextFeed {
	private carry = "";

	constructor(private readonly parser: SessionParser) {}

	write(chunk: string): void {
		let start = 0;
		let nl = chunk.indexOf("\n");
		if (nl >= 0 && this.carry !== "") {
			this.parser.line(this.carry + chunk.slice(0, nl));
			this.carry = "";
			start = nl + 1;
			nl = chunk.indexOf("\n", start);
		}
		while (nl >= 0) {
			this.parser.line(chunk.slice(start, nl));
			start = nl + 1;
			nl = chunk.indexOf("\n", start);
		}
		if (start < chunk.length) this.carry += chunk.slice(start);
	}

	end(): SessionSummary {
		if (this.carry !== "") this.parser.line(this.carry, false);
		this.carry = "";
		return this.parser.finish();
	}
}

/** A whole session text at once: the same SessionParser, keeping every entry. */
export function parseSessionText(text: string): ParsedSession {
	const entries: PiEntry[] = [];
	const feed = new SessionTextFeed(new SessionParser((entry) => entries.push(entry)));
	feed.write(text);
	const { header, malformed, problems, unterminated } = feed.end();
	return { header, entries, malformed, problems, unterminated };
}

/** What the branch walk needs of an entry (a whole PiEntry, or a reader's small stand-in for one). */
export interface BranchNode {
	id: string;
	parentId?: string | null;
}

/**
 * The active branch: the path from the root to the leaf, in order. Pi's leaf on load is the last
 * entry of the file; a leaf id can be given to look at another branch. Unknown parents end the walk.
 */
export function branchPath<T extends BranchNode>(entries: readonly T[], leafId?: string): T[] {
	const byId = new Map<string, T>();
	for (const e of entries) byId.set(e.id, e);
	let current = leafId !== undefined ? byId.get(leafId) : entries[entries.length - 1];
	const path: T[] = [];
	const seen = new Set<string>();
	while (current !== undefined && !seen.has(current.id)) {
		seen.add(current.id);
		path.push(current);
		current = typeof current.parentId === "string" ? byId.get(current.parentId) : undefined;
	}
	return path.reverse();
}

/** Entry timestamp in ms (0 when absent or unreadable). */
export function entryTime(entry: PiEntry, parseTime: ParseTime): number {
	// Pi writes ISO strings; the offline replay's own entries (simulate's compactions) carry milliseconds.
	const raw: unknown = entry.timestamp;
	if (typeof raw === "number") return Number.isFinite(raw) ? raw : 0;
	if (typeof entry.timestamp !== "string") return 0;
	const t = parseTime(entry.timestamp);
	return Number.isFinite(t) ? t : 0;
}
