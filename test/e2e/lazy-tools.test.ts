// Lazy declaration of the recall tools (issue 14, "The fixed overhead"), inside real Pi 0.80.6 and
// 1.6.0 under the priced rule: a session that never folds never carries recall_folded and unfold; a
// session that folds declares them one request before its first digest, and no request ever carries
// a digest without them; a resume keeps what the session's requests were sent with. Proven from what
// the fake model received and from the session file.
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { RECALL_TOOLS_TOKENS } from "../../src/core/recall-tools.ts";
import { bigOutputCommand, dynamicSequence, ensureBundle, foldedCodes, scenarioPool } from "./cf.ts";
import {
	bash,
	expectSuccess,
	forEachPiVersion,
	type RecordedRequest,
	type Reply,
	replySequence,
	runJson,
	runPrint,
	type Scenario,
	startRpc,
	systemPromptOf,
	text,
} from "./harness/index.ts";

const TIMEOUT = 120_000;
const bundle = ensureBundle();
const scenario = scenarioPool();
const RECALL = "recall_folded";
const UNFOLD = "unfold";
const TOOLS_NOTE = "context-fold-tools";
const NAV = join(import.meta.dir, "fixtures/nav.ts");
const DROPPER = join(import.meta.dir, "fixtures/tool-dropper.ts");
/** Another extension's tool, registered after context-fold's: the declaration must keep it, in place. */
const OTHER_TOOL = join(import.meta.dir, "fixtures/nested-write.ts");
/** An hour ahead: every request after the first response is idle past the 5-minute cache lifetime. */
const HOUR_LATER = { CONTEXTFOLD_TEST_CLOCK_OFFSET_MS: "3600000" };

/** `turns` bash calls, each printing ~`tokens` tokens, then a final answer. */
function chain(prefix: string, turns: number, tokens: number) {
	const replies = [];
	for (let i = 0; i < turns; i++) replies.push(bash(bigOutputCommand(`${prefix}${i}`, tokens), `call_${prefix}${i}`));
	replies.push(text(`done with ${prefix}`));
	return replies;
}

function turnRequests(s: Scenario): RecordedRequest[] {
	return s.fake.requests.filter((r) => !r.isSummaryRequest);
}

function toolNames(req: RecordedRequest): string[] {
	return (req.body.tools ?? []).map((t) => t.function.name);
}

function declares(req: RecordedRequest): boolean {
	const names = toolNames(req);
	return names.includes(RECALL) && names.includes(UNFOLD);
}

function notes(s: Scenario) {
	return s.sandbox.readSession().filter((e) => e.type === "custom" && e.customType === TOOLS_NOTE);
}

function layers(s: Scenario) {
	return s.sandbox.readSession().filter((e) => e.type === "custom" && e.customType === "context-fold");
}

/** The fold layers' decision records, in order. */
function decisions(s: Scenario): Array<{ rule?: string; cold?: string } | undefined> {
	return layers(s).map((e) => (e.data as { decision?: { rule?: string; cold?: string } }).decision);
}

/** Characters of a request's declarations: its tools array and its system prompt. */
function declarationChars(req: RecordedRequest): { tools: number; system: number } {
	return { tools: JSON.stringify(req.body.tools ?? []).length, system: systemPromptOf(req.body)?.length ?? 0 };
}

/** A window and tail in which the rent rule wants a fold after about eight 1.5k-token results, warm. */
const RENT_WINDOW = { model: { contextWindow: 24_000 }, compaction: { enabled: false } };
const RENT_ENV = { CONTEXTFOLD_TAIL: "2000" };

/**
 * Six bash calls of ~1.5k tokens, then `after`, in a 100k window with a 2k tail: cold (an hour past
 * the last response, unless `clock` is false) on every request after the first, it folds from its
 * fourth request on.
 */
