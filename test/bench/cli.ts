/**
 * CLI benchmark: the compiled binary's cold start (`--version`) against `node -e 0`, and `status` and
 * `simulate` on the largest real trace, all measured in one run with the runs interleaved, so the
 * ratios hold on a busy machine even when the absolute times do not. Targets: cold start under 50 ms,
 * simulate of a ~500-request session under 1 s.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { billingModel } from "../../src/core/billing.ts";
import { DEFAULT_SETTINGS } from "../../src/core/settings.ts";
import { replaySession } from "../../src/core/simulate/replay.ts";
import { billReplay } from "../../src/core/simulate/summary.ts";
import { sha256 } from "../../src/store/hash.ts";
import { parseIsoTime, readSessionFile } from "../../src/store/session-file.ts";
import { NODE_BIN } from "../e2e/harness/pi-env.ts";
import { writeBigSession } from "../helpers/big-session.ts";
import { TRACE_FILES, tracePath } from "../helpers/traces.ts";

const REPO = join(import.meta.dir, "../..");
const BINARY = join(REPO, "dist/context-fold");
const NODE_CLI = join(REPO, "dist/cli.js");
const TRACE = tracePath(TRACE_FILES.compactV3);

export const TARGETS = { coldStartMs: 50, simulateMs: 1000 };

export type CliBenchResult =
	| { skipped: string }
	| {
			binaryBytes: number;
			runs: number;
			versionMs: number;
			nodeNoopMs: number;
			nodeCliVersionMs: number;
			coldStartRatio: number;
			trace: { file: string; bytes: number; requests: number };
			statusMs: number;
			simulateMs: number;
			simulateInProcessMs: number;
			statusToNoop: number;
			simulateToNoop: number;
			/** `node dist/cli.js status --json` on a generated session of more than 100 MB: medians of 3. */
			large: { bytes: number; entries: number; statusMs: number; statusPeakRss: number; recallPeakRss: number };
	  };

function timeOnce(cmd: string, args: string[]): number {
	const started = performance.now();
	const r = spawnSync(cmd, args, {
		stdio: ["ignore", "ignore", "pipe"],
		env: { PATH: process.env.PATH ?? "", HOME: "/nonexistent" },
	});
	const ms = performance.now() - started;
	if (r.status !== 0) throw new Error(`${cmd} ${args.join(" ")} exited ${r.status}: ${r.stderr}`);
	return ms;
}

function median(xs: number[]): number {
	const s = [...xs].sort((a, b) => a - b);
	return s[Math.floor(s.length / 2)] as number;
}

export function runCliBench(log: (line: string) => void = () => {}): CliBenchResult {
	if (!existsSync(BINARY)) return { skipped: "dist/context-fold is missing (npm run build makes it)" };
	const runs = 21;
	const version: number[] = [];
	const noop: number[] = [];
	const nodeCli: number[] = [];
	// Warm the page cache for every executable first; then interleave so load hits all alike.
	timeOnce(BINARY, ["--version"]);
	timeOnce(NODE_BIN, ["-e", "0"]);
	timeOnce(NODE_BIN, [NODE_CLI, "--version"]);
	for (let i = 0; i < runs; i++) {
		version.push(timeOnce(BINARY, ["--version"]));
		noop.push(timeOnce(NODE_BIN, ["-e", "0"]));
		nodeCli.push(timeOnce(NODE_BIN, [NODE_CLI, "--version"]));
	}
	log(`cli: --version ${median(version).toFixed(1)} ms, node -e 0 ${median(noop).toFixed(1)} ms`);
	const status: number[] = [];
	const simulate: number[] = [];
	const heavyNoop: number[] = [];
	for (let i = 0; i < 7; i++) {
		status.push(timeOnce(BINARY, ["status", "--json", TRACE]));
		simulate.push(timeOnce(BINARY, ["simulate", "--json", TRACE]));
		heavyNoop.push(timeOnce(NODE_BIN, ["-e", "0"]));
	}
	const inProcess: number[] = [];
	let requests = 0;
	for (let i = 0; i < 5; i++) {
		const started = performance.now();
		const file = readSessionFile(TRACE);
		const replay = replaySession({
			entries: file.branch,
			settings: DEFAULT_SETTINGS,
			windowFor: () => 200_000,
			hash: sha256,
			parseTime: parseIsoTime,
		});
		requests = billReplay(replay, billingModel("anthropic")).rows.length;
		inProcess.push(performance.now() - started);
	}
	log(
		`cli: status ${median(status).toFixed(0)} ms, simulate ${median(simulate).toFixed(0)} ms on ${requests} requests`,
	);
	const large = largeSession();
	log(
		`cli: status on ${(large.bytes / 1024 / 1024).toFixed(0)} MB: ${large.statusMs.toFixed(0)} ms, peak RSS ${(large.statusPeakRss / 1024 / 1024).toFixed(0)} MB`,
	);
	return {
		large,
		binaryBytes: statSync(BINARY).size,
		runs,
		versionMs: median(version),
		nodeNoopMs: median(noop),
		nodeCliVersionMs: median(nodeCli),
		coldStartRatio: median(version) / median(noop),
		trace: { file: TRACE_FILES.compactV3, bytes: statSync(TRACE).size, requests },
		statusMs: median(status),
		simulateMs: median(simulate),
		simulateInProcessMs: median(inProcess),
		statusToNoop: median(status) / median(heavyNoop),
		simulateToNoop: median(simulate) / median(heavyNoop),
	};
}

