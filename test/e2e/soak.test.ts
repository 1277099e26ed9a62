// Scale, through real Pi: a 2,000-request session with folding and deterministic compaction, where
// the extension's own counters (CONTEXTFOLD_DEBUG) show that what it holds grows with the number of
// entries and folded blocks (the documented index structures), never with the bytes it masked, and
// that the hook's time per request stays flat; and a session file over 100 MB that recall and status
// still serve. Too slow for the normal suite: `npm run soak` runs it (CF_SOAK=1). Set CF_SOAK_REPORT
// to a path to get the markdown section for docs/bench/soak.md; the last test checks that the report
// is complete and that its figures bear out what its text says before it writes it.
import { afterEach, beforeAll, describe, expect, test } from "bun:test";
import { createWriteStream, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { deriveCode, renderDigest, utf8Length } from "../../src/core/digest.ts";
import { FOLD_STATE_VERSION, type FrozenLayer, type MaskedBlock } from "../../src/core/layers.ts";
import { splitLines } from "../../src/core/lexicon.ts";
import { sha256 } from "../../src/store/hash.ts";
import { bigOutputCommand, dynamicSequence, ensureBundle, lastToolText } from "./cf.ts";
import {
	bash,
	expectSuccess,
	type PiVersion,
	type RecordedRequest,
	type Reply,
	runPrint,
	type Scenario,
	startRpc,
	startScenario,
	text,
	toolCall,
} from "./harness/index.ts";

const SOAK = process.env.CF_SOAK === "1";
const VERSIONS: PiVersion[] = process.env.CF_SOAK_ALL === "1" ? ["0.80.6", "1.6.0"] : ["1.6.0"];
const REQUESTS = Number(process.env.CF_SOAK_REQUESTS ?? 2000);
const PER_PROMPT = 100;
const TIMEOUT = 3_600_000;

let bundle = "";
beforeAll(() => {
	if (SOAK) bundle = ensureBundle();
});
const scenarios: Scenario[] = [];
afterEach(async () => {
	for (const s of scenarios.splice(0)) await s.dispose();
});

/** One row of a soak's table: the extension's counters at a request. */
interface SoakRow {
	request: number;
	blocks: number;
	digestChars: number;
	factChars: number;
	keys: number;
	views: number;
	ledgerEntries: number;
	/** Median hook time over the 100 requests before this one. */
	hookMs: number;
}

/** What one soak run reports. */
interface SoakRun {
	version: PiVersion;
	seconds: number;
	fileBytes: number;
	maskedChars: number;
	compactions: number;
	/** Compactions whose summary context-fold wrote (fromHook), with no model call. */
	deterministicCompactions: number;
	summaryRequests: number;
	/** The most messages any request carried. */
	widest: number;
	sessionEntries: number;
	rows: SoakRow[];
	held: number;
	blocks: number;
	digestChars: number;
	early: number;
	late: number;
}

/** What the 100 MB run reports. */
interface BigFileRun {
	version: PiVersion;
	size: number;
	results: number;
	recallSeconds: number;
	statusSeconds: number;
}

const soaks: SoakRun[] = [];
const bigFiles: BigFileRun[] = [];

interface DebugLine {
	req: number;
	hookMs: number;
	blocks: number;
	digestChars: number;
	factChars: number;
	facts: number;
	keys: number;
	rawRefs: number;
	views: number;
	events: number;
	ledgerEntries: number;
	ledgerBytes: number;
	masked: number;
}

function parseDebug(stderr: string): DebugLine[] {
	const out: DebugLine[] = [];
	for (const l of stderr.split("\n")) {
		if (!l.startsWith("[context-fold] req=")) continue;
		// The footprint follows " state: "; "blocks=" also appears earlier, for a new layer.
		const tail = l.slice(l.indexOf(" state: "));
		const n = (k: string, from = tail) => Number(new RegExp(`\\b${k}=([0-9.]+)`).exec(from)?.[1] ?? Number.NaN);
		out.push({
			req: n("req", l),
			hookMs: Number(/hook=([0-9.]+)ms/.exec(l)?.[1] ?? Number.NaN),
			blocks: n("blocks"),
			digestChars: n("digestChars"),
			factChars: n("factChars"),
			facts: n("facts"),
			keys: n("keys"),
			rawRefs: n("rawRefs"),
			views: n("views", l),
			events: n("events"),
			ledgerEntries: n("entries"),
			ledgerBytes: n("indexedBytes"),
			masked: n("masked", l),
		});
	}
	return out;
}

function median(xs: number[]): number {
	const s = [...xs].sort((a, b) => a - b);
	return s[Math.floor(s.length / 2)] ?? 0;
}

describe.skipIf(!SOAK)("soak (npm run soak)", () => {
	for (const version of VERSIONS) {
		test(
			`pi ${version}: ${REQUESTS} requests with folding and compaction: bounded extension memory, flat hook time`,
			async () => {
				// Prompts of PER_PROMPT requests each (a tool chain, then an answer), in one RPC session: Pi
				// 0.80.6 compacts only between runs, so one endless run would grow its context without bound.
				const replies: Reply[] = [];
				for (let i = 0; i < REQUESTS; i++) {
					if ((i + 1) % PER_PROMPT === 0) replies.push(text(`chunk ${i} done`));
					else replies.push(bash(bigOutputCommand(`k${i}`, 1500 + ((i * 7919) % 2000)), `call_k${i}`));
				}
				const s = await startScenario({
					fake: { script: dynamicSequence(replies) },
					model: { contextWindow: 60_000 },
					compaction: { enabled: true, reserveTokens: 8_000, keepRecentTokens: 8_000 },
					env: { CONTEXTFOLD_DEBUG: "1" },
				});
				scenarios.push(s);
				const started = performance.now();
				const rpc = await startRpc({ version, sandbox: s.sandbox, extensions: [bundle], timeoutMs: 600_000 });
				s.defer(() => rpc.close());
				for (let k = 0; k < REQUESTS / PER_PROMPT; k++) await rpc.promptAndWait(`soak ${k}`, { timeoutMs: 600_000 });
				await rpc.close();
				const r = { stderr: rpc.stderr() };
				const seconds = (performance.now() - started) / 1000;
				const turns = s.fake.requests.filter((q) => !q.isSummaryRequest);
				expect(turns).toHaveLength(REQUESTS);
				expect(s.fake.summaryRequests()).toHaveLength(0);
				const lines = parseDebug(r.stderr);
				// CF_SOAK_STDERR keeps Pi's stderr (one CONTEXTFOLD_DEBUG line per request) for a closer look.
				if (process.env.CF_SOAK_STDERR) writeFileSync(process.env.CF_SOAK_STDERR, r.stderr);
				expect(lines.length).toBe(REQUESTS);
				const last = lines.at(-1) as DebugLine;
				const file = s.sandbox.latestSessionFile();
				const fileBytes = statSync(file).size;
				const entries = s.sandbox.readSession(file);
				const maskedChars = entries
					.filter((e) => e.type === "message" && e.message?.role === "toolResult")
					.reduce((n, e) => n + JSON.stringify(e.message?.content).length, 0);
				const compactionEntries = entries.filter((e) => e.type === "compaction");
				const compactions = compactionEntries.length;
				// What the extension holds: digests and facts grow with folded blocks, each bounded, never
				// with the bytes folded; the view cache holds the current context only.
				const held = last.digestChars + last.factChars;
				expect(last.blocks).toBeGreaterThan(REQUESTS / 4);
				expect(last.digestChars / last.blocks).toBeLessThan(3_000);
				expect(held).toBeLessThan(maskedChars / 5);
				const widest = Math.max(...turns.map((q) => q.body.messages.length));
				expect(Math.max(...lines.map((l) => l.views))).toBeLessThanOrEqual(widest);
				expect(last.facts).toBeLessThan(200);
				// The ledger index: one small location per entry, whatever the entries weigh.
				expect(last.ledgerEntries).toBeLessThanOrEqual(entries.length);
				// Per-request hook time stays flat: the last stretch is not slower than the early one.
				const early = median(lines.slice(100, 300).map((l) => l.hookMs));
				const late = median(lines.slice(-200).map((l) => l.hookMs));
				expect(late).toBeLessThan(Math.max(early * 3, 2));
				const at = (k: number) => lines[Math.min(lines.length - 1, k - 1)] as DebugLine;
				const rows = [500, 1000, 1500, REQUESTS].map((k): SoakRow => {
					const x = at(k);
					const hookMs = median(lines.slice(Math.max(0, k - 100), k).map((l) => l.hookMs));
					const { blocks, digestChars, factChars, keys, views, ledgerEntries } = x;
					return { request: k, blocks, digestChars, factChars, keys, views, ledgerEntries, hookMs };
				});
				soaks.push({
					version,
					seconds,
					fileBytes,
					maskedChars,
					compactions,
					deterministicCompactions: compactionEntries.filter((e) => (e as { fromHook?: boolean }).fromHook === true)
						.length,
					summaryRequests: s.fake.summaryRequests().length,
					widest,
					sessionEntries: entries.length,
					rows,
					held,
					blocks: last.blocks,
					digestChars: last.digestChars,
					early,
					late,
				});
			},
			TIMEOUT,
		);
	}

	test(
		"a 100 MB session file: recall (search, code, grep) and status answer from it",
		async () => {
			const version: PiVersion = "1.6.0";
			const s = await startScenario({ fake: { script: dynamicSequence([]) }, model: { contextWindow: 200_000 } });
			scenarios.push(s);
			const file = join(s.sandbox.sessionDir, "big.jsonl");
			const sessionId = "01a2b3c4-0000-7000-8000-00000000b16f";
			const t0 = Date.UTC(2026, 0, 1);
			const iso = (ms: number) => new Date(ms).toISOString();
			const out = createWriteStream(file);
			const write = (o: unknown) => out.write(`${JSON.stringify(o)}\n`);
			write({ type: "session", version: 3, id: sessionId, timestamp: iso(t0), cwd: s.sandbox.cwd });
			let parent: string | null = null;
			let n = 0;
			const entry = (o: Record<string, unknown>) => {
				const id = (++n).toString(16).padStart(8, "0");
				write({ ...o, id, parentId: parent, timestamp: iso(t0 + n * 1000) });
				parent = id;
				return id;
			};
			entry({ type: "model_change", provider: "fake", modelId: "fake-model" });
			entry({
				type: "message",
				message: { role: "user", content: [{ type: "text", text: "big" }], timestamp: t0 + 2 },
			});
			const blocks: MaskedBlock[] = [];
			const taken = new Set<string>();
			let bytes = 0;
			let i = 0;
			const needle = "NEEDLE-b16-0777";
			while (bytes < 105_000_000) {
				const ts = t0 + 10_000 + i * 10;
				entry({
					type: "message",
					message: {
						role: "assistant",
						content: [{ type: "toolCall", id: `call_${i}`, name: "bash", arguments: { command: `build ${i}` } }],
						usage: { input: 1000, output: 10, cacheRead: 0, cacheWrite: 0 },
						stopReason: "toolUse",
						timestamp: ts,
					},
				});
				const lines: string[] = [];
				for (let k = 0; k < 700; k++) lines.push(`block ${i} line ${k} lorem ipsum dolor sit amet ${(k * 7919) % 997}`);
				if (i === 777) lines[350] = `${needle} found in the middle`;
				lines.push(`error: build ${i} failed`);
				const body = lines.join("\n");
				const id = entry({
					type: "message",
					message: {
						role: "toolResult",
						toolCallId: `call_${i}`,
						toolName: "bash",
						content: [{ type: "text", text: body }],
						isError: false,
						timestamp: ts + 1,
					},
				});
				bytes += body.length;
				const code = deriveCode(sha256, id, 0, taken);
				taken.add(code);
				const d = renderDigest({ code, kind: "toolResult", toolName: "bash", callSummary: `build ${i}`, text: body });
				blocks.push({
					code,
					entryId: id,
					blockIndex: 0,
					kind: "toolResult",
					toolName: "bash",
					toolCallId: `call_${i}`,
					sha256: sha256(body),
					chars: body.length,
					bytes: utf8Length(body),
					lines: splitLines(body).length,
					tokens: Math.ceil(body.length / 4),
					digest: d.digest,
				});
				i++;
			}
			const layer: FrozenLayer = {
				type: "layer",
				v: FOLD_STATE_VERSION,
				seq: 1,
				reason: "budget",
				lastResponseAt: t0 + 10_000 + i * 10,
				usageBefore: 1,
				usageAfter: 1,
				blocks,
			};
			entry({ type: "custom", customType: "context-fold", data: layer });
			const kept = entry({
				type: "message",
				message: {
					role: "user",
					content: [{ type: "text", text: "after the compaction" }],
					timestamp: t0 + 10_000_000,
				},
			});
			entry({
				type: "compaction",
				summary: "Earlier history was compacted.",
				firstKeptEntryId: kept,
				tokensBefore: 30_000_000,
			});
			await new Promise<void>((resolve) => out.end(resolve));
			const size = statSync(file).size;
			expect(size).toBeGreaterThan(100_000_000);
			const target = blocks[777] as MaskedBlock;
			s.fake.setScript(
				dynamicSequence([
					toolCall("recall_folded", { search: needle }, "call_search"),
					toolCall("recall_folded", { code: target.code, grep: needle }, "call_grep"),
					toolCall("recall_folded", { code: (blocks[3] as MaskedBlock).code, lines: "1-3" }, "call_lines"),
					text("done"),
				]),
			);
			const started = performance.now();
			expectSuccess(
				await runPrint({
					version,
					sandbox: s.sandbox,
					prompt: "find it",
					extensions: [bundle],
					session: file,
					timeoutMs: 600_000,
				}),
			);
			const recallSeconds = (performance.now() - started) / 1000;
			const reqs = s.fake.requests.filter((q) => !q.isSummaryRequest);
			const search = lastToolText(reqs[1] as RecordedRequest);
			expect(search).toContain(`{#${target.code}}`);
			expect(search).toContain(`L351: ${needle} found in the middle`);
			expect(lastToolText(reqs[2] as RecordedRequest)).toContain(`L351: ${needle} found in the middle`);
			expect(lastToolText(reqs[3] as RecordedRequest)).toContain("L1: block 3 line 0 lorem ipsum");
			const statusStarted = performance.now();
			const st = expectSuccess(
				await runPrint({
					version,
					sandbox: s.sandbox,
					prompt: "/context-fold status",
					extensions: [bundle],
					session: file,
					timeoutMs: 600_000,
				}),
			);
			const statusSeconds = (performance.now() - statusStarted) / 1000;
			expect(st.stderr).toContain("context-fold status");
			expect(st.stderr).toMatch(/folds: 1 event\(s\)/);
			bigFiles.push({
				version,
				size,
				results: i,
				recallSeconds,
				statusSeconds,
			});
		},
		TIMEOUT,
	);

	test("the report: every run is in it, and its figures bear out what it says; then it is written", () => {
		// A run that failed or did not run leaves its section out: nothing partial is written.
		expect(soaks.map((x) => x.version)).toEqual(VERSIONS);
		expect(bigFiles.map((x) => x.version)).toEqual(["1.6.0"]);
		for (const x of soaks) {
			// "Pi compaction on, answered by context-fold's deterministic summary: N compactions, 0 summary requests".
			expect(x.compactions).toBeGreaterThan(0);
			expect(x.deterministicCompactions).toBe(x.compactions);
			expect(x.summaryRequests).toBe(0);
			expect(x.rows.map((r) => r.request)).toEqual([500, 1000, 1500, REQUESTS]);
			x.rows.forEach((row, n) => {
				const before = x.rows[n - 1];
				// Folded blocks, entry keys and ledger entries only grow as the session does.
				if (before !== undefined) {
					expect(row.blocks).toBeGreaterThanOrEqual(before.blocks);
					expect(row.keys).toBeGreaterThanOrEqual(before.keys);
					expect(row.ledgerEntries).toBeGreaterThanOrEqual(before.ledgerEntries);
				}
				// What is held grows with folded blocks, each digest bounded, not with the bytes folded.
				expect(row.blocks).toBeGreaterThan(0);
				expect(row.digestChars / row.blocks).toBeLessThan(3_000);
				// One entry key per message entry, one ledger location per session entry; views: the current context only.
				expect(row.keys).toBeLessThanOrEqual(row.ledgerEntries);
				expect(row.ledgerEntries).toBeLessThanOrEqual(x.sessionEntries);
				expect(row.views).toBeLessThanOrEqual(x.widest);
			});
			expect((x.rows.at(-1) as SoakRow).blocks).toBe(x.blocks);
			if (REQUESTS > 500) expect(x.blocks).toBeGreaterThan((x.rows[0] as SoakRow).blocks);
			// "Held by the extension at the end: … (P % of the tool output it saw)": a small share.
			expect(x.held / x.maskedChars).toBeLessThan(0.2);
		}
		for (const b of bigFiles) {
			// "A session file over 100 MB".
			expect(b.size).toBeGreaterThan(100_000_000);
		}
		const text = renderReport(soaks, bigFiles);
		expect(text.match(/^### /gm)).toHaveLength(soaks.length + bigFiles.length);
		const path = process.env.CF_SOAK_REPORT;
		if (path) writeFileSync(path, text);
		console.log(text);
	});
});

function renderReport(runs: readonly SoakRun[], big: readonly BigFileRun[]): string {
	return `${[...runs.flatMap(renderSoak), ...big.flatMap(renderBigFile)].join("\n")}\n`;
}

function renderSoak(x: SoakRun): string[] {
	const rows = x.rows.map(
		(r) =>
			`| ${r.request} | ${r.blocks} | ${r.digestChars.toLocaleString("en-US")} | ${r.factChars.toLocaleString("en-US")} | ${r.keys} | ${r.views} | ${r.ledgerEntries} | ${r.hookMs.toFixed(2)} |`,
	);
	return [
		`### Soak: ${REQUESTS} requests on Pi ${x.version}`,
		"",
		`One RPC session of ${REQUESTS} requests in ${REQUESTS / PER_PROMPT} prompts (bash outputs of 1.5k–3.5k tokens, 60k window, Pi compaction on, answered by context-fold's deterministic summary: ${x.compactions} compactions, ${x.summaryRequests} summary requests), ${x.seconds.toFixed(0)} s. Session file ${(x.fileBytes / 1e6).toFixed(1)} MB; ${(x.maskedChars / 1e6).toFixed(1)} M characters of tool output, of which context-fold folded ${x.blocks} blocks.`,
		"",
		"| request | folded blocks | digest chars held | fact chars held | entry keys | views | ledger entries | hook ms (median of last 100) |",
		"| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
		...rows,
		"",
		`Held by the extension at the end: ${x.held.toLocaleString("en-US")} characters (${((x.held / x.maskedChars) * 100).toFixed(2)} % of the tool output it saw), about ${Math.round(x.digestChars / x.blocks)} characters per folded block. Hook time: median ${x.early.toFixed(2)} ms over requests 100–300, ${x.late.toFixed(2)} ms over the last 200.`,
		"",
	];
}

function renderBigFile(b: BigFileRun): string[] {
	return [
		"### A session file over 100 MB",
		"",
		`A synthetic ${(b.size / 1e6).toFixed(0)} MB session (${b.results} tool results, all in one fold layer, then a compaction) opened with \`pi --session\` on Pi ${b.version}: a run with \`recall_folded\` search, grep and lines over it took ${b.recallSeconds.toFixed(1)} s in all (Pi loading the file included), \`/context-fold status\` ${b.statusSeconds.toFixed(1)} s.`,
		"",
	];
}
