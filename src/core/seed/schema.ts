export const SEED_RECORD_TYPE = "seed-record";
/** Bumped on any incompatible change; the reader accepts every version from 1 up to this one. */
export const SEED_INDEX_VERSION = 1;

/** Per-field bounds: at most `items` entries, each at most `chars` UTF-16 code units. */
export const SEED_LIMITS = {
	files: { items: 60, chars: 240 },
	commands: { items: 40, chars: 400 },
	errors: { items: 40, chars: 240 },
	identifiers: { items: 60, chars: 64 },
	numbers: { items: 30, chars: 32 },
	userLines: { items: 20, chars: 300 },
	spans: { items: 512, chars: 120 },
} as const;

/** Bound on ids and anchors (entry ids, codes, tool names, error refs). */
export const SEED_ID_MAX_CHARS = 128;

export type SeedField = keyof typeof SEED_LIMITS;
export const SEED_FIELDS: readonly SeedField[] = [
	"files",
	"commands",
	"errors",
	"identifiers",
	"numbers",
	"userLines",
	"spans",
];

export type SeedKind = "fold" | "compaction";

/** How a file was touched, strongest first. */
export type FileOp = "write" | "edit" | "read" | "command" | "output";
export const FILE_OPS: readonly FileOp[] = ["write", "edit", "read", "command", "output"];

export interface SeedFile {
	path: string;
	/** Distinct ops in FILE_OPS order. */
	ops: FileOp[];
}

export interface SeedError {
	/** The risk line, trimmed. */
	text: string;
	/** Where it came from: the fold code, else `entryId:blockIndex`. Absent when unmapped. */
	ref?: string;
}

export type SpanKind = "toolResult" | "thinking" | "assistant" | "user" | "other";
export const SPAN_KINDS: readonly SpanKind[] = ["toolResult", "thinking", "assistant", "user", "other"];

/** Where an original lives in Pi's session file, how big it was, and the sha256 it had. */
export interface SeedSpan {
	/** Fold code (fold records only). */
	code?: string;
	entryId: string;
	blockIndex: number;
	kind: SpanKind;
	toolName?: string;
	/** The call that produced a tool result (command or path), redacted and clipped. */
	call?: string;
	/** A folded tool-call input: where the value sits in the call's arguments (kind "assistant"). */
	path?: Array<string | number>;
	sha256: string;
	chars: number;
	bytes: number;
	lines: number;
}

export interface SeedSource {
	/** Messages handed to the extractor. */
	messages: number;
	/** Blocks whose text was harvested. */
	blocks: number;
	/** Characters harvested (before redaction). */
	chars: number;
}

export type SeedOmitted = Record<SeedField, number>;

export interface SeedRecord {
	type: typeof SEED_RECORD_TYPE;
	v: number;
	kind: SeedKind;
	seq: number;
	/** Milliseconds since the epoch, supplied by the caller (the core has no clock). */
	at: number;
	source: SeedSource;
	files: SeedFile[];
	commands: string[];
	errors: SeedError[];
	identifiers: string[];
	numbers: string[];
	userLines: string[];
	spans: SeedSpan[];
	/** Secret mentions replaced by markers while building this record. */
	secrets: number;
	/** Items dropped by the per-field bounds. */
	omitted: SeedOmitted;
}

export function emptyOmitted(): SeedOmitted {
	return { files: 0, commands: 0, errors: 0, identifiers: 0, numbers: 0, userLines: 0, spans: 0 };
}

/** One JSON line (without its newline), keys in the spec's order whatever order the object has. */
export function serializeSeedRecord(r: SeedRecord): string {
	const canonical = {
		type: r.type,
		v: r.v,
		kind: r.kind,
		seq: r.seq,
		at: r.at,
		source: { messages: r.source.messages, blocks: r.source.blocks, chars: r.source.chars },
		files: r.files.map((f) => ({ path: f.path, ops: f.ops })),
		commands: r.commands,
		errors: r.errors.map((e) => (e.ref === undefined ? { text: e.text } : { text: e.text, ref: e.ref })),
		identifiers: r.identifiers,
		numbers: r.numbers,
		userLines: r.userLines,
		spans: r.spans.map(canonicalSpan),
		secrets: r.secrets,
		omitted: Object.fromEntries(SEED_FIELDS.map((f) => [f, r.omitted[f]])),
	};
	return JSON.stringify(canonical);
}

function canonicalSpan(s: SeedSpan): SeedSpan {
	return {
		...(s.code !== undefined && { code: s.code }),
		entryId: s.entryId,
		blockIndex: s.blockIndex,
		kind: s.kind,
		...(s.toolName !== undefined && { toolName: s.toolName }),
		...(s.call !== undefined && { call: s.call }),
		...(s.path !== undefined && { path: s.path }),
		sha256: s.sha256,
		chars: s.chars,
		bytes: s.bytes,
		lines: s.lines,
	};
}

export type Validation = { ok: true; record: SeedRecord } | { ok: false; error: string };

/**
 * Check an untrusted value (one parsed line) against the schema, bounds included. Unknown fields
 * are ignored and dropped, so a newer minor writer's additions do not make a record unreadable.
 */
export function validateSeedRecord(data: unknown): Validation {
	try {
		return { ok: true, record: readRecord(data) };
	} catch (e) {
		return { ok: false, error: e instanceof SchemaError ? e.message : "unreadable record" };
	}
}

class SchemaError extends Error {}

function fail(message: string): never {
	throw new SchemaError(message);
}

