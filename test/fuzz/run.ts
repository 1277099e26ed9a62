/**
 * `npm run fuzz`: the long fuzz run. Every property of test/fuzz with larger sizes and many more
 * cases (over 1,000,000 in total by default), then a summary of the case counts per property.
 * Override with CF_FUZZ_RUNS (cases per cheap property), CF_FUZZ_SESSION_RUNS (random sessions)
 * and CF_FUZZ_SEED (replay one seed). The report is written to CF_FUZZ_REPORT.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const repo = join(import.meta.dir, "../..");
const reportPath = process.env.CF_FUZZ_REPORT ?? join(tmpdir(), "context-fold-fuzz-report.json");
rmSync(reportPath, { force: true });
const env = {
	...process.env,
	CF_FUZZ_RUNS: process.env.CF_FUZZ_RUNS ?? "150000",
	CF_FUZZ_SESSION_RUNS: process.env.CF_FUZZ_SESSION_RUNS ?? "2000",
	CF_FUZZ_SCALE: "large",
	CF_FUZZ_REPORT: reportPath,
};
const started = Date.now();
const run = spawnSync(join(repo, "node_modules/.bin/bun"), ["test", "test/fuzz", "--timeout", "7200000"], {
	cwd: repo,
	env,
	stdio: "inherit",
});
const seconds = Math.round((Date.now() - started) / 1000);
if (existsSync(reportPath)) {
	const report = JSON.parse(readFileSync(reportPath, "utf8")) as Record<string, Record<string, number>>;
	let total = 0;
	for (const [property, counts] of Object.entries(report)) {
		const cases = (counts.cases ?? 0) + (counts.sessions ?? 0) + (counts.digests ?? 0) + (counts.plans ?? 0);
		total += cases;
		console.log(`${property.padEnd(18)} ${String(cases).padStart(9)} cases  ${JSON.stringify(counts)}`);
	}
	console.log(
		`total ${total} cases in ${seconds} s (${run.status === 0 ? "all properties held" : "FAILED"}); report: ${reportPath}`,
	);
}
process.exit(run.status ?? 1);
