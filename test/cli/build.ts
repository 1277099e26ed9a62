// The built CLI artifacts for process-level tests: rebuilt when missing or older than the source
// (npm test builds first anyway).
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { REPO } from "./helpers.ts";

function newest(dir: string): number {
	let t = 0;
	for (const name of readdirSync(dir)) {
		const p = join(dir, name);
		const st = statSync(p);
		t = Math.max(t, st.isDirectory() ? newest(p) : st.mtimeMs);
	}
	return t;
}

export function ensureCli(): { binary: string; nodeCli: string } {
	const binary = join(REPO, "dist/context-fold");
	const nodeCli = join(REPO, "dist/cli.js");
	const source = Math.max(
		newest(join(REPO, "src")),
		newest(join(REPO, "bin")),
		statSync(join(REPO, "package.json")).mtimeMs,
	);
	const stale = (p: string) => !existsSync(p) || statSync(p).mtimeMs < source;
	if (stale(binary) || stale(nodeCli)) {
		execFileSync(join(REPO, "node_modules/.bin/bun"), ["scripts/build.ts"], { cwd: REPO, stdio: "pipe" });
	}
	return { binary, nodeCli };
}
