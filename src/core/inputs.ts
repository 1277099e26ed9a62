/**
 * Folded tool-call inputs: the long string values inside an assistant tool call's arguments, found
 * by path, and the same arguments with each of them replaced by a digest string. Every key stays,
 * short values stay verbatim, and an `edits` that came as a JSON string or a single object (Pi's
 * `edit` accepts both) keeps that form. The result is still an object of the same shape, which every
 * provider converter accepts (docs/pi-api-surface.md §13). Format: docs/DESIGN.md, "Folded tool-call
 * inputs". The digest strings and the fold of one call are input-digest.ts.
 */
import { isRecord } from "./values.ts";

/** Version of the folded-input digest format and of the stored input records (see DESIGN.md). */
export const INPUT_FORMAT_VERSION = 1;
/** A string value shorter than this stays verbatim: paths, flags, short commands. */
export const INPUT_MIN_CHARS = 512;
/** Keys whose string value may hold JSON that is walked into (Pi's `edit` tool accepts `edits` as a string). */
export const JSON_STRING_KEYS: ReadonlySet<string> = new Set(["edits"]);

/**
 * Where a value sits in the arguments: object keys (strings) and array indices (numbers), naming the
 * value as Pi's `edit` tool reads it. Under a key of JSON_STRING_KEYS (`edits`) the value is always
 * an array: given as a JSON string it is parsed, given as a single object that object is its only
 * element (index 0), which is how Pi prepares it. So `["edits", 0, "oldText"]` names the same value
 * whether the call carries `edits` as an array, as a JSON string or as one object. This matters
 * because Pi rewrites a JSON-string `edits` into an array in place on the live message once the call
 * has run, while the session file keeps the string (docs/pi-api-surface.md §13): a fold made on one
 * form still applies to, and is verified against, the other.
 */
export type ArgStep = string | number;
export type ArgPath = readonly ArgStep[];

export interface LongValue {
	path: ArgPath;
	value: string;
}

/** The long string values of a tool call's arguments, in key order (depth first). */
export function findLongValues(args: unknown, minChars: number = INPUT_MIN_CHARS): LongValue[] {
	const out: LongValue[] = [];
	walk(args, [], minChars, out, undefined);
	return out;
}

function walk(value: unknown, path: ArgStep[], minChars: number, out: LongValue[], key: string | undefined): void {
	const list = key !== undefined && JSON_STRING_KEYS.has(key) ? editList(value) : undefined;
	if (list !== undefined) {
		const inner: LongValue[] = [];
		for (let i = 0; i < list.items.length; i++) walk(list.items[i], [...path, i], minChars, inner, undefined);
		// Walk into a JSON string only when that is where the bulk is; otherwise it is just a long string.
		if (inner.length > 0 || !list.string) {
			out.push(...inner);
			return;
		}
	}
	if (typeof value === "string") {
		if (value.length >= minChars) out.push({ path, value });
		return;
	}
	if (Array.isArray(value)) {
		for (let i = 0; i < value.length; i++) walk(value[i], [...path, i], minChars, out, undefined);
		return;
	}
	if (isRecord(value)) {
		for (const k of Object.keys(value)) walk(value[k], [...path, k], minChars, out, k);
	}
}

/**
 * A value under a JSON_STRING_KEYS key as the list Pi's edit tool reads: the array itself, the array
 * or object a JSON string holds, or a single object as a one-element list. Undefined for anything else.
 */
interface EditList {
	items: readonly unknown[];
	/** It came as a JSON string (written back as one). */
	string: boolean;
	/** It came as a single object, not an array (written back as one). */
	single: boolean;
}

function editList(value: unknown): EditList | undefined {
	let v = value;
	const string = typeof v === "string";
	if (string) {
		v = parseJsonContainer(v as string);
		if (v === undefined) return undefined;
	}
	if (Array.isArray(v)) return { items: v, string, single: false };
	if (isRecord(v)) return { items: [v], string, single: true };
	return undefined;
}

