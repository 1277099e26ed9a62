/**
 * Seed-index extraction throughput on the real traces (test/fixtures/traces, decompressed): simulated
 * fold events every 40 tool results plus every compaction record, timed against a plain read of the
 * same (decompressed) bytes in the same run.
 */
import { readFileSync, statSync } from "node:fs";
import { basename } from "node:path";
import { extractSeedRecord } from "../../src/core/seed/extract.ts";
import { COMPACTED, compactionInputs, LARGE, readTrace, simulateFolds } from "../core/seed/trace.ts";

export interface SeedBenchRow {
	trace: string;
	bytes: number;
	records: number;
	charsExtracted: number;
	extractMs: number;
	readMs: number;
	mbPerSec: number;
	ratioToRead: number;
}

export interface SeedBenchResult {
	rows: SeedBenchRow[];
}

function best(runs: number, f: () => void): number {
	let min = Number.POSITIVE_INFINITY;
	for (let i = 0; i < runs; i++) {
		const t = performance.now();
		f();
		min = Math.min(min, performance.now() - t);
	}
	return min;
}

export function runSeedBench(): SeedBenchResult {
	const rows: SeedBenchRow[] = [];
	for (const path of [LARGE, COMPACTED]) {
		const trace = readTrace(path);
		const inputs = [...simulateFolds(trace, 40, true), ...compactionInputs(trace)];
		let chars = 0;
		for (const input of inputs) for (const m of input.messages) for (const b of m.blocks) chars += b.text.length;
		const extractMs = best(5, () => {
			for (const input of inputs) extractSeedRecord(input);
		});
		const readMs = best(5, () => {
			readFileSync(path);
		});
		const bytes = statSync(path).size;
		rows.push({
			trace: basename(path),
			bytes,
			records: inputs.length,
			charsExtracted: chars,
			extractMs,
			readMs,
			mbPerSec: chars / 1e6 / (extractMs / 1000),
			ratioToRead: extractMs / readMs,
		});
	}
	return { rows };
}

export function renderSeedReport(r: SeedBenchResult): string {
	const lines = [
		"## seed index extraction (real traces; best of 5)",
		"trace                                     file MB  records  chars extracted  extract ms  MB/s   read ms  x read",
	];
	for (const row of r.rows) {
		lines.push(
			`${row.trace.padEnd(41)} ${(row.bytes / 1e6).toFixed(2).padStart(7)}  ${String(row.records).padStart(7)}  ${String(row.charsExtracted).padStart(15)}  ${row.extractMs.toFixed(1).padStart(10)}  ${row.mbPerSec.toFixed(1).padStart(5)}  ${row.readMs.toFixed(2).padStart(7)}  ${row.ratioToRead.toFixed(0).padStart(5)}x`,
		);
	}
	lines.push("Extraction runs once per fold event, after the request has gone out; it is not on the request path.");
	return lines.join("\n");
}

if (import.meta.main) console.log(renderSeedReport(runSeedBench()));
