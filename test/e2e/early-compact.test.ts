// Early compaction on real Pi 0.80.6 and 1.6.0 (policy/compact.ts, adapters/pi/early-compact.ts):
// a session over the budget with nothing left to fold compacts between runs, deterministically, once
// the rent paid covers the rewrite; it waits while it does not; and CONTEXTFOLD_EARLY_COMPACT=off
// leaves it to Pi's threshold. Every test also proves that no summary request reached the model.
import { describe, expect, test } from "bun:test";
import type { EarlyCompactionRecord } from "../../src/core/policy/compact.ts";
import {
	bigOutputCommand,
	contentText,
	dynamicSequence,
	ensureBundle,
	foldedCodes,
	lastToolText,
	promptTokens,
	scenarioPool,
} from "./cf.ts";
import {
	bash,
	expectSuccess,
	forEachPiVersion,
	type PiVersion,
	type RecordedRequest,
	runPrint,
	type Scenario,
	startRpc,
	text,
	toolCall,
} from "./harness/index.ts";

const TIMEOUT = 180_000;
const HEADER = "Earlier history was compacted by context-fold";
const bundle = ensureBundle();
const scenario = scenarioPool();

/**
 * A 40k window: the budget is 30k (0.75), folds happen from ~22.4k (the fold line below Pi's default
 * reserve), Pi compacts past 38k (reserve 2,000), and keeps the newest 2,000 tokens.
 */
const WINDOW = 40_000;
const BUDGET = 30_000;
const SMALL = {
	model: { contextWindow: WINDOW },
	compaction: { enabled: true, reserveTokens: 2_000, keepRecentTokens: 2_000 },
	// The priced rule: early compaction belongs to it (fold points pinned by hand turn both off).
	foldRule: "priced" as const,
};

/** An assistant answer of about `tokens` tokens of distinct prose (never folds: it is not tool output). */
function longAnswer(tag: string, tokens: number): string {
	const lines: string[] = [];
	for (let i = 0; lines.join("\n").length < tokens * 4; i++)
		lines.push(`${tag} note ${i}: the parser keeps state per line.`);
	return lines.join("\n");
}

type Step = Parameters<typeof dynamicSequence>[0][number];

/**
 * A protected tail of 600 tokens: the big output leaves it after a few small calls, and its rent
 * pays while the context is still small (a cheap rewrite, Pi's compaction far ahead in requests).
 */
const TAIL = { CONTEXTFOLD_TAIL: "600" };

/**
 * Runs 1-5 bring the context over the budget: a big tool output (folded by rent in run 1, re-read by
 * the small calls after it) and long answers, which cannot fold. After run 5 the context is over the budget with nothing
 * left to fold, but no request has paid rent over it yet. Run 6 is a tool loop of small calls, each
 * request re-reading the whole context over the budget: the rent that pays for the compaction.
 */
const RUNS: Step[][] = [
	[
		bash(bigOutputCommand("e0", 4_000), "call_e0"),
		// Outputs of ~50 tokens: too small to fold, they push the big one out of the tail and re-read it.
		...Array.from({ length: 24 }, (_, i) => bash(bigOutputCommand(`p${i}`, 40), `call_p${i}`)),
		text(longAnswer("a1", 5_000)),
	],
	[text(longAnswer("a2", 6_000))],
	[text(longAnswer("a3", 6_000))],
	[text(longAnswer("a4", 5_000))],
	[text(longAnswer("a5", 7_000))],
	[...Array.from({ length: 12 }, (_, i) => bash(`echo small-${i}`, `call_s${i}`)), text("loop done")],
];

function compactions(s: Scenario) {
	return s.sandbox.readSession().filter((e) => e.type === "compaction") as unknown as Array<{
		summary: string;
		fromHook?: boolean;
		details?: { contextFold?: { reason?: string; early?: EarlyCompactionRecord } };
	}>;
}

function turns(s: Scenario): RecordedRequest[] {
	return s.fake.requests.filter((r) => !r.isSummaryRequest);
}

