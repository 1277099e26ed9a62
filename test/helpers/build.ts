/**
 * The built artifacts the process-level tests load (dist/index.js for Pi, dist/cli.js and the binary
 * for the CLI): rebuilt when missing or older than their sources; `npm test` builds first anyway.
 * `npm test` runs test files in parallel worker processes, so a rebuild holds a lock directory under
 * .tmp/: one worker builds, the others wait for it and then find the artifacts fresh, and none reads a
 * file another is rewriting.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const REPO = join(import.meta.dir, "../..");
const LOCK = join(REPO, ".tmp/build.lock");
/** A build takes seconds; a lock held this long is reported, not waited on forever. */
const LOCK_WAIT_MS = 300_000;

/** Newest modification time of a file, or of any file under a directory. */
function newest(path: string): number {
	const st = statSync(path);
	if (!st.isDirectory()) return st.mtimeMs;
	let t = 0;
	for (const name of readdirSync(path)) t = Math.max(t, newest(join(path, name)));
	return t;
}

function stale(artifacts: readonly string[], sources: readonly string[]): boolean {
	const source = Math.max(...sources.map((s) => newest(join(REPO, s))));
	return artifacts.some((a) => {
		const p = join(REPO, a);
		return !existsSync(p) || statSync(p).mtimeMs < source;
	});
}

function alive(pid: number): boolean {
	try {
		process.kill(pid, 0);
		return true;
	} catch (error) {
		return (error as NodeJS.ErrnoException).code === "EPERM";
	}
}

const pause = new Int32Array(new SharedArrayBuffer(4));

/** Takes the lock directory (waiting for a live holder, clearing a dead one's); returns its release. */
function lock(): () => void {
	mkdirSync(join(REPO, ".tmp"), { recursive: true });
	const deadline = Date.now() + LOCK_WAIT_MS;
	for (;;) {
		try {
			mkdirSync(LOCK);
			writeFileSync(join(LOCK, "pid"), String(process.pid));
			return () => rmSync(LOCK, { recursive: true, force: true });
		} catch (error) {
			if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
		}
		let holder = Number.NaN;
		try {
			holder = Number(readFileSync(join(LOCK, "pid"), "utf8"));
		} catch {
			// Just created, pid not written yet.
		}
		if (Number.isSafeInteger(holder) && holder > 0 && !alive(holder)) {
			rmSync(LOCK, { recursive: true, force: true });
			continue;
		}
		if (Date.now() > deadline) {
			throw new Error(
				`${LOCK} is still held (pid ${holder}) after ${LOCK_WAIT_MS} ms; remove it if no build is running`,
			);
		}
		Atomics.wait(pause, 0, 0, 100);
	}
}

/** Rebuilds (scripts/build.ts, every artifact) when any of `artifacts` is older than `sources`. */
function ensureBuilt(artifacts: readonly string[], sources: readonly string[]): void {
	if (!stale(artifacts, sources)) return;
	const release = lock();
	try {
		// Another worker may have built while this one waited.
		if (stale(artifacts, sources))
			execFileSync(join(REPO, "node_modules/.bin/bun"), ["scripts/build.ts"], { cwd: REPO, stdio: "pipe" });
	} finally {
		release();
	}
}

/** The extension bundle Pi loads; returns its path. */
export function ensureBundle(): string {
	ensureBuilt(["dist/index.js"], ["src"]);
	return join(REPO, "dist/index.js");
}

/** The compiled binary and the Node CLI. */
export function ensureCli(): { binary: string; nodeCli: string } {
	ensureBuilt(["dist/context-fold", "dist/cli.js"], ["src", "bin", "package.json"]);
	return { binary: join(REPO, "dist/context-fold"), nodeCli: join(REPO, "dist/cli.js") };
}
