// The fold engine inside real Pi (0.80.6 and 1.6.0), headless and offline. Everything is proven
// from what the fake model received and from the session file Pi wrote.
import { describe, expect, test } from "bun:test";
import { DEFAULT_SETTINGS } from "../../src/core/settings.ts";
import {
	bigOutputCommand,
	contentText,
	ensureBundle,
	foldEvents,
	foldedCodes,
	messageBytes,
	scenarioPool,
} from "./cf.ts";
import {
	bash,
	expectSuccess,
	forEachPiVersion,
	type RecordedRequest,
	replySequence,
	runPrint,
	type Scenario,
	text,
} from "./harness/index.ts";

const TIMEOUT = 120_000;
const bundle = ensureBundle();
const scenario = scenarioPool();

/** A chain of `turns` bash calls, each printing ~`tokens` tokens, then a final answer. */
function chain(prefix: string, turns: number, tokens: number | ((i: number) => number)) {
	const replies = [];
	for (let i = 0; i < turns; i++) {
		replies.push(
			bash(bigOutputCommand(`${prefix}${i}`, typeof tokens === "number" ? tokens : tokens(i)), `call_${prefix}${i}`),
		);
	}
	replies.push(text(`done with ${prefix}`));
	return replySequence(replies);
}

function turnRequests(s: Scenario): RecordedRequest[] {
	return s.fake.requests.filter((r) => !r.isSummaryRequest);
}

function reportedPrompt(req: RecordedRequest): number {
	const u = req.reportedUsage;
	return u ? u.input + u.cacheRead + u.cacheWrite : 0;
}

/** The first fold record context-fold appended to the session. */
function firstRecord(s: Scenario): { reason: string; usageBefore: number; usageAfter: number } {
	const record = s.sandbox.readSession().find((e) => e.type === "custom" && e.customType === "context-fold");
	if (!record) throw new Error("no fold record in the session");
	return record.data as { reason: string; usageBefore: number; usageAfter: number };
}

