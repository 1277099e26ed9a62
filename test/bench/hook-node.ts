/**
 * Runs the hook benchmark under Node 22 (node_modules/.bin/node, the npm `node` package the README's
 * setup installs), as Pi would run the extension, and returns its result. Node strips the types of
 * the TypeScript sources itself (--experimental-transform-types); --expose-gc gives the no-GC pass
 * its collections.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { HookBenchResult } from "./hook.ts";

export function runHookOnNode(log: (line: string) => void): HookBenchResult {
	const node = join(process.cwd(), "node_modules", ".bin", "node");
	if (!existsSync(node)) throw new Error(`${node} not found: run npm install (the node package provides Node 22)`);
	log(`  running on ${node} (Node 22, as Pi runs extensions) ...`);
	const run = spawnSync(
		node,
		["--experimental-transform-types", "--expose-gc", "--no-warnings", join("test", "bench", "hook-main.ts")],
		{ encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], maxBuffer: 64 * 1024 * 1024 },
	);
	for (const line of run.stderr.split("\n")) if (line.length > 0) log(line);
	if (run.status !== 0) throw new Error(`the hook benchmark failed on Node (exit ${run.status})`);
	return JSON.parse(run.stdout) as HookBenchResult;
}
