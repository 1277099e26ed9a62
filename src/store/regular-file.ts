/**
 * Opening files that are not ours to trust. A path that should hold a regular file may hold a FIFO,
 * a device (/dev/zero, /dev/urandom) or a socket: opening a FIFO for reading blocks until a writer
 * comes, and reading a device never ends. Every file the extension and the CLI read goes through
 * here: opened without blocking, checked on the open descriptor, and refused unless it is a regular
 * file, so nothing can be swapped in between the check and the read.
 */
import { closeSync, constants, fstatSync, openSync, readSync } from "node:fs";

/**
 * The longest session line decoded (the CLI's reader and the ledger): 512 MiB less 64 KiB, just under
 * the longest string the engine can make (2^29 - 24 UTF-16 units in V8). A longer line is skipped and
 * counted like any unreadable line, holding no more than one chunk; before, it crashed the CLI.
 */
export const MAX_LINE_BYTES = (1 << 29) - (1 << 16);

/** Thrown like a Node errno error, so callers handle it with ENOENT and the rest. */
export class NotRegularFileError extends Error {
	readonly code: "ENOTREG" | "EISDIR";
	constructor(
		readonly path: string,
		directory: boolean,
	) {
		super(directory ? `${path} is a directory` : `${path} is not a regular file (a FIFO, a device or a socket)`);
		this.code = directory ? "EISDIR" : "ENOTREG";
	}
}

/** An open descriptor of a regular file at `path`; throws ENOENT and the like, or NotRegularFileError. */
export function openRegular(path: string): number {
	const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
	try {
		const st = fstatSync(fd);
		if (!st.isFile()) throw new NotRegularFileError(path, st.isDirectory());
		return fd;
	} catch (error) {
		closeSync(fd);
		throw error;
	}
}

export type BoundedRead =
	| { status: "ok"; text: string }
	| { status: "missing" }
	/** Not a regular file, too large, or unreadable: `why` says which ("not a regular file", "larger than N bytes", or an errno code). */
	| { status: "refused"; why: string };

/**
 * A whole small file as UTF-8, if it is a regular file of at most `maxBytes`. Reads at most one byte
 * more than that, so a file that grows meanwhile (or lies about its size) cannot make it unbounded.
 */
export function readBoundedFile(path: string, maxBytes: number): BoundedRead {
	let fd: number;
	try {
		fd = openRegular(path);
	} catch (error) {
		const code = (error as NodeJS.ErrnoException).code;
		if (code === "ENOENT") return { status: "missing" };
		if (error instanceof NotRegularFileError)
			return { status: "refused", why: error.code === "EISDIR" ? "EISDIR" : "not a regular file" };
		return { status: "refused", why: code ?? (error as Error).message };
	}
	try {
		const chunk = Buffer.allocUnsafe(64 * 1024);
		const chunks: Buffer[] = [];
		let total = 0;
		for (;;) {
			const n = readSync(fd, chunk, 0, Math.min(chunk.length, maxBytes + 1 - total), null);
			if (n <= 0) break;
			chunks.push(Buffer.from(chunk.subarray(0, n)));
			total += n;
			if (total > maxBytes) return { status: "refused", why: `larger than ${maxBytes} bytes` };
		}
		return { status: "ok", text: Buffer.concat(chunks, total).toString("utf8") };
	} catch (error) {
		return { status: "refused", why: (error as NodeJS.ErrnoException).code ?? (error as Error).message };
	} finally {
		closeSync(fd);
	}
}
