/**
 * Superseded and duplicate output: blocks that are stale the moment something later in the branch
 * replaces them. Decided only from what the branch holds (calls, arguments, result texts), never from
 * the files on disk, so a session always folds the same way and simulate replays it exactly.
 *
 * - a `read` of a file, once that file is read again in full or changed by `edit` or `write`;
 * - a tool result byte-identical to a later one of the same tool with the same arguments;
 * - a failed call, once a later call of the same tool on the same path succeeds (its result and its
 *   input both);
 * - the input of a `write`, once that file is read back or written again.
 *
 * Only calls the caller marks `settled` (delivered in full at least once, outside the tool loop still
 * running) are reported; the later call that makes one stale needs no such mark. What to do with the
 * findings (exempt them from age and the protected tail, fold them at the next fold event) is the
 * planner's.
 */
import { clip } from "../digest.ts";
import { readCall } from "../seed/calls.ts";

export interface ToolEvent {
	toolCallId: string;
	toolName: string;
	args: unknown;
	/** The assistant message holding the call, and the call's content index in it. */
	callEntryId: string;
	callBlockIndex: number;
	/** The call's result; absent when the branch holds none (yet). */
	result?: {
		entryId: string;
		/** The result's text parts joined, exactly as recorded. */
		text: string;
		isError: boolean;
		/** The tool cut its output (Pi's read: `details.truncation.truncated`). */
		truncated?: boolean;
	};
	/** Delivered in full at least once and outside the running tool loop: may be reported. */
	settled: boolean;
}

export type StaleKind = "superseded" | "duplicate";

export interface StaleBlock {
	/** "result": the call's tool result; "input": the call's long argument values. */
	block: "result" | "input";
	/** The result entry for "result"; the assistant entry for "input". */
	entryId: string;
	/** The call's content index, for "input". */
	blockIndex?: number;
	toolCallId: string;
	kind: StaleKind;
	/** The later call that makes it stale. */
	byToolCallId: string;
	/** For the digest: `superseded by edit src/a.ts (call_7)`, `same as bash \`ls\` (call_9)`. */
	reason: string;
}

export interface StaleInput {
	/** Tool calls in branch order. */
	events: readonly ToolEvent[];
	/** The session's working directory (from its header), to match relative and absolute paths. */
	cwd?: string;
}

/** Every stale block of the branch, in branch order of the stale call (results before inputs). */
export function findStaleBlocks(input: StaleInput): StaleBlock[] {
	const events = input.events;
	const facts = events.map((e) => describe(e, input.cwd));
	const out: StaleBlock[] = [];
	for (let i = 0; i < events.length; i++) {
		const e = events[i] as ToolEvent;
		if (!e.settled) continue;
		const f = facts[i] as EventFacts;
		let resultBy: { j: number; kind: StaleKind } | undefined;
		let inputBy: number | undefined;
		// The newest later call that makes it stale is the one named.
		for (let j = events.length - 1; j > i; j--) {
			const later = events[j] as ToolEvent;
			const lf = facts[j] as EventFacts;
			if (resultBy === undefined && e.result !== undefined) {
				if (supersedesRead(f, lf) || supersedesFailure(e, f, later, lf)) resultBy = { j, kind: "superseded" };
				else if (duplicates(e, f, later, lf)) resultBy = { j, kind: "duplicate" };
			}
			if (inputBy === undefined && (supersedesWrite(f, lf) || supersedesFailure(e, f, later, lf))) inputBy = j;
			if (resultBy !== undefined && inputBy !== undefined) break;
		}
		if (resultBy !== undefined && e.result !== undefined) {
			out.push({
				block: "result",
				entryId: e.result.entryId,
				toolCallId: e.toolCallId,
				kind: resultBy.kind,
				byToolCallId: (events[resultBy.j] as ToolEvent).toolCallId,
				reason: reasonText(resultBy.kind, events[resultBy.j] as ToolEvent, facts[resultBy.j] as EventFacts),
			});
		}
		if (inputBy !== undefined) {
			out.push({
				block: "input",
				entryId: e.callEntryId,
				blockIndex: e.callBlockIndex,
				toolCallId: e.toolCallId,
				kind: "superseded",
				byToolCallId: (events[inputBy] as ToolEvent).toolCallId,
				reason: reasonText("superseded", events[inputBy] as ToolEvent, facts[inputBy] as EventFacts),
			});
		}
	}
	return out;
}

