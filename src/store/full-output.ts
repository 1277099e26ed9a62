/**
 * Where recall's line numbers come from: the full output file a tool recorded (Pi's bash keeps only
 * the tail of a long output in the block), read exactly and only if it is still the regular file
 * bash wrote, else the folded block's own text, said so.
 */
import { closeSync, constants, fstatSync, openSync, readFileSync } from "node:fs";
import { isAbsolute } from "node:path";
import { echoArg, escapeControls } from "../core/recall.ts";
import type { RecalledBlock } from "./recall.ts";

/** A full-output file larger than this is not read for recall. */
export const MAX_FULL_OUTPUT_BYTES = 256 * 1024 * 1024;

export interface LineSource {
	/** The text whose lines are numbered. */
	body: string;
	source: RecalledBlock["source"];
	/** Said after an answer's header: which file the line numbers are from, or why not the full one. */
	note: string;
}

export const BLOCK: Pick<LineSource, "source"> = { source: { type: "block" } };

/**
 * One numbering for grep, lines= and search: the full output file the tool wrote when it is still
 * there (Pi's bash keeps only the tail in the block), else the folded block's own text, said so.
 */
export function sourceOf(original: { text: string; fullOutputPath?: string }): LineSource {
	const path = original.fullOutputPath;
	if (path === undefined) return { body: original.text, ...BLOCK, note: "" };
	const full = readFullOutput(path);
	if (full.ok)
		return {
			body: full.text,
			source: { type: "full-output", path },
			note: ` (from the full output file ${escapeControls(path)})`,
		};
	return {
		body: original.text,
		...BLOCK,
		note: ` (from the folded text only: ${full.message}, so lines dropped by truncation are gone)`,
	};
}

type FullRead = { ok: true; text: string } | { ok: false; message: string };

/**
 * Read exactly the recorded full-output file, if it still exists and is a regular file of sane size.
 * The path must be absolute (Pi records it so; a relative one would be read from wherever the reader
 * runs) and must not be a symlink: bash writes a regular file in the temp directory, and a link
 * planted there later (or the file swapped for one) would make recall read some other file. Opened
 * with O_NOFOLLOW and checked on the open descriptor, so nothing can be swapped in between.
 */
function readFullOutput(path: string): FullRead {
	if (!isAbsolute(path) || path.includes("\0"))
		return { ok: false, message: `the recorded full output path ${echoArg(path)} is not an absolute path` };
	const shown = escapeControls(path);
	let fd: number | undefined;
	try {
		fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
		const st = fstatSync(fd);
		if (!st.isFile()) return { ok: false, message: `${shown} is not a regular file` };
		if (st.size > MAX_FULL_OUTPUT_BYTES)
			return { ok: false, message: `${shown} is larger than ${MAX_FULL_OUTPUT_BYTES} bytes` };
		return { ok: true, text: readFileSync(fd, "utf8") };
	} catch (error) {
		const code = (error as NodeJS.ErrnoException).code;
		if (code === "ENOENT") return { ok: false, message: `the full output file ${shown} no longer exists` };
		if (code === "ELOOP" || code === "EMLINK")
			return { ok: false, message: `${shown} is a symbolic link now, not the file bash wrote; it is not followed` };
		return { ok: false, message: `the full output file ${shown} could not be read (${code ?? "error"})` };
	} finally {
		if (fd !== undefined) closeSync(fd);
	}
}
