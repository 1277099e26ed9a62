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
 * planner's. A request's view is turned into tool events by stale-in-view.ts.
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
	/**
	 * Where facts about the call itself (its path, op, canonical arguments) may be kept between
	 * calls: the core's view of the call, which lives as long as its message is in view. Optional.
	 */
	memo?: { memo?: unknown };
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

/**
 * Every stale block of the branch, in branch order of the stale call (results before inputs).
 * Calls are grouped by path and by (tool, result length), so each call is compared only with the
 * later calls that could make it stale, never with the whole branch.
 */
export function findStaleBlocks(input: StaleInput): StaleBlock[] {
	const events = input.events;
	const facts = events.map((e) => describe(e, input.cwd));
	const byPath = new Map<string, number[]>();
	const byOutput = new Map<string, number[]>();
	for (let i = 0; i < events.length; i++) {
		const e = events[i] as ToolEvent;
		const path = (facts[i] as EventFacts).call.path;
		if (path !== undefined) push(byPath, path, i);
		if (e.result !== undefined) push(byOutput, `${e.toolName}\u0000${e.result.text.length}`, i);
	}
	const out: StaleBlock[] = [];
	for (let i = 0; i < events.length; i++) {
		const e = events[i] as ToolEvent;
		if (!e.settled) continue;
		const f = facts[i] as EventFacts;
		// The newest later call that makes it stale is the one named.
		let supersededBy: number | undefined;
		let inputBy: number | undefined;
		const samePath = f.call.path === undefined ? undefined : byPath.get(f.call.path);
		for (let k = (samePath?.length ?? 0) - 1; k >= 0; k--) {
			const j = (samePath as number[])[k] as number;
			if (j <= i) break;
			const later = events[j] as ToolEvent;
			const lf = facts[j] as EventFacts;
			const failure = supersedesFailure(e, later, lf);
			if (supersededBy === undefined && e.result !== undefined && (supersedesRead(f, lf) || failure)) supersededBy = j;
			if (inputBy === undefined && (supersedesWrite(f, lf) || failure)) inputBy = j;
			if ((supersededBy !== undefined || e.result === undefined) && inputBy !== undefined) break;
		}
		let duplicateBy: number | undefined;
		const sameOutput = e.result === undefined ? undefined : byOutput.get(`${e.toolName}\u0000${e.result.text.length}`);
		for (let k = (sameOutput?.length ?? 0) - 1; k >= 0; k--) {
			const j = (sameOutput as number[])[k] as number;
			// A superseding call at least as new wins: no older duplicate can be named.
			if (j <= i || (supersededBy !== undefined && j <= supersededBy)) break;
			if (duplicates(e, f, events[j] as ToolEvent, facts[j] as EventFacts)) {
				duplicateBy = j;
				break;
			}
		}
		const resultBy =
			duplicateBy !== undefined
				? { j: duplicateBy, kind: "duplicate" as const }
				: supersededBy !== undefined
					? { j: supersededBy, kind: "superseded" as const }
					: undefined;
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

function push(map: Map<string, number[]>, key: string, i: number): void {
	const list = map.get(key);
	if (list === undefined) map.set(key, [i]);
	else list.push(i);
}

/** What the rules read of a call itself, independent of its result: memoized on the event's holder. */
interface CallFacts {
	cwd: string | undefined;
	/** Normalized path the call names, if any. */
	path?: string;
	/** Path as the call wrote it (for the reason text). */
	shownPath?: string;
	command?: string;
	op: string;
	/** A `read` without offset or limit. */
	wholeRead: boolean;
	/** Canonical JSON of the arguments (keys sorted), for "same arguments"; computed when first needed. */
	argsKey?: string;
}

interface EventFacts {
	call: CallFacts;
	ok: boolean;
	/** A successful, untruncated `read` without offset or limit. */
	fullRead: boolean;
}

function describe(e: ToolEvent, cwd: string | undefined): EventFacts {
	const ok = e.result !== undefined && !e.result.isError;
	const call = callFacts(e, cwd);
	return { call, ok, fullRead: ok && call.wholeRead && e.result?.truncated !== true };
}

function callFacts(e: ToolEvent, cwd: string | undefined): CallFacts {
	const held = e.memo?.memo as CallFacts | undefined;
	if (held !== undefined && held.cwd === cwd) return held;
	const call = readCall({ toolCallId: e.toolCallId, name: e.toolName, args: e.args });
	const args = isObject(e.args) ? e.args : {};
	const facts: CallFacts = {
		cwd,
		...(call.path !== undefined && { path: normalizePath(call.path, cwd), shownPath: call.path }),
		...(call.command !== undefined && { command: call.command }),
		op: call.op,
		wholeRead: e.toolName === "read" && args.offset === undefined && args.limit === undefined,
	};
	if (e.memo !== undefined) e.memo.memo = facts;
	return facts;
}

function argsKeyOf(e: ToolEvent, f: EventFacts): string {
	f.call.argsKey ??= canonicalJson(e.args);
	return f.call.argsKey;
}

/** A read of a file, once the file is read again in full or changed by a successful edit or write. */
function supersedesRead(f: EventFacts, later: EventFacts): boolean {
	if (f.call.op !== "read" || f.call.path === undefined || later.call.path !== f.call.path) return false;
	if (later.fullRead) return true;
	return later.ok && (later.call.op === "edit" || later.call.op === "write");
}

/** A write's input, once the file is read back or written again (successfully). */
function supersedesWrite(f: EventFacts, later: EventFacts): boolean {
	if (f.call.op !== "write" || f.call.path === undefined || later.call.path !== f.call.path || !later.ok) return false;
	return later.call.op === "read" || later.call.op === "write";
}

/** A failed call, once the same tool succeeds on the same path (the caller matched the paths). */
function supersedesFailure(e: ToolEvent, later: ToolEvent, lf: EventFacts): boolean {
	if (e.result === undefined || !e.result.isError) return false;
	return later.toolName === e.toolName && lf.ok;
}

/** Byte-identical result of the same tool with the same arguments. */
function duplicates(e: ToolEvent, f: EventFacts, later: ToolEvent, lf: EventFacts): boolean {
	if (e.result === undefined || later.result === undefined) return false;
	return (
		later.toolName === e.toolName && later.result.text === e.result.text && argsKeyOf(later, lf) === argsKeyOf(e, f)
	);
}

const REASON_DETAIL_MAX = 60;

function reasonText(kind: StaleKind, by: ToolEvent, f: EventFacts): string {
	const detail = f.call.command !== undefined ? `\`${oneLine(f.call.command).replace(/`/g, "'")}\`` : f.call.shownPath;
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
