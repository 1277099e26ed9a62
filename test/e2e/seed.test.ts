// The seed index, deterministic hard compaction and /fold-handoff on real Pi 0.80.6 and 1.6.0.
// Every test also proves that no summary request ever reached the model.
import { describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseSeedIndex } from "../../src/core/seed/render.ts";
import { bigOutputCommand, contentText, ensureBundle, foldEvents, scenarioPool } from "./cf.ts";
import {
	bash,
	expectSuccess,
	forEachPiVersion,
	type PiVersion,
	replySequence,
	runPrint,
	type Scenario,
	startRpc,
	text,
} from "./harness/index.ts";
import { NODE_BIN } from "./harness/pi-env.ts";

const TIMEOUT = 120_000;
const OTHER = join(import.meta.dir, "fixtures/other-compactor.ts");
const HEADER = "Earlier history was compacted by context-fold";
const bundle = ensureBundle();
const scenario = scenarioPool();

function chain(tag: string, n: number, tokens: number, final = `${tag} done`) {
	const r = [];
	for (let i = 0; i < n; i++) r.push(bash(bigOutputCommand(`${tag}${i}`, tokens), `call_${tag}${i}`));
	r.push(text(final));
	return r;
}

function sessionDir(s: Scenario): string {
	const header = s.sandbox.readSession()[0] as { id?: string };
	return join(s.sandbox.agentDir, "context-fold", String(header.id));
}

function compactions(s: Scenario) {
	return s.sandbox.readSession().filter((e) => e.type === "compaction") as unknown as Array<{
		summary: string;
		fromHook?: boolean;
		details?: unknown;
	}>;
}

/** Manual compaction only, with little kept, so /compact always has something to summarize. */
const MANUAL = {
	model: { contextWindow: 200_000 },
	compaction: { enabled: false, reserveTokens: 2_000, keepRecentTokens: 1_000 },
};
/** A small window so Pi's own threshold compaction fires after a big tool output. */
const SMALL = {
	model: { contextWindow: 8_000 },
	compaction: { enabled: true, reserveTokens: 2_000, keepRecentTokens: 1_000 },
};

