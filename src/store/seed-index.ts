/**
 * The seed index on disk: <agentDir>/context-fold/<session-id>/seed-index.jsonl (one record per fold
 * event and per compaction, append-only) and the handoff seeds beside it. Files are created with
 * user-only permissions. Reading is tolerant: valid records are kept, the rest counted.
 */
import { appendFileSync, chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseSeedIndex, type SeedIndexRead } from "../core/seed/render.ts";
import { type SeedRecord, serializeSeedRecord } from "../core/seed/schema.ts";

export const SEED_INDEX_FILE = "seed-index.jsonl";

export class SeedIndexError extends Error {
	constructor(
		message: string,
		readonly code: string,
	) {
		super(message);
	}
}

function ensureDir(dir: string): void {
	try {
		mkdirSync(dir, { recursive: true, mode: 0o700 });
	} catch (error) {
		const code = (error as NodeJS.ErrnoException).code ?? "error";
		throw new SeedIndexError(`cannot create ${dir} (${code})`, code);
	}
}

export function seedIndexPath(dir: string): string {
	return join(dir, SEED_INDEX_FILE);
}

/** Append one record. Throws SeedIndexError with a clear message (read-only dir, full disk, …). */
export function appendSeedRecord(dir: string, record: SeedRecord): string {
	ensureDir(dir);
	const path = seedIndexPath(dir);
	try {
		const fresh = !existsSync(path);
		appendFileSync(path, `${serializeSeedRecord(record)}\n`, { mode: 0o600 });
		if (fresh) chmodSync(path, 0o600);
	} catch (error) {
		const code = (error as NodeJS.ErrnoException).code ?? "error";
		throw new SeedIndexError(`cannot write ${path} (${code})`, code);
	}
	return path;
}

/** Read every valid record; a missing file is an empty index. */
export function readSeedIndex(dir: string): SeedIndexRead & { path: string; missing: boolean } {
	const path = seedIndexPath(dir);
	let text: string;
	try {
		text = readFileSync(path, "utf8");
	} catch (error) {
		const code = (error as NodeJS.ErrnoException).code;
		if (code === "ENOENT") return { path, missing: true, records: [], invalid: 0, truncatedTail: false, problems: [] };
		throw new SeedIndexError(`cannot read ${path} (${code ?? "error"})`, code ?? "error");
	}
	return { path, missing: false, ...parseSeedIndex(text) };
}

/** File-name-safe UTC timestamp: 2026-11-29T14-30-05Z. */
export function fileStamp(ms: number): string {
	return new Date(ms)
		.toISOString()
		.replace(/\.\d{3}Z$/, "Z")
		.replace(/:/g, "-");
}

/** Write handoff-<timestamp>.md; never overwrites (a same-second second seed gets a suffix). */
export function writeHandoff(dir: string, text: string, ms: number): string {
	ensureDir(dir);
	const stamp = fileStamp(ms);
	for (let n = 0; n < 100; n++) {
		const path = join(dir, `handoff-${stamp}${n === 0 ? "" : `-${n}`}.md`);
		try {
			writeFileSync(path, text, { mode: 0o600, flag: "wx" });
			return path;
		} catch (error) {
			const code = (error as NodeJS.ErrnoException).code ?? "error";
			if (code === "EEXIST") continue;
			throw new SeedIndexError(`cannot write ${path} (${code})`, code);
		}
	}
	throw new SeedIndexError(`too many handoff seeds at ${stamp} in ${dir}`, "EEXIST");
}