forEachPiVersion((version) => {
	describe(`pi ${version}: fold engine`, () => {
		test(
			"a long tool chain crosses fold-at: stale results reach the model as digests, the session keeps every raw byte",
			async () => {
				const s = await scenario({
					fake: { script: chain("a", 14, 2500) },
					model: { contextWindow: 40_000 },
					compaction: { enabled: false },
				});
				expectSuccess(await runPrint({ version, sandbox: s.sandbox, prompt: "run the chain", extensions: [bundle] }));
				const reqs = turnRequests(s);
				expect(reqs).toHaveLength(15);
				const events = foldEvents(reqs);
				expect(events.length).toBeGreaterThan(0);
				const first = events[0] as number;
				// Usage (reported by the previous response) had crossed fold-at when the first fold fired.
				expect(reportedPrompt(reqs[first - 1] as RecordedRequest)).toBeGreaterThanOrEqual(
					DEFAULT_SETTINGS.foldAt * 40_000 * 0.9,
				);
				const last = reqs.at(-1) as RecordedRequest;
				const tools = last.body.messages.filter((m) => m.role === "tool");
				expect(tools).toHaveLength(14);
				const folded = tools.filter((m) => contentText(m.content).startsWith("{#"));
				expect(folded.length).toBeGreaterThan(3);
				for (const m of folded) {
					const body = contentText(m.content);
					expect(body).toMatch(/^\{#[0-9a-f]{6} FOLDED\} bash `awk /);
					// Error lines survive verbatim.
					expect(body).toMatch(/! L\d+: error: unique failure in a\d+/);
					expect(body.length).toBeLessThan(1200);
				}
				// The newest result always goes out in full.
				expect(contentText(tools.at(-1)?.content)).toContain("marker-a13-END");
				// The session file keeps every raw byte.
				const entries = s.sandbox.readSession();
				const results = entries.filter((e) => e.type === "message" && e.message?.role === "toolResult");
				expect(results).toHaveLength(14);
				for (const [i, e] of results.entries()) {
					const raw = contentText(e.message?.content as never);
					expect(raw).toContain(`marker-a${i}-END`);
					expect(raw.startsWith("{#")).toBe(false);
				}
				const records = entries.filter((e) => e.type === "custom" && e.customType === "context-fold");
				expect(records).toHaveLength(events.length);
				for (const r of records) expect(JSON.stringify(r.data)).not.toContain("lorem ipsum dolor sit amet\\na");
			},
			TIMEOUT,
		);

		test(
			"between fold events each request extends the previous one byte for byte; message count and tool pairs never change",
			async () => {
				const s = await scenario({
					fake: { script: chain("b", 18, 2500) },
					model: { contextWindow: 40_000 },
					compaction: { enabled: false },
				});
				expectSuccess(await runPrint({ version, sandbox: s.sandbox, prompt: "run", extensions: [bundle] }));
				const reqs = turnRequests(s);
				const events = new Set(foldEvents(reqs));
				expect(events.size).toBeGreaterThan(1);
				for (let i = 1; i < reqs.length; i++) {
					const prev = messageBytes(reqs[i - 1] as RecordedRequest);
					const cur = messageBytes(reqs[i] as RecordedRequest);
					// Pi adds exactly the new assistant message and tool result each turn.
					expect(cur.length).toBe(prev.length + 2);
					if (!events.has(i)) expect(cur.slice(0, prev.length)).toEqual(prev);
				}
				const last = reqs.at(-1) as RecordedRequest;
				const calls = last.body.messages.flatMap((m) => m.tool_calls?.map((c) => c.id) ?? []);
				const results = last.body.messages.filter((m) => m.role === "tool").map((m) => m.tool_call_id);
				expect(results).toEqual(calls);
			},
			TIMEOUT,
		);

		test(
			"60 turns of 4k outputs on a 100k window: rare events, never back to back, under budget, far below the baseline",
			async () => {
				const window = 100_000;
				const budget = DEFAULT_SETTINGS.budgetFraction * window;
				const step = DEFAULT_SETTINGS.foldStep * window;
				const on = await scenario({
					fake: { script: chain("c", 60, 4000) },
					model: { contextWindow: window },
					compaction: { enabled: false },
				});
				expectSuccess(
					await runPrint({ version, sandbox: on.sandbox, prompt: "grow", extensions: [bundle], timeoutMs: 100_000 }),
				);
				const off = await scenario({
					fake: { script: chain("c", 60, 4000) },
					model: { contextWindow: window },
					compaction: { enabled: false },
				});
				expectSuccess(
					await runPrint({
						version,
						sandbox: off.sandbox,
						prompt: "grow",
						extensions: [bundle],
						env: { CONTEXTFOLD: "0" },
						timeoutMs: 100_000,
					}),
				);

				const reqs = turnRequests(on);
				const base = turnRequests(off);
				expect(reqs).toHaveLength(61);
				expect(base).toHaveLength(61);
				const events = foldEvents(reqs);
				const first = events[0] as number;
				expect(first).toBeGreaterThan(0);
				const growth = (60 - first) * 4000;
				expect(events.length).toBeLessThanOrEqual(Math.ceil(growth / step) + 1);
				for (let k = 1; k < events.length; k++) {
					if ((events[k] as number) - (events[k - 1] as number) === 1) {
						expect(reportedPrompt(reqs[(events[k] as number) - 1] as RecordedRequest)).toBeGreaterThan(budget);
					}
				}
				for (const r of reqs) expect(reportedPrompt(r)).toBeLessThanOrEqual(budget);
				expect(reportedPrompt(reqs.at(-1) as RecordedRequest)).toBeLessThan(
					reportedPrompt(base.at(-1) as RecordedRequest) / 3,
				);
				expect(foldEvents(base)).toEqual([]);
			},
			TIMEOUT,
		);

		test(
			"the cold threshold applies while no cache read was ever reported",
			async () => {
				// Fold-at set well above the cold threshold so the two are told apart.
				const WARM_AT = 0.5;
				const window = 40_000;
				const cold = await scenario({
					fake: { script: chain("d", 14, 1500), cache: { mode: "none" } },
					model: { contextWindow: window },
					compaction: { enabled: false },
					env: { CONTEXTFOLD_TAIL: "3000", CONTEXTFOLD_FOLD_AT: String(WARM_AT) },
				});
				expectSuccess(await runPrint({ version, sandbox: cold.sandbox, prompt: "run", extensions: [bundle] }));
				const usage = firstRecord(cold).usageBefore;
				expect(usage).toBeGreaterThanOrEqual(DEFAULT_SETTINGS.coldFoldAt * window);
				expect(usage).toBeLessThan(WARM_AT * window);
				const warm = await scenario({
					fake: { script: chain("d", 14, 1500) },
					model: { contextWindow: window },
					compaction: { enabled: false },
					env: { CONTEXTFOLD_TAIL: "3000", CONTEXTFOLD_FOLD_AT: String(WARM_AT) },
				});
				expectSuccess(await runPrint({ version, sandbox: warm.sandbox, prompt: "run", extensions: [bundle] }));
				expect(firstRecord(warm).usageBefore).toBeGreaterThanOrEqual(WARM_AT * window);
			},
			TIMEOUT,
		);

		test(
			"the budget cap folds at once, below fold-at",
			async () => {
				const window = 100_000;
				const s = await scenario({
					fake: { script: chain("e", 10, 3000) },
					model: { contextWindow: window },
					compaction: { enabled: false },
					env: { CONTEXTFOLD_BUDGET_CAP: "20000" },
				});
				expectSuccess(await runPrint({ version, sandbox: s.sandbox, prompt: "run", extensions: [bundle] }));
				const record = firstRecord(s);
				expect(record.reason).toBe("budget");
				expect(record.usageBefore).toBeGreaterThan(20_000);
				expect(record.usageBefore).toBeLessThan(DEFAULT_SETTINGS.foldAt * window);
				expect(record.usageAfter).toBeLessThanOrEqual(20_000);
			},
			TIMEOUT,
		);

		test(
			"CONTEXTFOLD=0 sends requests byte-identical to running without the extension",
			async () => {
				const s = await scenario({
					fake: { script: chain("f", 8, 2500) },
					model: { contextWindow: 20_000 },
					compaction: { enabled: false },
				});
				expectSuccess(await runPrint({ version, sandbox: s.sandbox, prompt: "run", args: ["--no-session"] }));
				const without = turnRequests(s).map((r) => JSON.stringify(r.body));
				s.fake.setScript(chain("f", 8, 2500));
				const start = s.fake.requests.length;
				expectSuccess(
					await runPrint({
						version,
						sandbox: s.sandbox,
						prompt: "run",
						args: ["--no-session"],
						extensions: [bundle],
						env: { CONTEXTFOLD: "0" },
					}),
				);
				const withOff = s.fake.requests.slice(start).map((r) => JSON.stringify(r.body));
				expect(withOff).toEqual(without);
				expect(without.length).toBe(9);
			},
			TIMEOUT,
		);

		test(
			"state survives a restart: the resumed request repeats the folded context byte for byte",
			async () => {
				const s = await scenario({
					fake: { script: chain("g", 12, 2500) },
					model: { contextWindow: 40_000 },
					compaction: { enabled: false },
				});
				expectSuccess(await runPrint({ version, sandbox: s.sandbox, prompt: "first", extensions: [bundle] }));
				const before = turnRequests(s).at(-1) as RecordedRequest;
				expect(foldedCodes(before).length).toBeGreaterThan(0);
				s.fake.setScript(replySequence([text("resumed fine")]));
				const start = s.fake.requests.length;
				expectSuccess(
					await runPrint({ version, sandbox: s.sandbox, prompt: "second", extensions: [bundle], continue: true }),
				);
				const after = s.fake.requests[start] as RecordedRequest;
				const prev = messageBytes(before);
				const cur = messageBytes(after);
				// Same folded history, then the final answer and the new prompt.
				expect(cur.slice(0, prev.length)).toEqual(prev);
				expect(cur.length).toBe(prev.length + 2);
			},
			TIMEOUT,
		);

		test(
			"bad settings warn once, naming the variable, and the default applies; debug and dump seams work",
			async () => {
				const dump = "dump.json";
				const s = await scenario({
					fake: { script: chain("w", 12, 2500) },
					model: { contextWindow: 40_000 },
					compaction: { enabled: false },
					env: { CONTEXTFOLD_FOLD_AT: "abc", CONTEXTFOLD_TAIL: "-1", CONTEXTFOLD_DEBUG: "1" },
				});
				const dumpPath = `${s.sandbox.root}/${dump}`;
				const r = expectSuccess(
					await runPrint({
						version,
						sandbox: s.sandbox,
						prompt: "run",
						extensions: [bundle],
						env: { CONTEXTFOLD_DUMP: dumpPath },
					}),
				);
				const lines = r.stderr.split("\n");
				expect(lines.filter((l) => l.includes("CONTEXTFOLD_FOLD_AT=abc is invalid"))).toHaveLength(1);
				expect(lines.filter((l) => l.includes("CONTEXTFOLD_TAIL=-1 is invalid"))).toHaveLength(1);
				expect(lines.find((l) => l.includes("CONTEXTFOLD_FOLD_AT"))).toContain(`Using ${DEFAULT_SETTINGS.foldAt}`);
				expect(lines.filter((l) => l.startsWith("[context-fold] req="))).toHaveLength(13);
				expect(firstRecord(s).usageBefore).toBeGreaterThanOrEqual(DEFAULT_SETTINGS.foldAt * 40_000);
				const { readFileSync, statSync } = await import("node:fs");
				const view = JSON.parse(readFileSync(dumpPath, "utf8")) as Array<{ role: string; content: unknown }>;
				expect(
					view.filter((m) => m.role === "toolResult").some((m) => JSON.stringify(m.content).includes("FOLDED}")),
				).toBe(true);
				expect(statSync(dumpPath).mode & 0o777).toBe(0o600);
			},
			TIMEOUT,
		);

		test(
			"a fault injected into the hook costs no turn: the run completes unfolded with one clear report",
			async () => {
				const s = await scenario({
					fake: { script: chain("h", 10, 2500) },
					model: { contextWindow: 30_000 },
					compaction: { enabled: false },
					env: { CONTEXTFOLD_TEST_FAULT: "context" },
				});
				const r = expectSuccess(await runPrint({ version, sandbox: s.sandbox, prompt: "run", extensions: [bundle] }));
				expect(r.stdout).toContain("done with h");
				expect(turnRequests(s)).toHaveLength(11);
				expect(foldEvents(turnRequests(s))).toEqual([]);
				const reports = r.stderr.split("\n").filter((l) => l.includes("folding skipped"));
				expect(reports).toHaveLength(1);
				expect(reports[0]).toContain("injected fault");
			},
			TIMEOUT,
		);
	});
});
