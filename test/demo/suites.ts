/**
 * ledgerline's test suites: generated test files, and vitest's output for a run over them. A failure
 * names a real test at a real line of a real file, so the agent can read the file vitest points at.
 */
import type { Seeded } from "./seeded.ts";

export interface TestCase {
	name: string;
	expected: string;
	/** 1-based line and column of the `.toBe(` that checks it, in the rendered file. */
	line: number;
	col: number;
}

export interface Suite {
	path: string;
	describes: Array<{ name: string; tests: TestCase[] }>;
	text: string;
	ms: number;
}

const ITS = [
	"returns zero for an empty input",
	"keeps line order",
	"rejects negative amounts",
	"rounds half-even for EUR invoices",
	"rounds half-even for GBP invoices",
	"handles mixed tax rates",
	"ignores archived lines when skipArchived is set",
	"is idempotent",
	"matches the legacy 2.x fixtures",
	"respects options.scale",
	"supports zero-decimal currencies (JPY)",
	"carries the currency through",
	"sums 10k lines without drift",
	"treats missing optional lines as empty",
	"skips non-billable lines",
	"reports the number of lines",
	"rejects mismatched currencies",
	"works in dryRun mode",
	"splits a charge across two periods",
	"prorates a mid-cycle upgrade",
	"handles leap years",
	"never credits more than the open balance",
];

/** A unit-test file over `functions` of the module at `modulePath`, `perDescribe` tests each. */
export function generateSuite(
	r: Seeded,
	path: string,
	modulePath: string,
	functions: readonly string[],
	perDescribe: [number, number],
): Suite {
	const lines = [
		`import { describe, expect, it } from "vitest";`,
		`import { fixture } from "../../../test/fixtures";`,
		`import { ${functions.join(", ")} } from "${modulePath}";`,
		"",
	];
	const describes: Suite["describes"] = [];
	for (const fn of functions) {
		const tests: TestCase[] = [];
		const pool = [...ITS];
		lines.push(`describe("${fn}", () => {`);
		const n = r.int(perDescribe[0], perDescribe[1]);
		for (let i = 0; i < n && pool.length > 0; i++) {
			const name = pool.splice(r.int(0, pool.length - 1), 1)[0] as string;
			const expected = `${r.int(0, 480)}.${String(r.int(0, 99)).padStart(2, "0")}`;
			const slug = name.replace(/[^a-z0-9]+/gi, "-").toLowerCase();
			lines.push(`\tit("${name}", () => {`);
			lines.push(`\t\tconst result = ${fn}(fixture("${slug}"));`, "");
			const check = `\t\texpect(result.amount?.toString()).toBe("${expected}");`;
			lines.push(check);
			tests.push({ name, expected, line: lines.length, col: check.indexOf(".toBe(") + 2 });
			lines.push("\t});", "");
		}
		lines.push("});", "");
		describes.push({ name: fn, tests });
	}
	return { path, describes, text: lines.join("\n"), ms: r.int(9, 140) };
}

/** One failing test in a run: its suite, `describe > it` name, the short reason and the full report. */
export interface Failure {
	suite: string;
	test: string;
	reason: string;
	body: string[];
}

/** vitest's report for an assertion that failed at a test's `.toBe(`, with the code frame. */
export function assertionFailure(suite: Suite, describe: string, test: string, received: string): Failure {
	const found = suite.describes.find((d) => d.name === describe)?.tests.find((t) => t.name === test);
	if (!found) throw new Error(`demo session: no test ${describe} > ${test} in ${suite.path}`);
	const reason = `expected '${received}' to be '${found.expected}' // Object.is equality`;
	const src = suite.text.split("\n");
	const frame: string[] = [];
	for (let n = found.line - 2; n <= found.line + 2; n++) {
		frame.push(`    ${String(n).padStart(3)}| ${(src[n - 1] ?? "").replace(/\t/g, "  ")}`);
		if (n === found.line) {
			const lead = (src[n - 1] ?? "").slice(0, found.col - 1).replace(/\t/g, "  ").length;
			frame.push(`       | ${" ".repeat(lead)}^`);
		}
	}
	const body = [
		`AssertionError: ${reason}`,
		"",
		"- Expected",
		"+ Received",
		"",
		`- ${found.expected}`,
		`+ ${received}`,
		"",
		` ❯ ${suite.path}:${found.line}:${found.col}`,
		...frame,
	];
	return { suite: suite.path, test: `${describe} > ${test}`, reason, body };
}

export interface RunOptions {
	suites: readonly Suite[];
	failures: readonly Failure[];
	/** List every test, not just the files (`--reporter=verbose`). */
	verbose: boolean;
	/** Printed between the RUN line and the results (global setup output). */
	preamble?: string;
	/** `Start at` of the summary, e.g. "09:14:22". */
	startAt: string;
	r: Seeded;
}

/** vitest 2's output for one run, without colours (as it prints when stdout is not a terminal). */
export function vitestOutput(o: RunOptions): string {
	const out = [" RUN  v2.1.9 /home/dev/ledgerline", ""];
	if (o.preamble) out.push(o.preamble);
	const failedIn = (path: string) => o.failures.filter((f) => f.suite === path);
	let total = 0;
	let failedFiles = 0;
	for (const s of o.suites) {
		const count = s.describes.reduce((n, d) => n + d.tests.length, 0);
		total += count;
		const fails = failedIn(s.path);
		if (fails.length > 0) failedFiles++;
		const mark = fails.length > 0 ? "❯" : "✓";
		const note = fails.length > 0 ? `(${count} tests | ${fails.length} failed)` : `(${count} tests)`;
		out.push(` ${mark} ${s.path} ${note} ${s.ms}ms`);
		for (const d of s.describes) {
			for (const t of d.tests) {
				const name = `${d.name} > ${t.name}`;
				const fail = fails.find((f) => f.test === name);
				if (fail) out.push(`   × ${name} ${o.r.int(1, 30)}ms`, `     → ${fail.reason}`);
				else if (o.verbose) out.push(`   ✓ ${name} ${o.r.int(0, 9)}ms`);
			}
		}
	}
	const bar = "⎯".repeat(8);
	if (o.failures.length > 0) {
		out.push("", `${bar} Failed Tests ${o.failures.length} ${bar}`, "");
		o.failures.forEach((f, i) => {
			out.push(` FAIL  ${f.suite} > ${f.test}`, ...f.body, "", `${"⎯".repeat(48)}[${i + 1}/${o.failures.length}]⎯`, "");
		});
	}
	const files = o.suites.length;
	const fileLine =
		failedFiles > 0 ? `${failedFiles} failed | ${files - failedFiles} passed (${files})` : `${files} passed (${files})`;
	const testLine =
		o.failures.length > 0
			? `${o.failures.length} failed | ${total - o.failures.length} passed (${total})`
			: `${total} passed (${total})`;
	out.push(
		"",
		` Test Files  ${fileLine}`,
		`      Tests  ${testLine}`,
		`   Start at  ${o.startAt}`,
		`   Duration  ${(o.r.int(2400, 6900) / 1000).toFixed(2)}s (transform ${o.r.int(300, 900)}ms, setup 0ms, collect ${(o.r.int(1200, 3100) / 1000).toFixed(2)}s, tests ${(o.r.int(600, 2400) / 1000).toFixed(2)}s, environment 2ms, prepare ${(o.r.int(900, 2200) / 1000).toFixed(2)}s)`,
		"",
	);
	return out.join("\n");
}
