/**
 * Benchmark entry (`npm run bench`). Runs each section in order, prints its report, and with
 * `--json <path>` writes every section's results plus the machine facts for docs/BENCHMARKS.md.
 * Timing never fails the process; a section that measures nothing throws.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { availableParallelism, cpus } from "node:os";
import { relative } from "node:path";
import { renderHookReport, runHookBench } from "./hook.ts";
import { renderRecallReport, runRecallBench } from "./recall.ts";

interface Section {
	name: string;
	run(log: (line: string) => void): unknown;
	render(result: never): string;
}

/** Sections run in this order. Add new benchmarks here. */
const SECTIONS: Section[] = [
	{ name: "hook", run: runHookBench, render: renderHookReport },
	{ name: "recall", run: () => runRecallBench(), render: renderRecallReport },
];

function parseArgs(argv: readonly string[]): { json?: string } {
	const out: { json?: string } = {};
	for (let i = 0; i < argv.length; i++) {
		const arg = argv[i];
		if (arg === "--json") {
			const path = argv[++i];
			if (path === undefined) throw new Error("--json needs a path");
			out.json = path;
		} else if (arg?.startsWith("--json=")) {
			out.json = arg.slice("--json=".length);
		} else {
			throw new Error(`unknown argument: ${arg}`);
		}
	}
	return out;
}

function cpuModel(): string {
	try {
		const match = /^model name\s*:\s*(.+)$/m.exec(readFileSync("/proc/cpuinfo", "utf8"));
		if (match?.[1]) return match[1].trim();
	} catch {
		// Not Linux: fall back to what the runtime reports.
	}
	return cpus()[0]?.model ?? "unknown";
}

function machine() {
	return {
		cpu: cpuModel(),
		cores: availableParallelism(),
		bun: process.versions.bun ?? null,
		platform: `${process.platform} ${process.arch}`,
	};
}

function command(argv: readonly string[]): string {
	const script = process.argv[1] ? relative(process.cwd(), process.argv[1]) : "test/bench/run.ts";
	const runtime = process.versions.bun ? "bun" : "node";
	return [runtime, script, ...argv].join(" ");
}

const args = process.argv.slice(2);
const opts = parseArgs(args);
const facts = machine();
const cmd = command(args);
console.log("# context-fold benchmarks");
console.log(`command: ${cmd}`);
console.log(
	`machine: ${facts.cpu} · ${facts.cores} cores · Bun ${facts.bun ?? "(not Bun)"} · ${facts.platform} · ${new Date().toISOString()}`,
);
const results: Record<string, unknown> = {};
for (const section of SECTIONS) {
	console.log("");
	const result = section.run((line) => console.log(line));
	results[section.name] = result;
	console.log("");
	console.log(section.render(result as never));
}
if (opts.json !== undefined) {
	const doc = { generatedAt: new Date().toISOString(), command: cmd, machine: facts, sections: results };
	writeFileSync(opts.json, `${JSON.stringify(doc, null, 2)}\n`);
	console.log("");
	console.log(`wrote ${opts.json}`);
}