function readRecord(d: unknown): SeedRecord {
	const o = obj(d, "record");
	if (o.type !== SEED_RECORD_TYPE) fail(`type is not "${SEED_RECORD_TYPE}"`);
	const v = int(o.v, "v");
	if (v < 1 || v > SEED_INDEX_VERSION) fail(`unsupported version ${v}`);
	if (o.kind !== "fold" && o.kind !== "compaction") fail("kind is not fold or compaction");
	const src = obj(o.source, "source");
	const omittedIn = obj(o.omitted, "omitted");
	const omitted = emptyOmitted();
	for (const f of SEED_FIELDS) omitted[f] = int(omittedIn[f], `omitted.${f}`);
	return {
		type: SEED_RECORD_TYPE,
		v,
		kind: o.kind,
		seq: int(o.seq, "seq"),
		at: int(o.at, "at"),
		source: {
			messages: int(src.messages, "source.messages"),
			blocks: int(src.blocks, "source.blocks"),
			chars: int(src.chars, "source.chars"),
		},
		files: list(o.files, "files", (x) => {
			const f = obj(x, "file");
			const ops = list(f.ops, "file.ops", (op) => {
				if (!FILE_OPS.includes(op as FileOp)) fail(`unknown file op ${JSON.stringify(op)}`);
				return op as FileOp;
			});
			if (ops.length === 0 || new Set(ops).size !== ops.length) fail("file.ops is empty or repeats an op");
			return { path: str(f.path, "file.path", SEED_LIMITS.files.chars), ops };
		}),
		commands: list(o.commands, "commands", (x) => str(x, "command", SEED_LIMITS.commands.chars)),
		errors: list(o.errors, "errors", (x) => {
			const e = obj(x, "error");
			const text = str(e.text, "error.text", SEED_LIMITS.errors.chars);
			return e.ref === undefined ? { text } : { text, ref: str(e.ref, "error.ref", SEED_ID_MAX_CHARS) };
		}),
		identifiers: list(o.identifiers, "identifiers", (x) => str(x, "identifier", SEED_LIMITS.identifiers.chars)),
		numbers: list(o.numbers, "numbers", (x) => str(x, "number", SEED_LIMITS.numbers.chars)),
		userLines: list(o.userLines, "userLines", (x) => str(x, "userLine", SEED_LIMITS.userLines.chars)),
		spans: list(o.spans, "spans", readSpan),
		secrets: int(o.secrets, "secrets"),
		omitted,
	};
}

function readSpan(x: unknown): SeedSpan {
	const s = obj(x, "span");
	if (!SPAN_KINDS.includes(s.kind as SpanKind)) fail(`unknown span kind ${JSON.stringify(s.kind)}`);
	const sha = str(s.sha256, "span.sha256", 64);
	if (!/^[0-9a-f]{64}$/.test(sha)) fail("span.sha256 is not 64 lowercase hex digits");
	return canonicalSpan({
		...(s.code !== undefined && { code: str(s.code, "span.code", SEED_ID_MAX_CHARS) }),
		entryId: str(s.entryId, "span.entryId", SEED_ID_MAX_CHARS),
		blockIndex: int(s.blockIndex, "span.blockIndex"),
		kind: s.kind as SpanKind,
		...(s.toolName !== undefined && { toolName: str(s.toolName, "span.toolName", SEED_ID_MAX_CHARS) }),
		...(s.call !== undefined && { call: str(s.call, "span.call", SEED_LIMITS.spans.chars) }),
		...(s.path !== undefined && { path: readPath(s.path) }),
		sha256: sha,
		chars: int(s.chars, "span.chars"),
		bytes: int(s.bytes, "span.bytes"),
		lines: int(s.lines, "span.lines"),
	});
}

/** A span's argument path: at most SPAN_PATH_MAX_STEPS keys (each an id) and indices. */
function readPath(v: unknown): Array<string | number> {
	if (!Array.isArray(v) || v.length === 0 || v.length > SPAN_PATH_MAX_STEPS) fail("span.path is not a short array");
	return v.map((step) =>
		typeof step === "string" ? str(step, "span.path step", SEED_ID_MAX_CHARS) : int(step, "span.path step"),
	);
}

/** A span path longer than this is not recorded (the span stays, without it). */
export const SPAN_PATH_MAX_STEPS = 16;

/** The argument path a span may carry, or undefined when it exceeds the bounds. */
export function spanPath(path: readonly (string | number)[]): Array<string | number> | undefined {
	if (path.length === 0 || path.length > SPAN_PATH_MAX_STEPS) return undefined;
	if (path.some((s) => typeof s === "string" && s.length > SEED_ID_MAX_CHARS)) return undefined;
	return [...path];
}

function obj(v: unknown, what: string): Record<string, unknown> {
	if (typeof v !== "object" || v === null || Array.isArray(v)) fail(`${what} is not an object`);
	return v as Record<string, unknown>;
}

function int(v: unknown, what: string): number {
	if (typeof v !== "number" || !Number.isSafeInteger(v) || v < 0) fail(`${what} is not a non-negative integer`);
	return v;
}

function str(v: unknown, what: string, max: number): string {
	if (typeof v !== "string") fail(`${what} is not a string`);
	if (v.length > max) fail(`${what} is longer than ${max} characters`);
	return v;
}

function list<T>(v: unknown, field: string, item: (x: unknown) => T): T[] {
	if (!Array.isArray(v)) fail(`${field} is not an array`);
	const limit = (SEED_LIMITS as Record<string, { items: number } | undefined>)[field]?.items;
	if (limit !== undefined && v.length > limit) fail(`${field} has more than ${limit} items`);
	return v.map(item);
}
