/**
 * `<agentDir>/context-fold.json`: read it, apply field edits, write it back atomically.
 * The file belongs to the person as much as to us, so an edit keeps every field it does not touch
 * (unknown ones included) and a file we cannot parse is never replaced: the edit is refused instead.
 * Plain I/O; validating values is the core's job (core/settings.ts).
 */
import { randomBytes } from "node:crypto";
import {
	closeSync,
	fchmodSync,
	fsyncSync,
	mkdirSync,
	openSync,
	realpathSync,
	renameSync,
	rmSync,
	writeSync,
} from "node:fs";
import { basename, dirname, join } from "node:path";
import { isRecord } from "../core/values.ts";
import { readBoundedFile } from "./regular-file.ts";

/** The `v` field written into the file. A file claiming a newer format is never rewritten by this one. */
export const SETTINGS_FILE_VERSION = 1;

export type SettingsFileRead =
	| { status: "missing" }
	| { status: "ok"; data: Record<string, unknown> }
	/** Present but not something an edit may safely rewrite; `message` says why and names the path. */
	| { status: "invalid"; message: string }
	| { status: "unreadable"; message: string };

/** Set `path` to `value`, or remove it when `value` is undefined. Paths are keys, not dotted strings: provider ids may contain dots. */
export interface FieldEdit {
	path: readonly string[];
	value?: unknown;
}

export type PatchResult = { ok: true; data: Record<string, unknown>; path: string } | { ok: false; message: string };

/** A settings file larger than this is reported and ignored: settings are a few hundred bytes. */
export const MAX_SETTINGS_BYTES = 1024 * 1024;

/**
 * The one reader of `context-fold.json`, for loading settings, the settings menu and edits alike.
 * Read only when it is a regular file (a FIFO or /dev/zero in its place would stall Pi at start) and
 * at most MAX_SETTINGS_BYTES. A number too large for a double (`1e400`) is kept as written, so a
 * warning can quote it and an edit of another field writes it back unchanged.
 */
export function readSettingsJson(path: string): SettingsFileRead {
	const read = readBoundedFile(path, MAX_SETTINGS_BYTES);
	if (read.status === "missing") return { status: "missing" };
	if (read.status === "refused") {
		const why = read.why.startsWith("larger than")
			? `is larger than ${MAX_SETTINGS_BYTES / 1024 / 1024} MiB`
			: `is ${read.why}`;
		return {
			status: "unreadable",
			message: /^[A-Z0-9]+$/.test(read.why) ? `cannot read ${path} (${read.why})` : `${path} ${why}`,
		};
	}
	let data: unknown;
	try {
		data = parseKeepingNumbers(read.text);
	} catch (error) {
		return { status: "invalid", message: `${path} is not valid JSON (${(error as Error).message})` };
	}
	if (!isRecord(data)) return { status: "invalid", message: `${path} is not a JSON object` };
	return { status: "ok", data };
}

/** readSettingsJson, and refused for editing when it claims a format this version does not know. */
export function readSettingsFile(path: string): SettingsFileRead {
	const read = readSettingsJson(path);
	if (read.status !== "ok" || !Object.hasOwn(read.data, "v")) return read;
	const v = read.data.v;
	if (typeof v !== "number" || !Number.isInteger(v) || v < 1) {
		return { status: "invalid", message: `${path}: "v" is ${JSON.stringify(v)}; expected a format version number` };
	}
	if (v > SETTINGS_FILE_VERSION) {
		// Written by a newer context-fold: rewriting it with our understanding could drop what it meant.
		return {
			status: "invalid",
			message: `${path} has format v${v}, newer than this context-fold understands (v${SETTINGS_FILE_VERSION})`,
		};
	}
	return read;
}

/** JSON.rawJSON and the reviver's source text (ES2025; Node 22 and Bun have both). */
const RawJson = JSON as unknown as { rawJSON?: (text: string) => unknown };

/** JSON.parse, except that a number that overflows a double stays the text it was written as. */
function parseKeepingNumbers(text: string): unknown {
	return JSON.parse(text, (_key, value: unknown, context?: { source?: string }) =>
		typeof value === "number" && !Number.isFinite(value) && context?.source !== undefined && RawJson.rawJSON
			? RawJson.rawJSON(context.source)
			: value,
	);
}

