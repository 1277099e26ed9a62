// Fault injection against real Pi (0.80.6 and 1.6.0), offline: each fault is made to happen, and each
// test shows that the turn goes ahead (every request reaches the fake, Pi exits 0 or settles), that
// nothing is lost (every raw byte stays in the session file and every fold that was shown resolves,
// or is refused, never served wrong), and that the user hears exactly one clear report.
import { afterEach, beforeAll, describe, expect, test } from "bun:test";
import { execFileSync } from "node:child_process";
import {
	existsSync,
	mkdirSync,
	readFileSync,
	rmSync,
	symlinkSync,
	truncateSync,
	unlinkSync,
	writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sha256 } from "../../src/store/hash.ts";
import { bigOutputCommand, contentText, dynamicSequence, ensureBundle, foldedCodes, lastToolText } from "./cf.ts";
import {
	bash,
	expectSuccess,
	forEachPiVersion,
	type PiRpc,
	type RecordedRequest,
	type Reply,
	replySequence,
	runPrint,
	type Scenario,
	type SessionEntry,
	startRpc,
	startScenario,
	text,
	toolCall,
	type UsageHook,
} from "./harness/index.ts";

const TIMEOUT = 120_000;
const FIXTURES = join(import.meta.dir, "fixtures");
let bundle = "";
beforeAll(() => {
	bundle = ensureBundle();
});
const scenarios: Scenario[] = [];
const mounts: string[] = [];
afterEach(async () => {
	for (const m of mounts.splice(0)) unmount(m);
	for (const s of scenarios.splice(0)) await s.dispose();
});
async function scenario(options: Parameters<typeof startScenario>[0]): Promise<Scenario> {
	const s = await startScenario(options);
	scenarios.push(s);
	return s;
}

/** Whether this machine lets the tests mount a tmpfs (root on Linux): the full-disk test needs one. */
const CAN_MOUNT = (() => {
	const probe = join(tmpdir(), `cf-mount-probe-${process.pid}`);
	mkdirSync(probe, { recursive: true });
	try {
		execFileSync("mount", ["-t", "tmpfs", "-o", "size=4k", "cf-probe", probe], { stdio: "pipe" });
		execFileSync("umount", [probe], { stdio: "pipe" });
		return true;
	} catch {
		return false;
	} finally {
		rmSync(probe, { recursive: true, force: true });
	}
})();
if (!CAN_MOUNT) console.warn("[faults] cannot mount a tmpfs here: the full-disk test is skipped");

/** A tmpfs at `dir` (root only). False where mounting is not allowed; the caller falls back. */
function mountTmpfs(dir: string, options: string): boolean {
	mkdirSync(dir, { recursive: true });
	try {
		execFileSync("mount", ["-t", "tmpfs", "-o", options, "cf-fault", dir], { stdio: "pipe" });
		mounts.push(dir);
		return true;
	} catch {
		return false;
	}
}
function unmount(dir: string): void {
	try {
		execFileSync("umount", ["-l", dir], { stdio: "pipe" });
	} catch {
		// Already gone.
	}
}

/** `n` bash turns of ~`tokens` tokens each, then a final answer. */
function chain(prefix: string, n: number, tokens = 2500): Reply[] {
	const out: Reply[] = [];
	for (let i = 0; i < n; i++) out.push(bash(bigOutputCommand(`${prefix}${i}`, tokens), `call_${prefix}${i}`));
	out.push(text(`done with ${prefix}`));
	return out;
}

/** context-fold's lines on stderr (headless notices). */
function cfLines(stderr: string): string[] {
	return stderr.split("\n").filter((l) => l.startsWith("context-fold:"));
}

/** Notices context-fold sent through Pi's UI (RPC). */
function uiNotices(rpc: PiRpc): string[] {
	return rpc.uiRequests
		.filter((q) => q.method === "notify" && String(q.message).startsWith("context-fold"))
		.map((q) => String(q.message));
}

/** The session file's entries, skipping lines that are not JSON (a truncated file has one). */
function readEntries(file: string): SessionEntry[] {
	const out: SessionEntry[] = [];
	for (const line of readFileSync(file, "utf8").split("\n")) {
		try {
			if (line.trim() !== "") out.push(JSON.parse(line) as SessionEntry);
		} catch {
			// A line cut by the truncation, possibly glued to the next append.
		}
	}
	return out;
}

