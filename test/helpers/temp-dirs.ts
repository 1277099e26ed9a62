/**
 * Private temp directories for a test file: `tempDirs("cf-x-")` registers their removal after each
 * test and returns a maker. Removal restores write bits first, so a test may leave a directory
 * read-only (see unprivileged.ts).
 */
import { afterEach } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { removeTree } from "./unprivileged.ts";

export function tempDirs(prefix: string): () => string {
	const made: string[] = [];
	afterEach(() => {
		for (const dir of made.splice(0)) removeTree(dir);
	});
	return () => {
		const dir = mkdtempSync(join(tmpdir(), prefix));
		made.push(dir);
		return dir;
	};
}