/** The raw text of the first tool result in the session file (the big output). */
function rawFirstResult(s: Scenario): string {
	const e = s.sandbox.readSession().find((x) => x.type === "message" && x.message?.role === "toolResult");
	return contentText(e?.message?.content as never);
}

/** The context when the run ended, as Pi measures it: the newest response's prompt plus its output. */
function contextAtEnd(s: Scenario): number {
	const last = s.sandbox
		.readSession()
		.filter((e) => e.type === "message" && e.message?.role === "assistant")
		.at(-1);
	const u = (last?.message as { usage?: Record<string, number> } | undefined)?.usage ?? {};
	return (u.input ?? 0) + (u.cacheRead ?? 0) + (u.cacheWrite ?? 0) + (u.output ?? 0);
}

/**
 * Waits for an asynchronous compaction Pi runs after agent_settled to land in the session file: up to
 * `ms` (5 s where one is expected; 1 s after a run that should not compact, since a compaction that
 * lands later still shows in the next run's count and in the final one). Measured: an early compaction
 * is in the file within 1 ms of the run's agent_settled reaching the test, on both versions.
 */
async function settle(s: Scenario, want: number, ms = 5_000): Promise<void> {
	for (let i = 0; i < ms / 100 && compactions(s).length < want; i++) await new Promise((r) => setTimeout(r, 100));
}

/** Runs 1-6 (and sets up run 7). `compacts`: whether run 6 should compact (waited for up to 5 s). */
async function drive(version: PiVersion, env: Record<string, string> = {}, compacts = true) {
	let code = "";
	const steps: Step[] = [
		...RUNS.flat(),
		// Run 7: recall the big output folded before the compaction.
		(req) => {
			// The model finds the code in the summary: the seed index lists every folded block's code.
			code = /#([0-9a-f]{6,64}) bash/.exec(JSON.stringify(req.body.messages))?.[1] ?? "";
			return toolCall("recall_folded", { code }, "call_recall");
		},
		text("recalled"),
	];
	const s = await scenario({ fake: { script: dynamicSequence(steps) }, ...SMALL });
	const rpc = await startRpc({
		version,
		sandbox: s.sandbox,
		extensions: [bundle],
		env: { ...TAIL, ...env },
		timeoutMs: 60_000,
	});
	s.defer(() => rpc.close());
	const after: number[] = [];
	const contexts: number[] = [];
	for (let run = 1; run <= RUNS.length; run++) {
		await rpc.promptAndWait(`run ${run}`);
		await settle(s, 1, run === RUNS.length && compacts ? 5_000 : 1_000);
		after.push(compactions(s).length);
		contexts.push(contextAtEnd(s));
	}
	return { s, rpc, after, contexts, code: () => code };
}