function coldChain(prefix: string, options: { after?: Reply[]; env?: Record<string, string>; clock?: boolean } = {}) {
	return scenario({
		foldRule: "priced",
		fake: { script: replySequence([...chain(prefix, 6, 1500), ...(options.after ?? [])]) },
		model: { contextWindow: 100_000 },
		compaction: { enabled: false },
		env: { ...(options.clock === false ? {} : HOUR_LATER), CONTEXTFOLD_TAIL: "2000", ...options.env },
	});
}

/** Nothing folded and nothing declared, the session file has neither, and one warning said why. */
function expectNothingFolded(s: Scenario, stderr: string): void {
	for (const q of turnRequests(s)) {
		expect(declares(q)).toBe(false);
		expect(foldedCodes(q)).toEqual([]);
	}
	expect(stderr.split("\n").filter((l) => l.includes("could not be declared"))).toHaveLength(1);
	expect(layers(s)).toEqual([]);
	expect(notes(s)).toEqual([]);
}

/** No request carries a digest without recall_folded among its tools. */
function expectNoDigestUndeclared(reqs: readonly RecordedRequest[]): void {
	for (const r of reqs) if (foldedCodes(r).length > 0) expect(toolNames(r)).toContain(RECALL);
}

forEachPiVersion((version) => {
	describe(`pi ${version}: the recall tools are declared from the first fold on`, () => {
		test(
			"a short session that never folds never sends recall_folded or unfold, nor after a resume",
			async () => {
				const s = await scenario({
					foldRule: "priced",
					fake: { script: replySequence([...chain("s", 3, 300), text("again")]) },
					compaction: { enabled: false },
				});
				expectSuccess(await runPrint({ version, sandbox: s.sandbox, prompt: "short task", extensions: [bundle] }));
				const first = turnRequests(s);
				expect(first).toHaveLength(4);
				expectSuccess(
					await runPrint({ version, sandbox: s.sandbox, prompt: "one more", continue: true, extensions: [bundle] }),
				);
				const reqs = turnRequests(s);
				expect(reqs).toHaveLength(5);
				for (const r of reqs) {
					expect(toolNames(r)).toContain("bash");
					expect(toolNames(r)).not.toContain(RECALL);
					expect(toolNames(r)).not.toContain(UNFOLD);
					expect(foldedCodes(r)).toEqual([]);
				}
				// The resumed request extends the cached prompt: same tools, same system prompt.
				const resumed = reqs[4] as RecordedRequest;
				const last = reqs[3] as RecordedRequest;
				expect(JSON.stringify(resumed.body.tools)).toBe(JSON.stringify(last.body.tools));
				expect(systemPromptOf(resumed.body)).toBe(systemPromptOf(last.body));
				expect(notes(s)).toEqual([]);
			},
			TIMEOUT,
		);

		test(
			"a session that folds declares them one request before its first digest; a resume keeps them",
			async () => {
				const s = await coldChain("f", { after: [text("resumed")] });
				const extensions = [bundle, OTHER_TOOL];
				expectSuccess(await runPrint({ version, sandbox: s.sandbox, prompt: "run the chain", extensions }));
				const reqs = turnRequests(s);
				expect(reqs).toHaveLength(7);
				expect(toolNames(reqs[0] as RecordedRequest)).toEqual(["read", "bash", "edit", "write", "nested_write"]);
				expect(toolNames(reqs.at(-1) as RecordedRequest)).toEqual([
					"read",
					"bash",
					"edit",
					"write",
					"nested_write",
					RECALL,
					UNFOLD,
				]);
				const first = reqs.findIndex((r) => foldedCodes(r).length > 0);
				expect(first).toBeGreaterThan(1);
				for (const [i, r] of reqs.entries()) expect(declares(r)).toBe(i >= first);
				expectNoDigestUndeclared(reqs);
				const noted = notes(s);
				expect(noted).toHaveLength(1);
				expect(noted[0]?.data).toEqual({ v: 1, declared: true });
				// The note precedes the first fold layer on the branch.
				const entries = s.sandbox.readSession();
				const firstLayer = entries.findIndex((e) => e.type === "custom" && e.customType === "context-fold");
				expect(entries.findIndex((e) => e.type === "custom" && e.customType === TOOLS_NOTE)).toBeLessThan(firstLayer);
				const last = reqs.at(-1) as RecordedRequest;

				// Resume, inside the cache lifetime: declared from the first request, with the same tool list.
				expectSuccess(
					await runPrint({
						version,
						sandbox: s.sandbox,
						prompt: "go on",
						continue: true,
						extensions,
						env: { CONTEXTFOLD_TEST_CLOCK_OFFSET_MS: "0" },
					}),
				);
				const resumed = turnRequests(s)[7] as RecordedRequest;
				expect(declares(resumed)).toBe(true);
				expect(JSON.stringify(resumed.body.tools)).toBe(JSON.stringify(last.body.tools));
				expect(systemPromptOf(resumed.body)).toBe(systemPromptOf(last.body));
				expect(foldedCodes(resumed)).toEqual(foldedCodes(last));
				expect(notes(s)).toHaveLength(1);
				expect(layers(s).length).toBeGreaterThan(0);
			},
			TIMEOUT,
		);
		test(
			"declaring rebuilds the prompt (openai-completions): the next request is cold for that reason and folds everything foldable",
			async () => {
				const s = await scenario({
					foldRule: "priced",
					fake: { script: replySequence(chain("r", 14, 1500)) },
					...RENT_WINDOW,
					env: RENT_ENV,
				});
				expectSuccess(await runPrint({ version, sandbox: s.sandbox, prompt: "run", extensions: [bundle] }));
				const reqs = turnRequests(s);
				expect(reqs).toHaveLength(15);
				const first = reqs.findIndex((r) => foldedCodes(r).length > 0);
				expect(first).toBeGreaterThan(1);
				for (const [i, r] of reqs.entries()) expect(declares(r)).toBe(i >= first);
				expectNoDigestUndeclared(reqs);
				// Warm all along (no clock offset): the first fold is cold only because the declaration rewrote the prompt.
				expect(decisions(s)[0]).toMatchObject({ rule: "cold", cold: "tools" });
				// The declaring request's prompt is gone from the cache: the fake read only the tools before ours.
				const before = reqs[first - 1]?.reportedUsage;
				const at = reqs[first]?.reportedUsage;
				expect(at?.cacheRead ?? 0).toBeLessThan((before?.cacheRead ?? 0) / 4);
				expect(notes(s)).toHaveLength(1);
			},
			TIMEOUT,
		);

		test(
			"declared at the last request of a run: the resumed session declares them again and its first request folds, cold",
			async () => {
				let s: Scenario | undefined;
				const noted = () => {
					try {
						return s !== undefined && notes(s).length > 0;
					} catch {
						return false;
					}
				};
				// Bash until the request that declares the tools (the note is on the branch), then answer.
				const steps: Array<Reply | ((req: RecordedRequest) => Reply)> = [];
				for (let i = 0; i < 20; i++)
					steps.push(() => (noted() ? text("stop here") : bash(bigOutputCommand(`d${i}`, 1500), `call_d${i}`)));
				s = await scenario({
					foldRule: "priced",
					fake: { script: dynamicSequence(steps) },
					...RENT_WINDOW,
					env: RENT_ENV,
				});
				expectSuccess(await runPrint({ version, sandbox: s.sandbox, prompt: "run", extensions: [bundle] }));
				const run1 = turnRequests(s);
				expect(notes(s)).toHaveLength(1);
				expect(layers(s)).toEqual([]);
				for (const r of run1) expect(declares(r)).toBe(false);
				expect(run1.at(-1)?.body.messages.length).toBeGreaterThan(4);
				s.fake.setScript(replySequence([text("resumed")]));
				expectSuccess(
					await runPrint({ version, sandbox: s.sandbox, prompt: "go on", continue: true, extensions: [bundle] }),
				);
				const resumed = turnRequests(s)[run1.length] as RecordedRequest;
				expect(declares(resumed)).toBe(true);
				expect(foldedCodes(resumed).length).toBeGreaterThan(0);
				expect(decisions(s)[0]).toMatchObject({ rule: "cold", cold: "tools" });
				expect(notes(s)).toHaveLength(1);
			},
			TIMEOUT,
		);

		test(
			"CONTEXTFOLD_TEST_EAGER_TOOLS=1 declares them from the first request; the two declarations cost RECALL_TOOLS_TOKENS",
			async () => {
				const s = await scenario({
					foldRule: "priced",
					fake: { script: replySequence([...chain("e", 2, 300), ...chain("l", 2, 300)]) },
					compaction: { enabled: false },
				});
				expectSuccess(
					await runPrint({
						version,
						sandbox: s.sandbox,
						prompt: "eager",
						extensions: [bundle],
						env: { CONTEXTFOLD_TEST_EAGER_TOOLS: "1" },
					}),
				);
				const eager = turnRequests(s);
				expect(eager).toHaveLength(3);
				for (const r of eager) expect(declares(r)).toBe(true);
				expect(notes(s)).toEqual([]);
				// A new session without the seam: the same first request, without the declarations.
				expectSuccess(await runPrint({ version, sandbox: s.sandbox, prompt: "eager", extensions: [bundle] }));
				const lazy = turnRequests(s).slice(3);
				for (const r of lazy) expect(declares(r)).toBe(false);
				const on = declarationChars(eager[0] as RecordedRequest);
				const off = declarationChars(lazy[0] as RecordedRequest);
				expect(JSON.stringify(eager[0]?.body.messages.slice(1))).toBe(JSON.stringify(lazy[0]?.body.messages.slice(1)));
				const tokens = (on.tools - off.tools + on.system - off.system) / 4;
				// The planner charges a first fold event RECALL_TOOLS_TOKENS per later request for them.
				expect(Math.abs(tokens - RECALL_TOOLS_TOKENS)).toBeLessThanOrEqual(RECALL_TOOLS_TOKENS * 0.05);
			},
			TIMEOUT,
		);

		test(
			"a --tools list that names them keeps them declared from the start, as the user asked",
			async () => {
				const s = await scenario({
					foldRule: "priced",
					fake: { script: replySequence(chain("u", 2, 300)) },
					compaction: { enabled: false },
				});
				expectSuccess(
					await runPrint({
						version,
						sandbox: s.sandbox,
						prompt: "go",
						extensions: [bundle],
						args: ["--tools", `read,bash,${RECALL},${UNFOLD}`],
					}),
				);
				const reqs = turnRequests(s);
				expect(reqs).toHaveLength(3);
				for (const r of reqs) expect(toolNames(r)).toEqual(["read", "bash", RECALL, UNFOLD]);
				expect(notes(s)).toEqual([]);
			},
			TIMEOUT,
		);

		for (const rule of ["priced", "fixed"] as const) {
			test(
				`${rule} rule, a --tools list that leaves them out: nothing folds, one warning, every turn goes ahead`,
				async () => {
					const s = await scenario({
						foldRule: rule,
						fake: { script: replySequence(chain("x", 14, 2500)) },
						model: { contextWindow: 40_000 },
						compaction: { enabled: false },
						env: { ...HOUR_LATER, CONTEXTFOLD_TAIL: "2000" },
					});
					const r = expectSuccess(
						await runPrint({
							version,
							sandbox: s.sandbox,
							prompt: "run",
							extensions: [bundle],
							args: ["--tools", "read,bash"],
						}),
					);
					const reqs = turnRequests(s);
					expect(reqs).toHaveLength(15);
					for (const q of reqs) expect(toolNames(q)).toEqual(["read", "bash"]);
					expectNothingFolded(s, r.stderr);
				},
				TIMEOUT,
			);
		}

		test(
			"declaring fails (CONTEXTFOLD_TEST_FAULT=tools): no digest ever goes out, one warning, every turn goes ahead",
			async () => {
				const s = await coldChain("q", { env: { CONTEXTFOLD_TEST_FAULT: "tools" } });
				const r = expectSuccess(await runPrint({ version, sandbox: s.sandbox, prompt: "run", extensions: [bundle] }));
				expect(turnRequests(s)).toHaveLength(7);
				expectNothingFolded(s, r.stderr);
			},
			TIMEOUT,
		);

		test(
			"the declaration follows the branch: off on a branch from before it, on again back on the folded branch",
			async () => {
				const s = await coldChain("t", { after: [text("on B"), text("back on A")] });
				const rpc = await startRpc({ version, sandbox: s.sandbox, extensions: [bundle, NAV] });
				s.defer(() => rpc.close());
				await rpc.promptAndWait("run the chain");
				const onA = turnRequests(s);
				expect(onA).toHaveLength(7);
				const lastA = onA.at(-1) as RecordedRequest;
				expect(declares(lastA)).toBe(true);
				expect(foldedCodes(lastA).length).toBeGreaterThan(0);
				const entries = s.sandbox.readSession();
				const leafA = entries.filter((e) => e.type === "message").at(-1)?.id;
				const firstResult = entries.find((e) => e.type === "message" && e.message?.role === "toolResult");
				expect((await rpc.prompt(`/cf-nav ${firstResult?.id}`)).success).toBe(true);
				await rpc.promptAndWait("continue on B");
				const onB = turnRequests(s)[7] as RecordedRequest;
				expect(toolNames(onB)).not.toContain(RECALL);
				expect(toolNames(onB)).not.toContain(UNFOLD);
				expect(foldedCodes(onB)).toEqual([]);
				expect((await rpc.prompt(`/cf-nav ${leafA}`)).success).toBe(true);
				await rpc.promptAndWait("back on A");
				const backOnA = turnRequests(s)[8] as RecordedRequest;
				expect(JSON.stringify(backOnA.body.tools)).toBe(JSON.stringify(lastA.body.tools));
				expect(foldedCodes(backOnA).length).toBeGreaterThan(0);
				expectNoDigestUndeclared(turnRequests(s));
			},
			TIMEOUT,
		);
		test(
			"another extension takes them out after a fold: that request goes out without digests, the next one has both back",
			async () => {
				const s = await coldChain("o", {
					after: [bash("echo after", "call_after"), text("done again")],
					clock: false,
				});
				expectSuccess(
					await runPrint({ version, sandbox: s.sandbox, prompt: "run", extensions: [bundle], env: HOUR_LATER }),
				);
				const before = turnRequests(s);
				expect(before).toHaveLength(7);
				expect(foldedCodes(before.at(-1) as RecordedRequest).length).toBeGreaterThan(0);
				const foldsBefore = layers(s).length;
				// Warm now (no clock offset): no new fold is due, only the folds on record need the tools.
				expectSuccess(
					await runJson({
						version,
						sandbox: s.sandbox,
						prompt: ["/cf-drop-tools", "go on"],
						continue: true,
						extensions: [bundle, DROPPER],
					}),
				);
				const [dropped, back] = turnRequests(s).slice(7) as [RecordedRequest, RecordedRequest];
				expect(declares(dropped)).toBe(false);
				expect(foldedCodes(dropped)).toEqual([]);
				expect(declares(back)).toBe(true);
				expect(foldedCodes(back)).toEqual(foldedCodes(before.at(-1) as RecordedRequest));
				expect(layers(s)).toHaveLength(foldsBefore);
				expectNoDigestUndeclared(turnRequests(s));
			},
			TIMEOUT,
		);
	});
});