/**
 * Apply edits to a copy of `data`. Removing the last key of a nested object removes the object too,
 * so "back to default" leaves no empty husk behind. A non-object where an object is needed is refused
 * (naming the field) rather than replaced.
 */
export function applyEdits(
	data: Readonly<Record<string, unknown>>,
	edits: readonly FieldEdit[],
): { ok: true; data: Record<string, unknown> } | { ok: false; field: string } {
	// A copy through JSON: numbers kept as written (1e400) survive it, which structuredClone refuses.
	const out = parseKeepingNumbers(JSON.stringify(data)) as Record<string, unknown>;
	for (const edit of edits) {
		const leaf = edit.path.at(-1);
		if (leaf === undefined) continue;
		const chain: Array<{ obj: Record<string, unknown>; key: string }> = [];
		let obj: Record<string, unknown> | undefined = out;
		for (const [i, key] of edit.path.slice(0, -1).entries()) {
			if (!Object.hasOwn(obj, key)) {
				if (edit.value === undefined) {
					// Removing under a parent that does not exist: nothing to do.
					obj = undefined;
					break;
				}
				setOwn(obj, key, {});
			} else if (!isRecord(obj[key])) {
				return { ok: false, field: edit.path.slice(0, i + 1).join(".") };
			}
			chain.push({ obj, key });
			obj = obj[key] as Record<string, unknown>;
		}
		if (obj === undefined) continue;
		if (edit.value !== undefined) {
			setOwn(obj, leaf, edit.value);
			continue;
		}
		if (!Object.hasOwn(obj, leaf)) continue;
		delete obj[leaf];
		for (const { obj: parent, key } of chain.reverse()) {
			if (Object.keys(parent[key] as Record<string, unknown>).length > 0) break;
			delete parent[key];
		}
	}
	return { ok: true, data: out };
}

/**
 * Read, edit, write. Refuses (and leaves the file byte for byte as it was) when the file exists but
 * cannot be read, is not a JSON object, claims a newer format, or an edit would have to replace a
 * non-object field.
 */
export function patchSettingsFile(path: string, edits: readonly FieldEdit[]): PatchResult {
	const current = readSettingsFile(path);
	if (current.status === "unreadable") return { ok: false, message: `${current.message}; nothing was saved.` };
	if (current.status === "invalid") {
		return { ok: false, message: `${current.message}; it was not changed and nothing was saved. Fix or remove it.` };
	}
	const base = current.status === "ok" ? current.data : {};
	const edited = applyEdits(base, edits);
	if (!edited.ok) {
		return {
			ok: false,
			message: `${path}: "${edited.field}" is not an object; it was not changed and nothing was saved. Fix or remove that field.`,
		};
	}
	const data = Object.hasOwn(edited.data, "v") ? edited.data : { v: SETTINGS_FILE_VERSION, ...edited.data };
	try {
		writeSettingsFile(path, data);
	} catch (error) {
		return { ok: false, message: `could not write ${path} (${(error as Error).message}); nothing was saved.` };
	}
	return { ok: true, data, path };
}

/**
 * Write atomically: a private temp file in the same directory, flushed, then renamed over the target,
 * so a crash leaves either the old file or the new one, never half of one. A symlinked settings file
 * (dotfile repositories) is written through, keeping the link. The file is 0600; a directory this
 * creates is 0700 (an existing agent directory is Pi's, and is left as it is).
 */
export function writeSettingsFile(path: string, data: Record<string, unknown>): void {
	let target = path;
	try {
		target = realpathSync(path);
	} catch {
		// Not there yet (or a dangling link): write at the path itself.
	}
	const dir = dirname(target);
	mkdirSync(dir, { recursive: true, mode: 0o700 });
	const tmp = join(dir, `.${basename(target)}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`);
	const fd = openSync(tmp, "wx", 0o600);
	try {
		try {
			// The mode given to open is masked by the umask; this one is exact.
			fchmodSync(fd, 0o600);
			writeSync(fd, `${JSON.stringify(data, null, 2)}\n`);
			fsyncSync(fd);
		} finally {
			closeSync(fd);
		}
		renameSync(tmp, target);
	} catch (error) {
		rmSync(tmp, { force: true });
		throw error;
	}
}

/** Defined, not assigned: a key such as "__proto__" must become data, not a prototype. */
function setOwn(obj: Record<string, unknown>, key: string, value: unknown): void {
	Object.defineProperty(obj, key, { value, writable: true, enumerable: true, configurable: true });
}