forEachPiVersion((version: PiVersion) => {
	describe(`pi ${version}: early compaction`, () => {
		test(
			"over the budget with nothing to fold: waits while the rent is short, compacts after the run once it pays; the next request is small and a code folded before it recalls byte-exact",
			async () => {
				const { s, rpc, after, contexts, code } = await drive(version);
				const reqs = turns(s);
				// Preconditions: the big output folded on the way, and the context passed the budget.
				expect(reqs.some((r) => foldedCodes(r).length > 0)).toBe(true);
				const sizes = reqs.map((r) => r.reportedUsage);
				const prompts = sizes.map((u) => (u ? u.input + u.cacheRead + u.cacheWrite : 0));
				expect(Math.max(...prompts)).toBeGreaterThan(BUDGET);
				expect(Math.max(...prompts)).toBeLessThan(WINDOW - 2_000);
				// Runs 1-5: no compaction. Run 5 ends over the budget with nothing left to fold, but no request
				// has paid rent over it yet: the rule waits.
				expect(contexts[3]).toBeLessThan(BUDGET);
				expect(contexts[4]).toBeGreaterThan(BUDGET);
				expect(after.slice(0, 5)).toEqual([0, 0, 0, 0, 0]);
				// Run 6 paid the rent: one compaction, ours, deterministic, recorded with its prices.
				expect(after[5]).toBe(1);
				const c = compactions(s)[0];
				expect(c?.fromHook).toBe(true);
				expect(c?.summary).toContain(HEADER);
				expect(c?.details?.contextFold?.reason).toBe("early");
				const early = c?.details?.contextFold?.early as EarlyCompactionRecord;
				expect(early.rule).toBe("rent");
				expect(early.rent).toBeGreaterThanOrEqual(1.5 * early.rewrite);
				expect(early.context).toBeGreaterThan(BUDGET);
				expect(early.kept).toBeLessThan(early.context / 2);
				expect(s.fake.summaryRequests()).toHaveLength(0);
				const saidEarly = () =>
					rpc.events.filter(
						(e) =>
							e.type === "extension_ui_request" &&
							e.method === "notify" &&
							String(e.message).includes("compacted early, from the seed index with no model call"),
					);
				for (let i = 0; i < 50 && saidEarly().length === 0; i++) await new Promise((r) => setTimeout(r, 100));
				const said = rpc.events.filter(
					(e) =>
						e.type === "extension_ui_request" &&
						e.method === "notify" &&
						String(e.message).includes("compacted early, from the seed index with no model call"),
				);
				expect(said).toHaveLength(1);
				expect(String(said[0]?.message)).toContain("recall_folded still returns every folded block");

				// Run 7: the next request is small, and the old folded output still recalls byte for byte.
				const start = turns(s).length;
				await rpc.promptAndWait("run 7");
				await rpc.close();
				const post = turns(s).slice(start);
				expect(promptTokens(post[0] as RecordedRequest)).toBeLessThan(BUDGET / 2);
				expect(JSON.stringify(post[0]?.body.messages)).toContain(HEADER);
				expect(JSON.stringify(post[0]?.body.messages)).not.toContain("a2 note 5:");
				const original = rawFirstResult(s);
				expect(original).toContain("marker-e0-END");
				// The code the summary names is the one the fold recorded for the big output.
				const layer = s.sandbox
					.readSession()
					.find(
						(e) =>
							e.type === "custom" && e.customType === "context-fold" && (e.data as { type?: string }).type === "layer",
					);
				expect(code()).toBe(
					(layer?.data as { blocks?: Array<{ code: string }> } | undefined)?.blocks?.[0]?.code ?? "no layer",
				);
				expect(lastToolText(post[1] as RecordedRequest).endsWith(`(sha256 verified):\n${original}`)).toBe(true);
				expect(compactions(s)).toHaveLength(1);
				expect(s.fake.summaryRequests()).toHaveLength(0);
			},
			TIMEOUT,
		);

		test(
			"print mode (a new Pi process per run): the compaction lands before the process exits, and says so on stderr",
			async () => {
				const s = await scenario({ fake: { script: dynamicSequence(RUNS.flat()) }, ...SMALL });
				const after: number[] = [];
				let stderr = "";
				for (let run = 1; run <= RUNS.length; run++) {
					const r = expectSuccess(
						await runPrint({
							version,
							sandbox: s.sandbox,
							prompt: `run ${run}`,
							extensions: [bundle],
							env: TAIL,
							continue: run > 1,
						}),
					);
					stderr += r.stderr;
					after.push(compactions(s).length);
				}
				expect(after).toEqual([0, 0, 0, 0, 0, 1]);
				expect(compactions(s)[0]?.details?.contextFold?.reason).toBe("early");
				expect(compactions(s)[0]?.summary).toContain(HEADER);
				expect(stderr).toContain("compacted early, from the seed index with no model call");
				expect(s.fake.summaryRequests()).toHaveLength(0);
			},
			TIMEOUT,
		);

		test(
			"CONTEXTFOLD_EARLY_COMPACT=off: the same session never compacts early",
			async () => {
				const { s, rpc, after, contexts } = await drive(version, { CONTEXTFOLD_EARLY_COMPACT: "off" }, false);
				await rpc.close();
				expect(contexts[5]).toBeGreaterThan(BUDGET);
				expect(after).toEqual([0, 0, 0, 0, 0, 0]);
				expect(compactions(s)).toHaveLength(0);
				expect(s.fake.summaryRequests()).toHaveLength(0);
			},
			TIMEOUT,
		);
	});
});
