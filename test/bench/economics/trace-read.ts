/**
 * Reading a recorded Pi session (.jsonl) as a trace: v1 (no ids, file order is the tree) and v3
 * (id/parentId, the active branch is the path from the last entry back to the root). Lines that are
 * not one JSON object (two objects glued together, truncated writes) are skipped and counted, never
 * fatal. The sha256 of the exact bytes is kept so every report can name what it replayed.
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { basename } from "node:path";

/** One session line; only `type` is guaranteed. */
export interface TraceEntry {
	type: string;
	id?: string;
	parentId?: string | null;
	timestamp?: string;
	message?: TraceMessage;
	[key: string]: unknown;
}

export interface TraceMessage {
	role: string;
	content?: unknown;
	timestamp?: number;
	stopReason?: string;
	usage?: { input?: number; output?: number; cacheRead?: number; cacheWrite?: number };
	toolCallId?: string;
	toolName?: string;
	isError?: boolean;
	details?: unknown;
	errorMessage?: string;
	model?: string;
	[key: string]: unknown;
}

export interface Trace {
	name: string;
	path: string;
	sha256: string;
	bytes: number;
	/** "v1" (no version field, no ids) or "v<n>" from the header. */
	format: string;
	header: TraceEntry | undefined;
	/** The active branch, root first, header excluded. */
	entries: TraceEntry[];
	/** Lines that were not a single JSON object. */
	malformedLines: number;
	/** Entries in the file that are not on the active branch (v3 trees with abandoned branches). */
	offBranch: number;
	/** Read whole from `path` (false: built in memory, e.g. generated or cut from another trace). */
	fromFile: boolean;
}

export function sha256Of(bytes: Buffer | string): string {
	return createHash("sha256").update(bytes).digest("hex");
}

export function readTrace(path: string, name = basename(path).replace(/\.jsonl$/, "")): Trace {
	const raw = readFileSync(path);
	const parsed = parseLines(raw.toString("utf8"));
	const header = parsed.entries[0]?.type === "session" ? parsed.entries[0] : undefined;
	const body = header ? parsed.entries.slice(1) : parsed.entries;
	const version = typeof header?.version === "number" ? header.version : 1;
	const hasIds = body.some((e) => typeof e.id === "string");
	const entries = hasIds ? activeBranch(body) : body;
	return {
		name,
		path,
		sha256: sha256Of(raw),
		bytes: raw.length,
		format: `v${version}`,
		header,
		entries,
		malformedLines: parsed.malformed,
		offBranch: body.length - entries.length,
		fromFile: true,
	};
}

/**
 * Builds a trace from entries already in memory (a generated session, or a cut of another trace),
 * with the checksum of their JSONL. `path` says where it came from, for the report.
 */
export function traceFromEntries(name: string, entries: TraceEntry[], path = `(generated) ${name}`): Trace {
	const text = `${entries.map((e) => JSON.stringify(e)).join("\n")}\n`;
	const header = entries[0]?.type === "session" ? entries[0] : undefined;
	const body = header ? entries.slice(1) : entries;
	const hasIds = body.some((e) => typeof e.id === "string");
	const branch = hasIds ? activeBranch(body) : body;
	return {
		name,
		path,
		sha256: sha256Of(text),
		bytes: Buffer.byteLength(text),
		format: `v${typeof header?.version === "number" ? header.version : 1}`,
		header,
		entries: branch,
		malformedLines: 0,
		offBranch: body.length - branch.length,
		fromFile: false,
	};
}

function parseLines(text: string): { entries: TraceEntry[]; malformed: number } {
	const entries: TraceEntry[] = [];
	let malformed = 0;
	for (const line of text.split("\n")) {
		const s = line.endsWith("\r") ? line.slice(0, -1) : line;
		if (s.trim().length === 0) continue;
		try {
			const v = JSON.parse(s) as unknown;
			if (v === null || typeof v !== "object" || Array.isArray(v) || typeof (v as TraceEntry).type !== "string") {
				malformed++;
				continue;
			}
			entries.push(v as TraceEntry);
		} catch {
			malformed++;
		}
	}
	return { entries, malformed };
}

/** Path from the last entry with an id back to the root, in root-first order. */
function activeBranch(body: TraceEntry[]): TraceEntry[] {
	const byId = new Map<string, TraceEntry>();
	for (const e of body) if (typeof e.id === "string") byId.set(e.id, e);
	let leaf: TraceEntry | undefined;
	for (let i = body.length - 1; i >= 0 && leaf === undefined; i--) if (typeof body[i]?.id === "string") leaf = body[i];
	const path: TraceEntry[] = [];
	const seen = new Set<string>();
	for (let e = leaf; e !== undefined; ) {
		const id = e.id as string;
		if (seen.has(id)) break;
		seen.add(id);
		path.push(e);
		e = typeof e.parentId === "string" ? byId.get(e.parentId) : undefined;
	}
	return path.reverse();
}

/** The text of a message's content (string, or the text parts of an array). */
export function textOf(content: unknown): string {
	if (typeof content === "string") return content;
	if (!Array.isArray(content)) return "";
	return content
		.map((p) =>
			p !== null && typeof p === "object" && (p as { type?: string }).type === "text"
				? String((p as { text?: unknown }).text ?? "")
				: "",
		)
		.join("");
}

/** Milliseconds of a message: its own timestamp, else the entry's ISO timestamp, else NaN. */
export function timeOf(entry: TraceEntry): number {
	const own = entry.message?.timestamp;
	if (typeof own === "number" && Number.isFinite(own)) return own;
	return typeof entry.timestamp === "string" ? Date.parse(entry.timestamp) : Number.NaN;
}