forEachPiVersion((version: PiVersion) => {
	describe(`pi ${version}: seed index, compaction, handoff`, () => {
		test(
			"every fold event appends one valid record, user-only permissions",
			async () => {
				const s = await scenario({
					fake: { script: replySequence(chain("f", 16, 2500)) },
					model: { contextWindow: 40_000 },
					compaction: { enabled: false },
				});
				expectSuccess(await runPrint({ version, sandbox: s.sandbox, prompt: "fold please", extensions: [bundle] }));
				const events = foldEvents(s.fake.requests);
				const file = join(sessionDir(s), "seed-index.jsonl");
				const read = parseSeedIndex(readFileSync(file, "utf8"));
				expect(read.invalid).toBe(0);
				expect(read.records).toHaveLength(events.length);
				expect(read.records.every((r) => r.kind === "fold")).toBe(true);
				expect(read.records[0]?.userLines).toEqual(["fold please"]);
				expect(read.records[0]?.commands.some((c) => c.startsWith("awk"))).toBe(true);
				expect(read.records[0]?.errors.some((e) => e.text.startsWith("error: unique failure in f"))).toBe(true);
				expect(statSync(file).mode & 0o777).toBe(0o600);
				expect(statSync(sessionDir(s)).mode & 0o777).toBe(0o700);
			},
			TIMEOUT,
		);

		test(
			"a forced compaction gets the deterministic summary, no model call, and handles still resolve",
			async () => {
				const s = await scenario({
					fake: { script: replySequence([...chain("c", 3, 2500), text("second run")]) },
					...SMALL,
				});
				expectSuccess(await runPrint({ version, sandbox: s.sandbox, prompt: "go", extensions: [bundle] }));
				expectSuccess(
					await runPrint({ version, sandbox: s.sandbox, prompt: "and again", extensions: [bundle], continue: true }),
				);
				expect(s.fake.summaryRequests()).toHaveLength(0);
				const cs = compactions(s);
				expect(cs.length).toBeGreaterThan(0);
				for (const c of cs) {
					expect(c.summary).toContain(HEADER);
					expect(c.fromHook).toBe(true);
					expect(c.summary.length).toBeLessThan(13_000);
				}
				const read = parseSeedIndex(readFileSync(join(sessionDir(s), "seed-index.jsonl"), "utf8"));
				expect(read.records.filter((r) => r.kind === "compaction").length).toBe(cs.length);
				// The compaction record covers what left live context: the commands that ran.
				const compacted = read.records.filter((r) => r.kind === "compaction").flatMap((r) => r.commands);
				expect(compacted.some((c) => c.includes("c0"))).toBe(true);
			},
			TIMEOUT,
		);

		test(
			"a second forced compaction raises one warning that recommends /fold-handoff",
			async () => {
				const s = await scenario({ fake: { script: replySequence([]) }, ...SMALL });
				const answeredForced = () =>
					compactions(s).filter((c) => {
						const reason = (c.details as { contextFold?: { reason?: string } } | undefined)?.contextFold?.reason;
						return reason === "threshold" || reason === "overflow";
					});
				const { stderr } = await roundsUntil(version, s, "s", {}, answeredForced);
				const forced = answeredForced().length;
				expect(forced).toBeGreaterThanOrEqual(2);
				expect(stderr).toContain("a second forced compaction happened in this session. Consider /fold-handoff");
				expect(s.fake.summaryRequests()).toHaveLength(0);
			},
			TIMEOUT,
		);

		test(
			"Pi's own forced compactions (CONTEXTFOLD_COMPACT=native) count from the branch, across restarts, in the extension and in the CLI",
			async () => {
				const s = await scenario({ fake: { script: replySequence([]) }, ...SMALL });
				// Every round is a new Pi process: a count kept only in memory would start again at 0.
				const piOwn = () => compactions(s).filter((c) => c.fromHook !== true);
				const { stderr } = await roundsUntil(version, s, "n", { CONTEXTFOLD_COMPACT: "native" }, piOwn);
				const native = piOwn().length;
				expect(native).toBeGreaterThanOrEqual(2);
				expect(stderr).toContain("a second forced compaction happened in this session. Consider /fold-handoff");
				// The CLI reads the same count from the session file.
				const file = s.sandbox.latestSessionFile();
				const cli = spawnSync(NODE_BIN, [join(import.meta.dir, "../../dist/cli.js"), "status", file, "--json"], {
					encoding: "utf8",
					env: { PATH: process.env.PATH, PI_CODING_AGENT_DIR: s.sandbox.agentDir },
				});
				expect(cli.status).toBe(0);
				expect(
					(JSON.parse(cli.stdout) as { flags: { secondForcedCompaction: boolean } }).flags.secondForcedCompaction,
				).toBe(true);
				// Pi summarized (no answer from context-fold), and each forced one was noted on the branch.
				expect(s.fake.summaryRequests().length).toBeGreaterThanOrEqual(native);
				const notes = s.sandbox
					.readSession()
					.filter((e) => e.type === "custom" && e.customType === "context-fold-compaction");
				expect(notes.length).toBe(native);
			},
			TIMEOUT,
		);

		test(
			"manual /compact with instructions keeps them verbatim at the top; native mode gives Pi's own summary back",
			async () => {
				const s = await scenario({ fake: { script: replySequence(chain("m", 6, 2500)) }, ...MANUAL });
				const rpc = await startRpc({ version, sandbox: s.sandbox, extensions: [bundle] });
				s.defer(() => rpc.close());
				await rpc.promptAndWait("work");
				const done = await rpc.compact("Keep the parser notes. Drop the rest.");
				expect(done.success).toBe(true);
				await rpc.close();
				expect(s.fake.summaryRequests()).toHaveLength(0);
				const det = compactions(s).at(-1);
				expect(
					det?.summary.startsWith(
						"Instructions given with /compact (verbatim):\nKeep the parser notes. Drop the rest.\n",
					),
				).toBe(true);

				s.fake.setScript(replySequence(chain("n", 2, 2500)));
				const native = await startRpc({
					version,
					sandbox: s.sandbox,
					extensions: [bundle],
					continue: true,
					env: { CONTEXTFOLD_COMPACT: "native" },
				});
				s.defer(() => native.close());
				await native.promptAndWait("more work");
				expect((await native.compact()).success).toBe(true);
				await native.close();
				expect(s.fake.summaryRequests().length).toBeGreaterThan(0);
				expect(compactions(s).at(-1)?.summary).not.toContain(HEADER);
			},
			TIMEOUT,
		);

		for (const order of ["context-fold-first", "other-first"] as const) {
			test(
				`another extension answering compaction, loaded ${order}: Pi keeps the last answer`,
				async () => {
					const s = await scenario({ fake: { script: replySequence(chain("o", 4, 2500)) }, ...MANUAL });
					const extensions = order === "context-fold-first" ? [bundle, OTHER] : [OTHER, bundle];
					const rpc = await startRpc({ version, sandbox: s.sandbox, extensions });
					s.defer(() => rpc.close());
					await rpc.promptAndWait("work");
					expect((await rpc.compact()).success).toBe(true);
					await rpc.close();
					const summary = compactions(s).at(-1)?.summary ?? "";
					if (order === "context-fold-first") expect(summary).toBe("OTHER-COMPACTOR-SUMMARY");
					else expect(summary).toContain(HEADER);
					expect(s.fake.summaryRequests()).toHaveLength(0);
				},
				TIMEOUT,
			);
		}

		test(
			"an unwritable index directory: one clear warning, folding and the session go on, handoff says nothing was written",
			async () => {
				const s = await scenario({
					fake: { script: replySequence(chain("u", 16, 2500)) },
					model: { contextWindow: 40_000 },
					compaction: { enabled: false },
				});
				// A file where the directory should be: fails for root too, unlike chmod.
				writeFileSync(join(s.sandbox.agentDir, "context-fold"), "not a directory");
				const r = expectSuccess(await runPrint({ version, sandbox: s.sandbox, prompt: "go", extensions: [bundle] }));
				expect(r.stdout).toContain("u done");
				expect(foldEvents(s.fake.requests).length).toBeGreaterThan(0);
				const warnings = r.stderr.split("\n").filter((l) => l.includes("the seed index was not updated"));
				expect(warnings).toHaveLength(1);
				expect(warnings[0]).toMatch(/cannot create .*context-fold/);
				s.fake.setScript(replySequence([]));
				const h = expectSuccess(
					await runPrint({
						version,
						sandbox: s.sandbox,
						prompt: "/fold-handoff next",
						extensions: [bundle],
						continue: true,
					}),
				);
				expect(h.stderr).toMatch(/handoff failed: cannot (read|create) .*\(ENOTDIR\)/);
				expect(h.stderr).toContain("Nothing was written; the session goes on.");
			},
			TIMEOUT,
		);

		test(
			"/fold-handoff over RPC: one confirmation opens a fresh session whose first message is the seed, with no model request",
			async () => {
				const s = await scenario({
					fake: { script: replySequence(chain("h", 16, 2500)) },
					model: { contextWindow: 40_000 },
					compaction: { enabled: false },
				});
				const rpc = await startRpc({
					version,
					sandbox: s.sandbox,
					extensions: [bundle],
					onDialog: (req) => (req.method === "confirm" ? { confirmed: true } : undefined),
				});
				s.defer(() => rpc.close());
				await rpc.promptAndWait("build the parser");
				const parent = s.sandbox.latestSessionFile();
				const before = s.fake.requests.length;
				const response = await rpc.prompt("/fold-handoff finish the parser and ship it");
				expect(response.success).toBe(true);
				// The new session is live and idle, with the seed as its only message (0.80.6 writes the
				// file only after a first response, so ask Pi rather than the disk).
				const state = await rpc.getState();
				expect(state.sessionFile).not.toBe(parent);
				const { messages } = await rpc.request<{ messages: Array<{ role: string; content: unknown }> }>("get_messages");
				expect(messages.map((m) => m.role)).toEqual(["user"]);
				const seed = contentText(messages[0]?.content as never);
				expect(seed).toContain("## Goal\n\nfinish the parser and ship it");
				expect(seed).toContain(parent);
				expect(seed).toContain("## Index of the earlier session");
				expect(seed).toContain("error: unique failure in h0");
				expect(s.fake.requests.length).toBe(before);
				const dir = join(
					s.sandbox.agentDir,
					"context-fold",
					String((s.sandbox.readSession(parent)[0] as { id: string }).id),
				);
				expect(readdirSync(dir).some((f) => /^handoff-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}Z\.md$/.test(f))).toBe(true);
			},
			TIMEOUT,
		);

		test(
			"/fold-handoff headless with no folds yet: writes the seed, says the index is empty, prints the steps",
			async () => {
				const s = await scenario({ fake: { script: replySequence([text("hello")]) } });
				expectSuccess(await runPrint({ version, sandbox: s.sandbox, prompt: "hi", extensions: [bundle] }));
				const r = expectSuccess(
					await runPrint({
						version,
						sandbox: s.sandbox,
						prompt: "/fold-handoff next: add tests",
						extensions: [bundle],
						continue: true,
					}),
				);
				const line = r.stderr.split("\n").find((l) => l.includes("Seed written:"));
				expect(line).toBeDefined();
				const path = (line as string).replace(/^.*Seed written: /, "").trim();
				const seed = readFileSync(path, "utf8");
				expect(seed).toContain("(The index is empty: nothing had been folded or compacted yet.)");
				expect(seed).toContain("next: add tests");
				expect(statSync(path).mode & 0o777).toBe(0o600);
				expect(s.fake.requests).toHaveLength(1);
			},
			TIMEOUT,
		);
	});
});

/**
 * Rounds of two big tool outputs in a small window, each a new Pi process continuing the session,
 * until `counted()` lists two compactions (at most six rounds). Returns what Pi said on stderr.
 */
async function roundsUntil(
	version: PiVersion,
	s: Scenario,
	tag: string,
	env: Record<string, string>,
	counted: () => unknown[],
): Promise<{ stderr: string }> {
	let stderr = "";
	for (let run = 0; run < 6; run++) {
		s.fake.setScript(replySequence(chain(`${tag}${run}x`, 2, 2500)));
		const r = expectSuccess(
			await runPrint({
				version,
				sandbox: s.sandbox,
				prompt: `round ${run}`,
				extensions: [bundle],
				env,
				...(run > 0 && { continue: true }),
			}),
		);
		stderr += r.stderr;
		if (counted().length >= 2) break;
	}
	return { stderr };
}