/** A string holding a JSON array or object, parsed; undefined for anything else. */
function parseJsonContainer(text: string): unknown {
	const head = text.trimStart()[0];
	if (head !== "[" && head !== "{") return undefined;
	try {
		const parsed: unknown = JSON.parse(text);
		return typeof parsed === "object" && parsed !== null ? parsed : undefined;
	} catch {
		return undefined;
	}
}

/** The string at `path`, or undefined when the path does not lead to a string. */
export function valueAt(args: unknown, path: ArgPath): string | undefined {
	let current: unknown = args;
	let key: string | undefined;
	for (const step of path) {
		if (typeof step === "number") {
			const list = key !== undefined && JSON_STRING_KEYS.has(key) ? editList(current) : undefined;
			if (list !== undefined) current = list.items[step];
			else if (Array.isArray(current)) current = current[step];
			else return undefined;
			key = undefined;
		} else {
			if (!isRecord(current) || !Object.hasOwn(current, step)) return undefined;
			current = current[step];
			key = step;
		}
		if (current === undefined) return undefined;
	}
	return typeof current === "string" ? current : undefined;
}

export class FoldInputError extends Error {}

export interface InputReplacement {
	path: ArgPath;
	text: string;
}

/**
 * The arguments with each replacement's path set to its text. A copy: the input is never changed.
 * Keys keep their order; an `edits` that came as a JSON string (or a single object) is written back
 * in that form (a JSON string is serialized compact). Throws FoldInputError when a path does not lead
 * to a string, so a caller never sends arguments it did not mean to change.
 */
export function foldArguments(args: unknown, replacements: readonly InputReplacement[]): unknown {
	let result = args;
	for (const r of replacements) {
		if (valueAt(result, r.path) === undefined)
			throw new FoldInputError(`argument path ${renderPath(r.path)} does not hold a string`);
		result = setAt(result, r.path, 0, r.text, undefined);
	}
	return result;
}

function setAt(node: unknown, path: ArgPath, depth: number, text: string, key: string | undefined): unknown {
	if (depth === path.length) return text;
	const step = path[depth] as ArgStep;
	if (typeof step === "number") {
		const list = key !== undefined && JSON_STRING_KEYS.has(key) ? editList(node) : undefined;
		const items = (list?.items ?? (node as unknown[])).slice();
		items[step] = setAt(items[step], path, depth + 1, text, undefined);
		if (list === undefined) return items;
		const shaped = list.single ? items[0] : items;
		return list.string ? JSON.stringify(shaped) : shaped;
	}
	const copy: Record<string, unknown> = { ...(node as Record<string, unknown>) };
	// defineProperty, not assignment: a key named __proto__ must stay a plain key.
	Object.defineProperty(copy, step, {
		value: setAt(copy[step], path, depth + 1, text, step),
		enumerable: true,
		writable: true,
		configurable: true,
	});
	return copy;
}

/** A path for people: `edits[0].oldText`, `content`, `["odd key"]`. */
export function renderPath(path: ArgPath): string {
	let out = "";
	for (const step of path) {
		if (typeof step === "number") out += `[${step}]`;
		else if (/^[A-Za-z_$][\w$]*$/.test(step)) out += out.length === 0 ? step : `.${step}`;
		else out += `[${JSON.stringify(step)}]`;
	}
	return out.length === 0 ? "(arguments)" : out;
}

/** The stored form of a path (compact JSON), also its identity inside a code. */
export function pathKey(path: ArgPath): string {
	return JSON.stringify(path);
}

/** Validate a stored path: an array of strings and non-negative integers. Null when malformed. */
export function parsePath(value: unknown): ArgPath | null {
	if (!Array.isArray(value)) return null;
	for (const step of value) {
		if (typeof step === "string") continue;
		if (typeof step === "number" && Number.isInteger(step) && step >= 0) continue;
		return null;
	}
	return value as ArgPath;
}
