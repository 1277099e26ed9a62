/**
 * Benchmark entry (`npm run bench`). Runs each section in order, prints its report, and with
 * `--json <path>` writes every section's results plus the machine facts for docs/BENCHMARKS.md.
 * Timing never fails the process; a section that measures nothing throws.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { availableParallelism, cpus } from "node:os";
import { relative } from "node:path";
import { renderEconomicsSection, runEconomicsBench } from "./economics/section.ts";
import { renderHookReport } from "./hook.ts";
import { runHookOnNode } from "./hook-node.ts";
import { renderRecallReport, runRecallBench } from "./recall.ts";
import { renderSeedReport, runSeedBench } from "./seed.ts";

interface Section {
	name: string;
	run(log: (line: string) => void): unknown;
	render(result: never): string;
	/** The report is markdown: written into docs/BENCHMARKS.md as is, not in a text fence. */
	markdown?: boolean;
}

/** Sections run in this order. Add new benchmarks here. */
const SECTIONS: Section[] = [
	{ name: "hook", run: runHookOnNode, render: renderHookReport },
	{ name: "recall", run: () => runRecallBench(), render: renderRecallReport },
	{ name: "seed", run: () => runSeedBench(), render: renderSeedReport },
	{ name: "economics", run: runEconomicsBench, render: renderEconomicsSection, markdown: true },
	{
		name: "cli",
		run: async (log) => (await import("./cli.ts")).runCliSection(log),
		render: (r: { report: string }) => r.report,
	},
];

function parseArgs(argv: readonly string[]): { json?: string; docs?: string; only?: string[] } {
	const out: { json?: string; docs?: string; only?: string[] } = {};
	for (let i = 0; i < argv.length; i++) {
		const arg = argv[i];
		if (arg === "--docs") {
			const path = argv[++i];
			if (path === undefined) throw new Error("--docs needs a path");
			out.docs = path;
		} else if (arg === "--json") {
			const path = argv[++i];
			if (path === undefined) throw new Error("--json needs a path");
			out.json = path;
		} else if (arg === "--only") {
			const names = argv[++i];
			if (names === undefined) throw new Error("--only needs section names, comma-separated");
			out.only = names.split(",").filter((n) => n.length > 0);
			const unknown = out.only.filter((n) => !SECTIONS.some((x) => x.name === n));
			if (unknown.length > 0 || out.only.length === 0)
				throw new Error(
					`--only: unknown section ${unknown.join(", ") || "(none given)"}; sections: ${SECTIONS.map((x) => x.name).join(", ")}`,
				);
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

const READING_START = "<!-- reading: written by hand, kept across runs -->";
const READING_END = "<!-- /reading -->";

const sectionStart = (name: string) => `<!-- section ${name} -->`;
const sectionEnd = (name: string) => `<!-- /section ${name} -->`;

/** A section as docs/BENCHMARKS.md holds it: between its markers, with the time it was measured. */
function sectionText(name: string, text: string, markdown: boolean, measured: string): string {
	return [
		sectionStart(name),
		`*Measured ${measured}.*`,
		"",
		...(markdown ? [text] : ["```text", text, "```"]),
		sectionEnd(name),
	].join("\n");
}

/** The section as the old file holds it (markers included), or null. */
function oldSection(old: string, name: string): string | null {
	const a = old.indexOf(sectionStart(name));
	const b = old.indexOf(sectionEnd(name));
	return a >= 0 && b > a ? old.slice(a, b + sectionEnd(name).length) : null;
}

/**
 * docs/BENCHMARKS.md is generated: the header and every section's report come from a run. Only the
 * text between the reading markers is written by hand, and it is carried over from the old file, as
 * are the sections a run with --only did not measure (each says when it was measured).
 */
function renderDocs(
	path: string,
	cmd: string,
	facts: ReturnType<typeof machine>,
	sections: ReadonlyArray<{ name: string; text: string | null; markdown: boolean }>,
): string {
	let reading = "(No reading written yet.)";
	let old = "";
	try {
		old = readFileSync(path, "utf8");
		const a = old.indexOf(READING_START);
		const b = old.indexOf(READING_END);
		if (a >= 0 && b > a) reading = old.slice(a + READING_START.length, b).trim();
	} catch {
		// First run: no old file.
	}
	const now = new Date().toISOString();
	const body = sections.map((s) => {
		if (s.text !== null) return sectionText(s.name, s.text, s.markdown, now);
		const kept = oldSection(old, s.name);
		if (kept === null) throw new Error(`${path} has no ${s.name} section to keep: run the whole benchmark once`);
		return kept;
	});
	return [
		"# Benchmarks",
		"",
		"Generated by `npm run bench`; do not edit by hand except the reading below. Each section says when",
		"it was measured (`npm run bench -- --only NAME` re-measures one and keeps the others).",
		"",
		`- command: \`${cmd}\``,
		`- machine: ${facts.cpu}, ${facts.cores} cores, Bun ${facts.bun ?? "n/a"}, ${facts.platform}`,
		`- date: ${now}`,
		"",
		"## Reading",
		"",
		READING_START,
		reading,
		READING_END,
		"",
		...body.flatMap((t) => [t, ""]),
	].join("\n");
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
const reports: Array<{ name: string; text: string | null; markdown: boolean }> = [];
for (const section of SECTIONS) {
	if (opts.only !== undefined && !opts.only.includes(section.name)) {
		reports.push({ name: section.name, text: null, markdown: section.markdown === true });
		continue;
	}
	console.log("");
	const result = await section.run((line) => console.log(line));
	results[section.name] = result;
	const report = section.render(result as never);
	reports.push({ name: section.name, text: report, markdown: section.markdown === true });
	console.log("");
	console.log(report);
}
if (opts.docs !== undefined) {
	writeFileSync(opts.docs, renderDocs(opts.docs, cmd, facts, reports));
	console.log("");
	console.log(`wrote ${opts.docs}`);
}
if (opts.json !== undefined) {
	const doc = { generatedAt: new Date().toISOString(), command: cmd, machine: facts, sections: results };
	writeFileSync(opts.json, `${JSON.stringify(doc, null, 2)}\n`);
	console.log("");
	console.log(`wrote ${opts.json}`);
}
