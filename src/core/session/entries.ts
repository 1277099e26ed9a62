/**
 * Session text -> entries, for every session format Pi has written (v1 to v3). Tolerant: a line that
 * is not a JSON object with a `type` is skipped and counted, never fatal (Pi's own loader drops such
 * lines silently; we say how many). Pure: the caller reads the file and supplies the clock-free
 * timestamp parser.
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

export function parseSessionText(text: string): ParsedSession {
	const out: ParsedSession = { header: null, entries: [], malformed: 0, problems: [], unterminated: false };
	// Parsed entries in order, header included: v1's firstKeptEntryIndex indexes this list (as Pi's migration does).
	const parsed: Array<{ raw: Record<string, unknown>; line: number }> = [];
	let line = 0;
	let start = 0;
	while (start < text.length) {
		let end = text.indexOf("\n", start);
		if (end < 0) {
			end = text.length;
			out.unterminated = true;
		}
		line++;
		let body = text.slice(start, end);
		start = end + 1;
		if (body.endsWith("\r")) body = body.slice(0, -1);
		if (body.trim() === "") continue;
		let value: unknown;
		try {
			value = JSON.parse(body);
		} catch {
			skip(out, line, /}\s*{/.test(body) ? "two JSON objects glued on one line" : "not valid JSON");
			continue;
		}
		if (typeof value !== "object" || value === null || Array.isArray(value)) {
			skip(out, line, "not a JSON object");
			continue;
		}
		const raw = value as Record<string, unknown>;
		if (typeof raw.type !== "string") {
			skip(out, line, "no entry type");
			continue;
		}
		parsed.push({ raw, line });
	}
	const first = parsed[0];
	if (first === undefined || first.raw.type !== "session") return out;
	const h = first.raw;
	out.header = {
		id: typeof h.id === "string" ? h.id : null,
		version: typeof h.version === "number" ? h.version : 1,
		cwd: typeof h.cwd === "string" ? h.cwd : null,
		timestamp: typeof h.timestamp === "string" ? h.timestamp : null,
		parentSession: typeof h.parentSession === "string" ? h.parentSession : null,
	};
	const v1 = out.header.version < 2;
	let previous: string | null = null;
	for (let i = 1; i < parsed.length; i++) {
		const { raw, line: n } = parsed[i] as { raw: Record<string, unknown>; line: number };
		if (raw.type === "session") {
			skip(out, n, "a second session header");
			continue;
		}
		let entry: PiEntry;
		if (v1) {
			entry = { ...raw, type: raw.type as string, id: `line:${n}`, parentId: previous };
			if (raw.type === "compaction" && typeof raw.firstKeptEntryIndex === "number") {
				const target = parsed[raw.firstKeptEntryIndex];
				if (target !== undefined && target.raw.type !== "session") entry.firstKeptEntryId = `line:${target.line}`;
			}
		} else {
			if (typeof raw.id !== "string") {
				skip(out, n, "an entry without an id");
				continue;
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
		previous = entry.id;
		out.entries.push(entry);
	}
	return out;
}

function skip(out: ParsedSession, line: number, reason: string): void {
	out.malformed++;
	if (out.problems.length < MAX_PROBLEMS) out.problems.push({ line, reason });
}

/**
 * The active branch: the path from the root to the leaf, in order. Pi's leaf on load is the last
 * entry of the file; a leaf id can be given to look at another branch. Unknown parents end the walk.
 */
export function branchPath(entries: readonly PiEntry[], leafId?: string): PiEntry[] {
	const byId = new Map<string, PiEntry>();
	for (const e of entries) byId.set(e.id, e);
	let current = leafId !== undefined ? byId.get(leafId) : entries[entries.length - 1];
	const path: PiEntry[] = [];
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
	if (typeof entry.timestamp !== "string") return 0;
	const t = parseTime(entry.timestamp);
	return Number.isFinite(t) ? t : 0;
}