interface EventFacts {
	/** Normalized path the call names, if any. */
	path?: string;
	/** Path as the call wrote it (for the reason text). */
	shownPath?: string;
	command?: string;
	op: string;
	ok: boolean;
	/** A successful, untruncated `read` without offset or limit. */
	fullRead: boolean;
	/** Canonical JSON of the arguments (keys sorted), for "same arguments". */
	argsKey: string;
}

function describe(e: ToolEvent, cwd: string | undefined): EventFacts {
	const call = readCall({ toolCallId: e.toolCallId, name: e.toolName, args: e.args });
	const ok = e.result !== undefined && !e.result.isError;
	const args = isObject(e.args) ? e.args : {};
	const fullRead =
		ok &&
		e.toolName === "read" &&
		args.offset === undefined &&
		args.limit === undefined &&
		e.result?.truncated !== true;
	return {
		...(call.path !== undefined && { path: normalizePath(call.path, cwd), shownPath: call.path }),
		...(call.command !== undefined && { command: call.command }),
		op: call.op,
		ok,
		fullRead,
		argsKey: canonicalJson(e.args),
	};
}

/** A read of a file, once the file is read again in full or changed by a successful edit or write. */
function supersedesRead(f: EventFacts, later: EventFacts): boolean {
	if (f.op !== "read" || f.path === undefined || later.path !== f.path) return false;
	if (later.fullRead) return true;
	return later.ok && (later.op === "edit" || later.op === "write");
}

/** A write's input, once the file is read back or written again (successfully). */
function supersedesWrite(f: EventFacts, later: EventFacts): boolean {
	if (f.op !== "write" || f.path === undefined || later.path !== f.path || !later.ok) return false;
	return later.op === "read" || later.op === "write";
}

/** A failed call, once the same tool succeeds on the same path. */
function supersedesFailure(e: ToolEvent, f: EventFacts, later: ToolEvent, lf: EventFacts): boolean {
	if (e.result === undefined || !e.result.isError || f.path === undefined) return false;
	return later.toolName === e.toolName && lf.path === f.path && lf.ok;
}

/** Byte-identical result of the same tool with the same arguments. */
function duplicates(e: ToolEvent, f: EventFacts, later: ToolEvent, lf: EventFacts): boolean {
	if (e.result === undefined || later.result === undefined) return false;
	return later.toolName === e.toolName && lf.argsKey === f.argsKey && later.result.text === e.result.text;
}

const REASON_DETAIL_MAX = 60;

function reasonText(kind: StaleKind, by: ToolEvent, f: EventFacts): string {
	const detail = f.command !== undefined ? `\`${oneLine(f.command).replace(/`/g, "'")}\`` : f.shownPath;
	const what = detail === undefined ? by.toolName : `${by.toolName} ${detail}`;
	return `${kind === "duplicate" ? "same as" : "superseded by"} ${what} (${by.toolCallId})`;
}

function oneLine(text: string): string {
	return clip(text.replace(/\s+/g, " ").trim(), REASON_DETAIL_MAX);
}

/**
 * A path as a key: Pi's `@` prefix dropped, `.` and `..` segments and repeated slashes resolved,
 * relative paths joined to `cwd` when known. Lexical only: two names of one file (a symlink) stay
 * two keys, which can only miss a fold, never make a wrong one.
 */
export function normalizePath(path: string, cwd?: string): string {
	let p = path.trim();
	if (p.startsWith("@")) p = p.slice(1);
	const absolute = p.startsWith("/");
	const base = !absolute && cwd !== undefined && cwd.startsWith("/") ? cwd : "";
	const parts: string[] = [];
	for (const seg of `${base}/${p}`.split("/")) {
		if (seg === "" || seg === ".") continue;
		if (seg === "..") {
			if (parts.length > 0 && parts[parts.length - 1] !== "..") parts.pop();
			else if (!absolute && base === "") parts.push("..");
			continue;
		}
		parts.push(seg);
	}
	return absolute || base !== "" ? `/${parts.join("/")}` : parts.join("/");
}

/** JSON with object keys sorted, so `{a,b}` and `{b,a}` are the same arguments. */
function canonicalJson(v: unknown): string {
	if (Array.isArray(v)) return `[${v.map(canonicalJson).join(",")}]`;
	if (isObject(v)) {
		return `{${Object.keys(v)
			.sort()
			.map((k) => `${JSON.stringify(k)}:${canonicalJson(v[k])}`)
			.join(",")}}`;
	}
	return JSON.stringify(v) ?? "null";
}

function isObject(v: unknown): v is Record<string, unknown> {
	return typeof v === "object" && v !== null && !Array.isArray(v);
}
