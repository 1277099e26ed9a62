/**
 * The session ledger: Pi's append-only session .jsonl, read without ever writing to it.
 * Keeps an index of entry byte offsets and reads only what is new. Detects a rewritten file (Pi
 * migrates v1/v2 files in place on open, dropping bad lines) by size, inode, and a probe of bytes
 * at a known offset, and then rebuilds the index. The sha256 check at recall is the last guard.
 */
import { closeSync, fstatSync, readSync } from "node:fs";
import { lineOf } from "../core/lexicon.ts";
import { MAX_LINE_BYTES, openRegular } from "./regular-file.ts";

export interface EntryLocation {
	offset: number;
	length: number;
	/** 1-based line number in the file. */
	line: number;
}

export interface LedgerStats {
	entries: number;
	/** Lines that were not valid JSON objects: skipped and counted, never fatal. */
	malformed: number;
	/** Times the index was rebuilt because the file was rewritten. */
	rebuilds: number;
	bytesIndexed: number;
	/** A trailing line without a newline, not indexed yet (Pi may still be writing it). */
	pendingBytes: number;
	version: number | null;
	sessionId: string | null;
}

export class LedgerError extends Error {
	constructor(
		message: string,
		readonly code: "missing" | "unreadable",
	) {
		super(message);
	}
}

const CHUNK = 1 << 20;
const PROBE = 64;

export class Ledger {
	private readonly byId = new Map<string, EntryLocation>();
	private indexedEnd = 0;
	private lines = 0;
	private ino = -1;
	private probe: { offset: number; bytes: Buffer } | null = null;
	readonly stats: LedgerStats = {
		entries: 0,
		malformed: 0,
		rebuilds: 0,
		bytesIndexed: 0,
		pendingBytes: 0,
		version: null,
		sessionId: null,
	};
	/** Entries in file order, for readers that need every entry (status, the CLI). */
	private order: string[] = [];

	/** `maxLineBytes`: the longest line indexed (tests use small ones); longer lines are counted as malformed. */
	constructor(
		readonly path: string,
		private readonly maxLineBytes: number = MAX_LINE_BYTES,
	) {}

	/** Bring the index up to date with the file. Cheap when nothing changed. */
	refresh(): LedgerStats {
		let fd: number;
		try {
			fd = openRegular(this.path);
		} catch (error) {
			const code = (error as NodeJS.ErrnoException).code;
			if (code === "ENOENT") throw new LedgerError(`session file not found: ${this.path}`, "missing");
			if (code === "ENOTREG")
				throw new LedgerError(
					`the session file is not a regular file now (a FIFO, a device or a socket): ${this.path}`,
					"unreadable",
				);
			throw new LedgerError(`session file unreadable (${code ?? "error"}): ${this.path}`, "unreadable");
		}
		try {
			const st = fstatSync(fd);
			if (this.indexedEnd > 0 && (st.ino !== this.ino || st.size < this.indexedEnd || !this.probeMatches(fd))) {
				this.reset();
				this.stats.rebuilds++;
			}
			this.ino = st.ino;
			if (st.size > this.indexedEnd) this.scan(fd, st.size);
			this.stats.pendingBytes = st.size - this.indexedEnd;
			return this.stats;
		} finally {
			closeSync(fd);
		}
	}

	has(id: string): boolean {
		return this.byId.has(id);
	}

	location(id: string): EntryLocation | undefined {
		return this.byId.get(id);
	}

	ids(): readonly string[] {
		return this.order;
	}

	/**
	 * Ids (among `ids`) whose raw line matches `pattern` (which must be global). One pass over just
	 * the byte ranges of those lines, in large sequential chunks, with no JSON parsing: a prefilter
	 * for search, so only lines that can match are ever parsed and verified.
	 */
	matchingIds(ids: Iterable<string>, pattern: RegExp): Set<string> {
		const locs: Array<[string, EntryLocation]> = [];
		for (const id of ids) {
			const loc = this.byId.get(id);
			if (loc !== undefined) locs.push([id, loc]);
		}
		locs.sort((a, b) => a[1].offset - b[1].offset);
		const out = new Set<string>();
		if (locs.length === 0) return out;
		const fd = openRegular(this.path);
		try {
			let i = 0;
			while (i < locs.length) {
				const first = locs[i]?.[1] as EntryLocation;
				const lineToId = new Map<number, string>();
				let end = first.offset;
				while (i < locs.length) {
					const [id, loc] = locs[i] as [string, EntryLocation];
					if (loc.offset + loc.length - first.offset > SCAN_CHUNK && lineToId.size > 0) break;
					lineToId.set(loc.line - first.line, id);
					end = Math.max(end, loc.offset + loc.length);
					i++;
				}
				const buf = Buffer.allocUnsafe(end - first.offset);
				readFully(fd, buf, first.offset);
				const text = buf.toString("utf8");
				const starts = [0];
				for (let nl = text.indexOf("\n"); nl >= 0; nl = text.indexOf("\n", nl + 1)) starts.push(nl + 1);
				pattern.lastIndex = 0;
				for (;;) {
					const m = pattern.exec(text);
					if (m === null) break;
					const line = lineOf(starts, m.index);
					const id = lineToId.get(line);
					if (id !== undefined) out.add(id);
					pattern.lastIndex = line + 1 < starts.length ? (starts[line + 1] as number) : text.length;
					if (pattern.lastIndex >= text.length) break;
				}
			}
		} finally {
			closeSync(fd);
		}
		return out;
	}

