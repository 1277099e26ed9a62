/**
 * The economics benchmark as a section of `npm run bench` (test/bench/run.ts): options come from the
 * environment (see options.ts), the report is markdown, written into docs/BENCHMARKS.md unfenced.
 */
import { type EconomicsResult, runEconomics } from "./bench.ts";
import { commandLine, parseOptions } from "./options.ts";
import { renderEconomicsReport } from "./report.ts";

export function runEconomicsBench(log: (line: string) => void): Promise<EconomicsResult> {
	const o = parseOptions([]);
	return runEconomics({ ...o, command: commandLine(), log });
}

export function renderEconomicsSection(result: EconomicsResult): string {
	return renderEconomicsReport(result);
}