/** Time and peak RSS (VmHWM, read by the child at exit) of the Node CLI on a generated >100 MB session. */
function largeSession(): Extract<CliBenchResult, { large: unknown }>["large"] {
	const dir = mkdtempSync(join(tmpdir(), "cf-bench-big-"));
	try {
		const facts = writeBigSession(join(dir, "big.jsonl"));
		const preload = join(dir, "rss.cjs");
		const rssFile = join(dir, "rss.txt");
		writeFileSync(
			preload,
			'process.on("exit", () => { const fs = require("node:fs"); const m = /VmHWM:\\s+(\\d+) kB/.exec(fs.readFileSync("/proc/self/status", "utf8")); fs.writeFileSync(process.env.CF_RSS_FILE, String(m ? Number(m[1]) * 1024 : 0)); });\n',
		);
		const once = (args: string[]) => {
			const started = performance.now();
			const r = spawnSync(NODE_BIN, [NODE_CLI, ...args], {
				stdio: ["ignore", "ignore", "pipe"],
				env: {
					PATH: process.env.PATH ?? "",
					HOME: "/nonexistent",
					NODE_OPTIONS: `--require ${preload}`,
					CF_RSS_FILE: rssFile,
				},
			});
			const ms = performance.now() - started;
			if (r.status !== 0) throw new Error(`dist/cli.js ${args.join(" ")} exited ${r.status}: ${r.stderr}`);
			return { ms, rss: Number(readFileSync(rssFile, "utf8")) };
		};
		const status = [0, 1, 2].map(() => once(["status", "--json", facts.path]));
		const code = facts.folded[0]?.code as string;
		const recall = once(["recall", facts.path, code, "--lines", "1-1"]);
		return {
			bytes: facts.bytes,
			entries: facts.entries,
			statusMs: median(status.map((s) => s.ms)),
			statusPeakRss: median(status.map((s) => s.rss)),
			recallPeakRss: recall.rss,
		};
	} finally {
		rmSync(dir, { recursive: true, force: true });
	}
}

export function renderCliReport(r: CliBenchResult): string {
	if ("skipped" in r) return `CLI: skipped (${r.skipped})`;
	const ok = (v: number, target: number) =>
		v < target ? `under the ${target} ms target` : `OVER the ${target} ms target`;
	return [
		`CLI binary (dist/context-fold, ${(r.binaryBytes / 1024 / 1024).toFixed(1)} MB), medians of ${r.runs} interleaved runs:`,
		`  cold start, --version        ${r.versionMs.toFixed(1)} ms  = ${r.coldStartRatio.toFixed(2)} x node -e 0 (${r.nodeNoopMs.toFixed(1)} ms); ${ok(r.versionMs, TARGETS.coldStartMs)}`,
		`  node dist/cli.js --version   ${r.nodeCliVersionMs.toFixed(1)} ms  = ${(r.nodeCliVersionMs / r.nodeNoopMs).toFixed(2)} x node -e 0`,
		`On the largest trace (${r.trace.file}, ${(r.trace.bytes / 1024 / 1024).toFixed(1)} MB, ${r.trace.requests} requests), medians of 7:`,
		`  status --json                ${r.statusMs.toFixed(0)} ms  = ${r.statusToNoop.toFixed(1)} x node -e 0`,
		`  simulate --json              ${r.simulateMs.toFixed(0)} ms  = ${r.simulateToNoop.toFixed(1)} x node -e 0; ${ok(r.simulateMs, TARGETS.simulateMs)}`,
		`  simulate in process          ${r.simulateInProcessMs.toFixed(0)} ms  (read, replay through planFold, bill both arms)`,
		`On a generated ${(r.large.bytes / 1024 / 1024).toFixed(0)} MB session (${r.large.entries} entries, an abandoned branch, fold layers), node dist/cli.js, medians of 3:`,
		`  status --json                ${r.large.statusMs.toFixed(0)} ms, peak RSS ${(r.large.statusPeakRss / 1024 / 1024).toFixed(0)} MB (streamed in 1 MiB chunks; the replay holds the active branch)`,
		`  recall <code>                peak RSS ${(r.large.recallPeakRss / 1024 / 1024).toFixed(0)} MB (only the fold records are built)`,
	].join("\n");
}

/** The section entry for test/bench/run.ts: the result with its report, so the entry needs no import. */
export function runCliSection(log: (line: string) => void): CliBenchResult & { report: string } {
	const result = runCliBench(log);
	return { ...result, report: renderCliReport(result) };
}
