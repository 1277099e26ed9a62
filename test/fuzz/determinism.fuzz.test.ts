/**
 * The plan is deterministic across runtimes: the same seeded workload (random sessions through the
 * hook, random digests, random plans) hashes to the same bytes under Bun and under the Node that Pi
 * runs on (node_modules/.bin/node, running an esbuild bundle of the same sources).
 */
import { afterAll, describe, expect, test } from "bun:test";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LARGE, RUNS, report, TIMEOUT } from "./config.ts";
import { determinismDigest } from "./determinism.ts";

const REPO = join(import.meta.dir, "../..");
const dir = mkdtempSync(join(tmpdir(), "cf-fuzz-det-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Sessions are the expensive part; texts and plans run at the full case count. */
const SESSIONS = LARGE ? 500 : Math.max(200, Math.floor(RUNS / 10));
const TEXTS = RUNS;
const SEED = Number(process.env.CF_FUZZ_SEED || 20_261_129);

describe("fuzz: determinism across runtimes", () => {
	test(
		"Bun and Node produce byte-identical plans, digests and outgoing requests for the same seeded workload",
		() => {
			const bundle = join(dir, "determinism.mjs");
			execFileSync(
				join(REPO, "node_modules/.bin/esbuild"),
				[
					join(REPO, "test/fuzz/determinism-main.ts"),
					"--bundle",
					"--platform=node",
					"--format=esm",
					`--outfile=${bundle}`,
					"--log-level=error",
				],
				{ cwd: REPO },
			);
			const node = JSON.parse(
				execFileSync(join(REPO, "node_modules/.bin/node"), [bundle, String(SEED), String(SESSIONS), String(TEXTS)], {
					encoding: "utf8",
					maxBuffer: 1 << 20,
				}),
			);
			const bun = determinismDigest(SEED, SESSIONS, TEXTS);
			report("determinism", { sessions: SESSIONS, digests: TEXTS, plans: TEXTS });
			console.log(`[fuzz] determinism: bun ${bun.outputs.slice(0, 16)} node ${String(node.outputs).slice(0, 16)}`);
			expect(node.inputs).toBe(bun.inputs);
			expect(node.outputs).toBe(bun.outputs);
		},
		TIMEOUT,
	);
});