/**
 * A byte offset that cuts the session file short inside the folded history: at the start of the line
 * of the second folded block's entry (the first folded block survives, the rest are gone), or at 40 %
 * when fewer than two blocks were folded.
 */
function cutBefore(file: string, records: RecordData[]): number {
	const second = records.flatMap((r) => r.blocks ?? [])[1]?.entryId;
	const bytes = readFileSync(file);
	const at = second === undefined ? -1 : bytes.indexOf(`"id":"${second}"`);
	return at < 0 ? Math.floor(bytes.length * 0.4) : bytes.lastIndexOf(10, at) + 1;
}

function toolResults(entries: SessionEntry[]): string[] {
	return entries
		.filter((e) => e.type === "message" && e.message?.role === "toolResult")
		.map((e) => contentText(e.message?.content as never));
}

interface RecordData {
	type: string;
	blocks?: Array<{ entryId: string; code: string; blockIndex: number; sha256: string }>;
}

function foldRecords(entries: SessionEntry[]): RecordData[] {
	return entries.filter((e) => e.type === "custom" && e.customType === "context-fold").map((e) => e.data as RecordData);
}

/** Every raw output of a chain is in the session file, byte for byte (nothing lost). */
function expectAllOutputs(entries: SessionEntry[], prefix: string, n: number): void {
	const results = toolResults(entries);
	for (let i = 0; i < n; i++) expect(results.some((r) => r.includes(`marker-${prefix}${i}-END`))).toBe(true);
}

const turns = (s: Scenario) => s.fake.requests.filter((r) => !r.isSummaryRequest);

