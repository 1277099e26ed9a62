/**
 * Recall benchmark: search over a synthetic 100 MB session with 5,000 folded blocks, cold (fresh
 * ledger index) and warm (index built, file in the page cache), as ratios to one sequential read
 * of the same file measured in the same run.
 */
import { createHash } from "node:crypto";
import { closeSync, mkdtempSync, openSync, readSync, rmSync, statSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { addRecord, emptyIndex, type MaskedBlock, type MaskIndex } from "../../src/core/layers.ts";
import { Ledger } from "../../src/store/ledger.ts";
import { answerRecall } from "../../src/store/recall.ts";

export interface RecallBenchResult {
	fileBytes: number;
	blocks: number;
	sequentialReadMs: number;
	indexColdMs: number;
	searchColdMs: number;
	searchWarmMs: { p50: number; max: number; runs: number };
	recallOneWarmMs: number;
	matches: string;
}

const sha = (t: string) => createHash("sha256").update(t, "utf8").digest("hex");

/** Deterministic pseudo-random words, so every block is different and compresses like real logs. */
function blockText(i: number, targetChars: number): string {
	const lines: string[] = [];
	let n = 0;
	let x = (i + 1) * 2654435761;
	while (n < targetChars) {
		x = (x * 1103515245 + 12345) >>> 0;
		const line = `[${i}:${lines.length}] ${x.toString(36)} compiling module_${x % 977} in ${x % 4099}ms ok`;
		lines.push(line);
		n += line.length + 1;
	}
	if (i === 4321) lines.splice(17, 0, "FATAL needle-7c1e: connection reset by peer");
	return lines.join("\n");
}

export function writeSession(dir: string, blocks: number, blockChars: number): { path: string; index: MaskIndex } {
	const path = join(dir, "big.jsonl");
	const fd = openSync(path, "w");
	const masked: MaskedBlock[] = [];
	try {
		writeSync(
			fd,
			`${JSON.stringify({ type: "session", version: 3, id: "bench", timestamp: "2025-01-01T00:00:00Z", cwd: "/bench" })}\n`,
		);
		let parent: string | null = null;
		for (let i = 0; i < blocks; i++) {
			const aid = `a${i.toString(16).padStart(7, "0")}`;
			const rid = `r${i.toString(16).padStart(7, "0")}`;
			const text = blockText(i, blockChars);
			writeSync(
				fd,
				`${JSON.stringify({ type: "message", id: aid, parentId: parent, timestamp: "2025-01-01T00:00:00Z", message: { role: "assistant", content: [{ type: "toolCall", id: `c${i}`, name: "bash", arguments: { command: `make step-${i}` } }], usage: { input: 10, output: 5, cacheRead: 100, cacheWrite: 0 }, stopReason: "toolUse", timestamp: i * 2 } })}\n`,
			);
			writeSync(
				fd,
				`${JSON.stringify({ type: "message", id: rid, parentId: aid, timestamp: "2025-01-01T00:00:00Z", message: { role: "toolResult", toolCallId: `c${i}`, toolName: "bash", content: [{ type: "text", text }], isError: false, timestamp: i * 2 + 1 } })}\n`,
			);
			parent = rid;
			masked.push({
				code: sha(`context-fold:${rid}:0`).slice(0, 8),
				entryId: rid,
				blockIndex: 0,
				kind: "toolResult",
				toolName: "bash",
				sha256: sha(text),
				chars: text.length,
				bytes: Buffer.byteLength(text),
				lines: text.split("\n").length,
				tokens: Math.ceil(text.length / 4),
				digest: "",
			});
		}
	} finally {
		closeSync(fd);
	}
	const index = emptyIndex();
	for (let s = 0; s < masked.length; s += 250) {
		addRecord(index, {
			type: "layer",
			v: 1,
			seq: s / 250 + 1,
			reason: "step",
			lastResponseAt: 0,
			usageBefore: 0,
			usageAfter: 0,
			blocks: masked.slice(s, s + 250),
		});
	}
	return { path, index };
}

function sequentialRead(path: string): number {
	const t = performance.now();
	const fd = openSync(path, "r");
	const buf = Buffer.allocUnsafe(1 << 22);
	let total = 0;
	for (;;) {
		const n = readSync(fd, buf, 0, buf.length, null);
		if (n <= 0) break;
		total += n;
	}
	closeSync(fd);
	if (total !== statSync(path).size) throw new Error("short read");
	return performance.now() - t;
}

export function runRecallBench(
	opts: { blocks?: number; blockChars?: number; warmRuns?: number } = {},
): RecallBenchResult {
	const blocks = opts.blocks ?? 5000;
	const dir = mkdtempSync(join(tmpdir(), "cf-bench-recall-"));
	try {
		const { path, index } = writeSession(dir, blocks, opts.blockChars ?? 19_500);
		const fileBytes = statSync(path).size;
		sequentialRead(path); // page cache warm for every measurement below: "cold" means a cold index
		const sequentialReadMs = Math.min(sequentialRead(path), sequentialRead(path));
		const ledger = new Ledger(path);
		let t = performance.now();
		ledger.refresh();
		const indexColdMs = performance.now() - t;
		const fresh = new Ledger(path);
		t = performance.now();
		const cold = answerRecall({ search: "needle-7c1e", maxTokens: 4000 }, { index, ledger: fresh });
		const searchColdMs = performance.now() - t;
		if (!cold.text.includes("FATAL needle-7c1e")) throw new Error(`search found nothing: ${cold.text.slice(0, 200)}`);
		const warm: number[] = [];
		for (let i = 0; i < (opts.warmRuns ?? 7); i++) {
			t = performance.now();
			const a = answerRecall({ search: "NEEDLE-7C1E", maxTokens: 4000 }, { index, ledger: fresh });
			warm.push(performance.now() - t);
			if (!a.text.includes("FATAL needle-7c1e")) throw new Error("warm search found nothing");
		}
		warm.sort((a, b) => a - b);
		const code = [...index.byCode.keys()][4321] as string;
		t = performance.now();
		const one = answerRecall({ code, grep: "needle", maxTokens: 4000 }, { index, ledger: fresh });
		const recallOneWarmMs = performance.now() - t;
		if (!one.ok) throw new Error(one.text);
		return {
			fileBytes,
			blocks,
			sequentialReadMs,
			indexColdMs,
			searchColdMs,
			searchWarmMs: { p50: warm[Math.floor(warm.length / 2)] as number, max: warm.at(-1) as number, runs: warm.length },
			recallOneWarmMs,
			matches: cold.text.split("\n")[0] as string,
		};
	} finally {
		rmSync(dir, { recursive: true, force: true });
	}
}

export function renderRecallReport(r: RecallBenchResult): string {
	const ms = (n: number) => `${n.toFixed(1)} ms`;
	const x = (n: number) => `${(n / r.sequentialReadMs).toFixed(1)}x`;
	return [
		`## recall: search over ${(r.fileBytes / 1e6).toFixed(1)} MB, ${r.blocks.toLocaleString("en-US")} folded blocks`,
		`one sequential read of the file (page cache warm): ${ms(r.sequentialReadMs)}`,
		`ledger index, cold:                               ${ms(r.indexColdMs)}  (${x(r.indexColdMs)} the read)`,
		`search, cold (index + search):                    ${ms(r.searchColdMs)}  (${x(r.searchColdMs)} the read)`,
		`search, warm (p50 of ${r.searchWarmMs.runs}):                         ${ms(r.searchWarmMs.p50)}  (${x(r.searchWarmMs.p50)} the read; max ${ms(r.searchWarmMs.max)})`,
		`recall one code with grep, warm:                  ${ms(r.recallOneWarmMs)}`,
		`answer: ${r.matches}`,
		`target: warm search well under 200 ms: ${r.searchWarmMs.p50 < 200 ? "PASS" : "MISS"}`,
	].join("\n");
}

if (import.meta.main) console.log(renderRecallReport(runRecallBench()));