	/** Read and parse one entry by id. Returns undefined when it is not in the file (or not parseable now). */
	read(id: string): Record<string, unknown> | undefined {
		const loc = this.byId.get(id);
		if (loc === undefined) return undefined;
		const fd = openRegular(this.path);
		try {
			const buf = Buffer.allocUnsafe(loc.length);
			readFully(fd, buf, loc.offset);
			const value = JSON.parse(buf.toString("utf8"));
			return typeof value === "object" && value !== null ? value : undefined;
		} catch {
			return undefined;
		} finally {
			closeSync(fd);
		}
	}

	private reset(): void {
		this.byId.clear();
		this.order = [];
		this.indexedEnd = 0;
		this.lines = 0;
		this.probe = null;
		Object.assign(this.stats, {
			entries: 0,
			malformed: 0,
			bytesIndexed: 0,
			pendingBytes: 0,
			version: null,
			sessionId: null,
		});
	}

	private probeMatches(fd: number): boolean {
		if (this.probe === null) return true;
		const buf = Buffer.alloc(this.probe.bytes.length);
		const n = readSync(fd, buf, 0, buf.length, this.probe.offset);
		return n === buf.length && buf.equals(this.probe.bytes);
	}

	private scan(fd: number, size: number): void {
		let pos = this.indexedEnd;
		/** File offset where the current line starts. */
		let lineStart = pos;
		const chunk = Buffer.allocUnsafe(CHUNK);
		scan: while (pos < size) {
			const n = readSync(fd, chunk, 0, Math.min(CHUNK, size - pos), pos);
			if (n <= 0) break;
			for (let nl = chunk.indexOf(10, 0); nl >= 0 && nl < n; nl = chunk.indexOf(10, nl + 1)) {
				const end = pos + nl;
				if (end - lineStart > this.maxLineBytes) {
					// Too long to decode: counted, never held (only its offsets were needed to step over it).
					this.lines++;
					this.stats.malformed++;
				} else if (lineStart >= pos) this.indexLine(chunk.subarray(lineStart - pos, nl), lineStart);
				else {
					// Began in an earlier chunk: read it again in one piece rather than keep the pieces.
					const whole = Buffer.allocUnsafe(end - lineStart);
					if (readSync(fd, whole, 0, whole.length, lineStart) !== whole.length) break scan; // cut short meanwhile
					this.indexLine(whole, lineStart);
				}
				lineStart = end + 1;
				this.indexedEnd = lineStart;
			}
			pos += n;
		}
		this.stats.bytesIndexed = this.indexedEnd;
	}

	private indexLine(bytes: Buffer, offset: number): void {
		this.lines++;
		let length = bytes.length;
		if (length > 0 && bytes[length - 1] === 13) length--;
		if (length === 0) return;
		let entry: unknown;
		try {
			entry = JSON.parse(bytes.toString("utf8", 0, length));
		} catch {
			this.stats.malformed++;
			return;
		}
		if (typeof entry !== "object" || entry === null || Array.isArray(entry)) {
			this.stats.malformed++;
			return;
		}
		const e = entry as Record<string, unknown>;
		if (e.type === "session") {
			this.stats.version = typeof e.version === "number" ? e.version : 1;
			this.stats.sessionId = typeof e.id === "string" ? e.id : null;
			this.remember(bytes, offset, length);
			return;
		}
		// v1 files carry no ids: entry order is the tree, so the line number is the identity.
		const id = typeof e.id === "string" ? e.id : `line:${this.lines}`;
		if (!this.byId.has(id)) this.order.push(id);
		this.byId.set(id, { offset, length, line: this.lines });
		this.stats.entries = this.byId.size;
		this.remember(bytes, offset, length);
	}

	private remember(bytes: Buffer, offset: number, length: number): void {
		// Re-reading these bytes later tells whether the file was rewritten under us.
		if (length < 8) return;
		this.probe = { offset, bytes: Buffer.from(bytes.subarray(0, Math.min(PROBE, length))) };
	}
}

/** Largest span read at once by matchingIds. */
const SCAN_CHUNK = 16 * 1024 * 1024;

function readFully(fd: number, buf: Buffer, position: number): void {
	let done = 0;
	while (done < buf.length) {
		const n = readSync(fd, buf, done, buf.length - done, position + done);
		if (n <= 0) throw new Error("unexpected end of file");
		done += n;
	}
}