forEachPiVersion((version) => {
	describe(`pi ${version}: faults`, () => {
		test(
			"a corrupt context-fold.json: one warning naming it, defaults apply, folding goes on, the file is left as it was",
			async () => {
				const s = await scenario({
					fake: { script: replySequence(chain("j", 12)) },
					model: { contextWindow: 40_000 },
					compaction: { enabled: false },
				});
				const settings = join(s.sandbox.agentDir, "context-fold.json");
				const garbage = '{ "foldAt": 0.3, oops\u0000 not json';
				writeFileSync(settings, garbage);
				const r = expectSuccess(await runPrint({ version, sandbox: s.sandbox, prompt: "go", extensions: [bundle] }));
				expect(turns(s)).toHaveLength(13);
				const lines = cfLines(r.stderr);
				expect(lines).toHaveLength(1);
				expect(lines[0]).toContain(`${settings} is not valid JSON`);
				expect(lines[0]).toContain("The file was not changed");
				expect(readFileSync(settings, "utf8")).toBe(garbage);
				expect(foldedCodes(turns(s).at(-1) as RecordedRequest).length).toBeGreaterThan(0);
				expectAllOutputs(s.sandbox.readSession(), "j", 12);
			},
			TIMEOUT,
		);

		test(
			"a bad CONTEXTFOLD_DUMP path, context-fold.json as /dev/zero then a FIFO, an environment value with terminal escapes: each said truly, once, escaped; folding and debug lines go on (issue 16)",
			async () => {
				const s = await scenario({
					fake: { script: replySequence(chain("d", 12)) },
					model: { contextWindow: 40_000 },
					compaction: { enabled: false },
				});
				const settings = join(s.sandbox.agentDir, "context-fold.json");
				symlinkSync("/dev/zero", settings);
				// A directory where the dump file should go: every write fails (EISDIR).
				const dump = join(s.sandbox.root, "dump-here");
				mkdirSync(dump);
				const r = expectSuccess(
					await runPrint({
						version,
						sandbox: s.sandbox,
						prompt: "go",
						extensions: [bundle],
						env: { CONTEXTFOLD_DUMP: dump, CONTEXTFOLD_DEBUG: "1", CONTEXTFOLD_TAIL: "\u001b[31m4000\nnext line" },
					}),
				);
				expect(turns(s)).toHaveLength(13);
				const lines = cfLines(r.stderr);
				expect(lines).toHaveLength(3);
				expect(lines[0]).toBe(
					`context-fold: ${settings} is not a regular file; ignored, using defaults and environment.`,
				);
				expect(lines[1]).toStartWith("context-fold: CONTEXTFOLD_TAIL=\\u001b[31m4000\\nnext line is invalid;");
				expect(lines[2]).toStartWith(`context-fold: could not write CONTEXTFOLD_DUMP=${dump} (EISDIR`);
				expect(lines[2]).toEndWith(
					"the request went out as planned (folded where due), only the dump was not written.",
				);
				expect(r.stderr).not.toContain("folding skipped");
				expect(r.stderr).not.toContain("\u001b");
				// Every request still folded as due and logged its debug line.
				expect(r.stderr.split("\n").filter((l) => l.startsWith("[context-fold] req="))).toHaveLength(13);
				expect(foldedCodes(turns(s).at(-1) as RecordedRequest).length).toBeGreaterThan(0);
				// A FIFO in the settings file's place: Pi starts at once and says so.
				rmSync(settings);
				execFileSync("mkfifo", [settings]);
				const st = expectSuccess(
					await runPrint({
						version,
						sandbox: s.sandbox,
						prompt: "/context-fold status",
						extensions: [bundle],
						continue: true,
					}),
				);
				expect(cfLines(st.stderr)[0]).toBe(
					`context-fold: ${settings} is not a regular file; ignored, using defaults and environment.`,
				);
				expect(st.stderr).toContain("context-fold status");
				expectAllOutputs(s.sandbox.readSession(), "d", 12);
			},
			TIMEOUT,
		);

		test(
			"unfold of a block whose bytes changed in the session file is refused with recall's explanation, and the digest stays (issue 16)",
			async () => {
				const s = await scenario({
					fake: { script: replySequence(chain("e", 12)) },
					model: { contextWindow: 40_000 },
					compaction: { enabled: false },
				});
				expectSuccess(await runPrint({ version, sandbox: s.sandbox, prompt: "go", extensions: [bundle] }));
				const file = s.sandbox.latestSessionFile();
				const block = foldRecords(s.sandbox.readSession(file)).find((r) => r.type === "layer")?.blocks?.[0];
				expect(block).toBeDefined();
				const { code, entryId } = block as { code: string; entryId: string };
				// Edit the folded entry in place, same length: Pi will load the edited text on resume.
				const edited = readFileSync(file, "utf8")
					.split("\n")
					.map((l) => (l.includes(`"id":"${entryId}"`) ? l.replace("lorem ipsum", "LOREM IPSUM") : l))
					.join("\n");
				writeFileSync(file, edited);
				s.fake.setScript(
					dynamicSequence([
						toolCall("unfold", { code }, "call_unfold"),
						toolCall("recall_folded", { code }, "call_recall"),
						text("done"),
					]),
				);
				const before = turns(s).length;
				expectSuccess(
					await runPrint({ version, sandbox: s.sandbox, prompt: "unfold it", extensions: [bundle], continue: true }),
				);
				const [afterUnfold, afterRecall] = turns(s).slice(before + 1) as [RecordedRequest, RecordedRequest];
				const unfoldAnswer = lastToolText(afterUnfold);
				expect(unfoldAnswer).toStartWith(
					`{#${code}}: refused. The bytes now at entry ${entryId} block 0 do not match what was folded`,
				);
				expect(unfoldAnswer).toBe(lastToolText(afterRecall));
				// Nothing was put back: the edited text never reached the model, the digest is still there.
				expect(foldedCodes(afterRecall)).toContain(code);
				for (const req of turns(s).slice(before))
					expect(JSON.stringify(req.body.messages)).not.toContain("LOREM IPSUM");
				expect(foldRecords(s.sandbox.readSession(file)).filter((r) => r.type === "unfold")).toEqual([]);
			},
			TIMEOUT,
		);

		test(
			"a read-only index directory: one warning, folding and recall go on, the session file keeps every byte",
			async () => {
				const s = await scenario({
					fake: {
						script: dynamicSequence([
							...chain("r", 12).slice(0, 12),
							(req) => toolCall("recall_folded", { code: foldedCodes(req)[0] }, "call_recall"),
							text("done"),
						]),
					},
					model: { contextWindow: 40_000 },
					compaction: { enabled: false },
				});
				const dir = join(s.sandbox.agentDir, "context-fold");
				if (!mountTmpfs(dir, "ro,size=1m")) writeFileSync(dir, "not a directory");
				const r = expectSuccess(await runPrint({ version, sandbox: s.sandbox, prompt: "go", extensions: [bundle] }));
				expect(turns(s)).toHaveLength(14);
				const lines = cfLines(r.stderr);
				expect(lines).toHaveLength(1);
				expect(lines[0]).toContain("the seed index was not updated");
				expect(lines[0]).toMatch(/EROFS|ENOENT|ENOTDIR|EEXIST/);
				const recall = lastToolText(turns(s).at(-1) as RecordedRequest);
				expect(recall).toContain("(sha256 verified):");
				expect(recall).toContain("marker-r0-END");
				expectAllOutputs(s.sandbox.readSession(), "r", 12);
			},
			TIMEOUT,
		);

		test.skipIf(!CAN_MOUNT)(
			"a full disk under the index: one warning, folding goes on, what was written stays readable",
			async () => {
				const s = await scenario({
					fake: { script: replySequence(chain("f", 16)) },
					model: { contextWindow: 30_000 },
					compaction: { enabled: false },
					env: { CONTEXTFOLD_FOLD_STEP: "0.05", CONTEXTFOLD_TAIL: "3000" },
				});
				const dir = join(s.sandbox.agentDir, "context-fold");
				expect(mountTmpfs(dir, "size=8k")).toBe(true);
				const r = expectSuccess(await runPrint({ version, sandbox: s.sandbox, prompt: "go", extensions: [bundle] }));
				expect(turns(s)).toHaveLength(17);
				const records = foldRecords(s.sandbox.readSession()).filter((d) => d.type === "layer");
				expect(records.length).toBeGreaterThan(1);
				// The step pinned by hand (for more fold events) is said at start; then the one warning about the disk.
				const lines = cfLines(r.stderr);
				expect(lines).toHaveLength(2);
				expect(lines[0]).toStartWith(
					"context-fold: fold points pinned by hand: CONTEXTFOLD_FOLD_STEP=0.05 (environment).",
				);
				expect(lines[1]).toContain("the seed index was not updated");
				expect(lines[1]).toContain("ENOSPC");
				expectAllOutputs(s.sandbox.readSession(), "f", 16);
			},
			TIMEOUT,
		);

		test(
			"the provider reports no usage, negative usage and absurd usage: one warning, folding goes on from estimates, no NaN or Infinity anywhere",
			async () => {
				// Every other response: none, then negative, then absurd (each beyond any window), in turn.
				const hook: UsageHook = ({ req }) => {
					if (req.index % 2 === 0) return undefined;
					const kind = ((req.index - 1) / 2) % 3;
					if (kind === 0) return null;
					if (kind === 1) return { input: -50_000, cacheRead: -3, cacheWrite: 0, output: -7 };
					return { input: 1e15, cacheRead: 8e307, cacheWrite: 8e307, output: 1e300 };
				};
				const s = await scenario({
					fake: { script: replySequence(chain("u", 12)), usage: hook },
					model: { contextWindow: 40_000 },
					compaction: { enabled: false },
					env: { CONTEXTFOLD_DEBUG: "1" },
				});
				const r = expectSuccess(await runPrint({ version, sandbox: s.sandbox, prompt: "go", extensions: [bundle] }));
				expect(turns(s)).toHaveLength(13);
				const lines = cfLines(r.stderr);
				expect(lines).toHaveLength(1);
				expect(lines[0]).toContain("the provider reported unusable token usage (no usage)");
				const debug = r.stderr.split("\n").filter((l) => l.startsWith("[context-fold] req="));
				expect(debug.length).toBe(13);
				for (const l of debug) expect(l).not.toMatch(/NaN|Infinity|undefined/);
				expect(foldedCodes(turns(s).at(-1) as RecordedRequest).length).toBeGreaterThan(0);
				expectAllOutputs(s.sandbox.readSession(), "u", 12);
			},
			TIMEOUT,
		);

		test(
			"another extension damages message shapes before context-fold: no throw, intact blocks fold, the damaged one goes out as it came, one warning",
			async () => {
				const s = await scenario({
					fake: { script: replySequence(chain("m", 14)) },
					model: { contextWindow: 40_000 },
					compaction: { enabled: false },
				});
				const r = expectSuccess(
					await runPrint({
						version,
						sandbox: s.sandbox,
						prompt: "go",
						extensions: [join(FIXTURES, "corruptor.ts"), bundle, join(FIXTURES, "repair.ts")],
					}),
				);
				expect(turns(s)).toHaveLength(15);
				const last = turns(s).at(-1) as RecordedRequest;
				const tools = last.body.messages.filter((m) => m.role === "tool").map((m) => contentText(m.content));
				// The first three results were damaged in every request: never folded on the wire.
				for (const t of tools.slice(0, 3)) expect(t.startsWith("{#")).toBe(false);
				// Intact older results fold as usual.
				expect(tools.slice(3).filter((t) => t.startsWith("{#")).length).toBeGreaterThan(2);
				const lines = cfLines(r.stderr);
				expect(lines.filter((l) => l.includes("folding skipped"))).toHaveLength(0);
				expect(lines.length).toBeLessThanOrEqual(1);
				if (lines.length === 1) expect(lines[0]).toContain("another extension changed the shape of a message");
				expectAllOutputs(s.sandbox.readSession(), "m", 14);
			},
			TIMEOUT,
		);

		for (const fault of ["vanishes", "is truncated", "becomes unreadable"] as const) {
			test(
				`the session file ${fault} mid-session: the turn goes ahead, one warning, recall refuses rather than serve other bytes, nothing unrecallable is folded`,
				async () => {
					let firstCode = "";
					const s = await scenario({
						fake: {
							script: dynamicSequence([
								...chain("a", 12),
								(req) => {
									firstCode = foldedCodes(req)[0] ?? "";
									return toolCall("recall_folded", { code: firstCode }, "call_recall_a");
								},
								// A search for text that was in the first folded block: never "no match" when
								// blocks could not be read (issue 16).
								() => toolCall("recall_folded", { search: "marker-a0-END" }, "call_search_a"),
								...chain("b", 8),
							]),
						},
						model: { contextWindow: 40_000 },
						compaction: { enabled: false },
					});
					const trigger = join(s.sandbox.root, "deny-reads");
					const rpc = await startRpc({
						version,
						sandbox: s.sandbox,
						extensions: [bundle],
						env: {
							NODE_OPTIONS: `--import ${join(FIXTURES, "fs-faults.mjs")}`,
							CF_FS_DENY_READ: s.sandbox.sessionDir,
							CF_FS_TRIGGER: trigger,
						},
						timeoutMs: 60_000,
					});
					s.defer(() => rpc.close());
					await rpc.promptAndWait("first chain");
					const file = s.sandbox.latestSessionFile();
					const before = s.sandbox.readSession(file);
					const original = toolResults(before)[0] as string;
					const layersBefore = foldRecords(before).filter((r) => r.type === "layer").length;
					expect(layersBefore).toBeGreaterThan(0);
					if (fault === "vanishes") unlinkSync(file);
					else if (fault === "is truncated") truncateSync(file, cutBefore(file, foldRecords(before)));
					else writeFileSync(trigger, "");
					// Folded entries the fault took away: a search must say they could not be searched.
					const left = new Set(fault === "is truncated" ? readEntries(file).map((e) => e.id) : []);
					const lost = foldRecords(before)
						.flatMap((r) => r.blocks ?? [])
						.filter((b) => !left.has(b.entryId)).length;
					await rpc.promptAndWait("second chain");
					// The turn went ahead: every scripted request reached the fake.
					expect(turns(s)).toHaveLength(13 + 2 + 9);
					// One clear report.
					const reports = uiNotices(rpc);
					expect(reports).toHaveLength(1);
					expect(reports[0]).toMatch(/session file/);
					// Recall never serves other bytes: exact original, or a refusal that says why.
					const answer = lastToolText(turns(s)[14] as RecordedRequest);
					expect(firstCode).not.toBe("");
					if (answer.includes("(sha256 verified)")) expect(answer.endsWith(`:\n${original}`)).toBe(true);
					else expect(answer).toMatch(/no longer|not found|unreadable|cannot be served|refused/);
					const search = lastToolText(turns(s)[15] as RecordedRequest);
					if (fault === "is truncated") {
						// What the cut left is searched; what it took is said, never counted as "no match".
						expect(lost).toBeGreaterThan(0);
						expect(search).toContain(`${lost} ${lost === 1 ? "block" : "blocks"} could not be searched: `);
					} else
						expect(search).toMatch(
							/^search "marker-a0-END": could not search: none of the \d+ folded blocks? could be read, so nothing was searched \(/,
						);
					// Nothing was folded that the file cannot give back.
					expect(existsSync(file)).toBe(true);
					const after = readEntries(file);
					const ids = new Set(after.map((e) => e.id));
					const fresh = foldRecords(after)
						.filter((r) => r.type === "layer")
						.slice(fault === "vanishes" ? 0 : layersBefore);
					for (const r of fresh) for (const b of r.blocks ?? []) expect(ids.has(b.entryId)).toBe(true);
					if (fault === "becomes unreadable") expect(fresh).toHaveLength(0);
					// Everything written after the fault is there.
					expectAllOutputs(after, "b", 8);
					expect(rpc.stderr()).not.toMatch(/TypeError|ReferenceError|unhandled/i);
				},
				TIMEOUT,
			);
		}

		test(
			"a second Pi process appends to the same session file: both turns go ahead, one clear report, every handle resolves after a resume",
			async () => {
				let codeA = "";
				const s = await scenario({
					fake: {
						script: dynamicSequence([
							...chain("a", 12),
							...chain("c", 6),
							(req) => {
								codeA = foldedCodes(req)[0] ?? "";
								return toolCall("recall_folded", { code: codeA }, "call_recall_a");
							},
							text("A done"),
							() => toolCall("recall_folded", { code: codeA }, "call_recall_resumed"),
							text("resumed"),
						]),
					},
					model: { contextWindow: 40_000 },
					compaction: { enabled: false },
				});
				const a = await startRpc({ version, sandbox: s.sandbox, extensions: [bundle], timeoutMs: 60_000 });
				s.defer(() => a.close());
				await a.promptAndWait("first chain");
				const file = s.sandbox.latestSessionFile();
				const original = toolResults(s.sandbox.readSession(file))[0] as string;
				// Process B opens the same file and appends its own turns while A is still running.
				expectSuccess(
					await runPrint({ version, sandbox: s.sandbox, prompt: "other process", extensions: [bundle], session: file }),
				);
				await a.promptAndWait("recall something");
				const recallA = lastToolText(turns(s)[21] as RecordedRequest);
				expect(codeA).not.toBe("");
				expect(recallA.endsWith(`(sha256 verified):\n${original}`)).toBe(true);
				// One report naming what happened; nothing claims the file was damaged.
				const foreign = uiNotices(a).filter((n) => n.includes("another process is appending"));
				expect(foreign).toHaveLength(1);
				expect(foreign[0]).toMatch(/\(\d+ entr(y|ies) this Pi did not write; a second Pi on the same session\?\)/);
				expect(uiNotices(a).filter((n) => /cut short|could not|skipped|unreadable/.test(n))).toEqual([]);
				await a.close();
				// A resume follows the newest branch (A's): the handle still resolves, byte for byte.
				const r = expectSuccess(
					await runPrint({ version, sandbox: s.sandbox, prompt: "resume", extensions: [bundle], session: file }),
				);
				expect(cfLines(r.stderr)).toEqual([]);
				const resumed = lastToolText(turns(s).at(-1) as RecordedRequest);
				expect(resumed.endsWith(`(sha256 verified):\n${original}`)).toBe(true);
				const entries = s.sandbox.readSession(file);
				expectAllOutputs(entries, "a", 12);
				expectAllOutputs(entries, "c", 6);
			},
			TIMEOUT,
		);

		for (const command of ["reload", "new", "resume", "fork"] as const) {
			test(
				`/${command} in the middle of a fold event: Pi keeps going, the fold is on record and recalls byte for byte`,
				async () => {
					let foldSeen = false;
					const steps: Array<Reply | ((req: RecordedRequest) => Reply)> = [];
					for (let i = 0; i < 12; i++) {
						steps.push((req) => {
							// Hold the response to the first request that carries a fold: the event is in flight.
							if (!foldSeen && foldedCodes(req).length > 0) {
								foldSeen = true;
								return { ...bash(bigOutputCommand(`l${i}`, 2500), `call_l${i}`), delayMs: 1500 };
							}
							return bash(bigOutputCommand(`l${i}`, 2500), `call_l${i}`);
						});
					}
					steps.push(text("chain done"), text("after the command"));
					const s = await scenario({
						fake: { script: dynamicSequence(steps) },
						model: { contextWindow: 40_000 },
						compaction: { enabled: false },
					});
					const rpc = await startRpc({
						version,
						sandbox: s.sandbox,
						extensions: [bundle, join(FIXTURES, "reload.ts")],
						timeoutMs: 60_000,
					});
					s.defer(() => rpc.close());
					const started = rpc.prompt("chain");
					const deadline = Date.now() + 60_000;
					while (!foldSeen && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
					expect(foldSeen).toBe(true);
					const file = s.sandbox.latestSessionFile();
					if (command === "reload")
						await rpc.send({ type: "prompt", message: "/cf-reload", streamingBehavior: "steer" });
					else if (command === "new") await rpc.send({ type: "new_session" });
					else if (command === "resume") await rpc.send({ type: "switch_session", sessionPath: file });
					else {
						const leaf = s.sandbox
							.readSession(file)
							.filter((e) => e.type === "message")
							.at(-1)?.id;
						await rpc.send({ type: "fork", entryId: leaf });
					}
					await started;
					// Pi may finish the run or abort it for the switch; either way it settles.
					for (let i = 0; i < 100; i++) {
						const st = await rpc.getState();
						if (st.isStreaming !== true) break;
						await new Promise((r) => setTimeout(r, 100));
					}
					// Pi is alive and answers.
					const state = await rpc.getState();
					expect(state).toBeDefined();
					// The session that carried the fold has it on record, and its originals are intact.
					const entries = s.sandbox.readSession(file);
					const layers = foldRecords(entries).filter((r) => r.type === "layer");
					expect(layers.length).toBeGreaterThan(0);
					for (const layer of layers) {
						for (const b of layer.blocks ?? []) {
							const e = entries.find((x) => x.id === b.entryId);
							const part = (e?.message?.content as Array<{ text?: string }> | undefined)?.[b.blockIndex];
							expect(sha256(part?.text ?? "")).toBe(b.sha256);
						}
					}
					expect(uiNotices(rpc).filter((n) => /skipped|could not|twice/.test(n))).toEqual([]);
					expect(rpc.stderr()).not.toMatch(/TypeError|ReferenceError|unhandled/i);
					await rpc.close();
					// Back in that session: a folded handle resolves byte for byte.
					const code = layers[0]?.blocks?.[0]?.code ?? "";
					s.fake.setScript(dynamicSequence([toolCall("recall_folded", { code }, "call_back"), text("ok")]));
					const start = s.fake.requests.length;
					expectSuccess(
						await runPrint({ version, sandbox: s.sandbox, prompt: "back", extensions: [bundle], session: file }),
					);
					const answer = lastToolText(s.fake.requests[start + 1] as RecordedRequest);
					expect(answer).toContain("(sha256 verified):");
				},
				TIMEOUT,
			);
		}

		test(
			"the hook itself throws on every request (CONTEXTFOLD_TEST_FAULT=context): every turn goes ahead unfolded, one warning",
			async () => {
				const s = await scenario({
					fake: { script: replySequence(chain("t", 10)) },
					model: { contextWindow: 40_000 },
					compaction: { enabled: false },
					env: { CONTEXTFOLD_TEST_FAULT: "context" },
				});
				const r = expectSuccess(await runPrint({ version, sandbox: s.sandbox, prompt: "go", extensions: [bundle] }));
				expect(turns(s)).toHaveLength(11);
				for (const req of turns(s)) expect(foldedCodes(req)).toEqual([]);
				const lines = cfLines(r.stderr);
				expect(lines).toHaveLength(1);
				expect(lines[0]).toContain("folding skipped for this request: injected fault");
				expect(lines[0]).toContain("The request went ahead unchanged");
				expectAllOutputs(s.sandbox.readSession(), "t", 10);
			},
			TIMEOUT,
		);
	});
});
