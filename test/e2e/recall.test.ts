// Nothing is lost: every folded handle resolves to the original bytes, verified, live, after a
// restart, and after a real hard compaction; unfold is sticky; tampering is refused.
import { describe, expect, test } from "bun:test";
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
	bigOutputCommand,
	contentText,
	dynamicSequence,
	ensureBundle,
	firstCodeIn,
	foldedCodes,
	lastToolText,
	scenarioPool,
} from "./cf.ts";
import {
	bash,
	expectSuccess,
	forEachPiVersion,
	type RecordedRequest,
	type Reply,
	runPrint,
	type Scenario,
	startRpc,
	text,
	toolCall,
} from "./harness/index.ts";

const TIMEOUT = 120_000;
const BURIED = "BUILD_ID=7f3a9c21e5";
const bundle = ensureBundle();
const scenario = scenarioPool();
const turns = (s: Scenario) => s.fake.requests.filter((r) => !r.isSummaryRequest);

/** Output 0 carries the buried value; the rest is bulk that pushes it out of the tail. */
function buriedChain(n: number): Reply[] {
	const steps: Reply[] = [bash(`echo 'starting build'; echo '${BURIED}'; ${bigOutputCommand("v0", 2500)}`, "call_v0")];
	for (let i = 1; i < n; i++) steps.push(bash(bigOutputCommand(`v${i}`, 2500), `call_v${i}`));
	return steps;
}

/** The raw text of the first tool result in the session file. */
function rawFirstResult(s: Scenario): string {
	const e = s.sandbox.readSession().find((x) => x.type === "message" && x.message?.role === "toolResult");
	return contentText(e?.message?.content as never);
}

forEachPiVersion((version) => {
	describe(`pi ${version}: recall`, () => {
		test(
			"a buried value: search finds it across folded blocks, recall by code returns the exact original bytes",
			async () => {
				let code = "";
				const s = await scenario({
					fake: {
						script: dynamicSequence([
							...buriedChain(12),
							toolCall("recall_folded", { search: "7f3a9c21" }, "call_search"),
							(req) => {
								code = firstCodeIn(lastToolText(req));
								return toolCall("recall_folded", { code }, "call_recall");
							},
							text("found it"),
						]),
					},
					model: { contextWindow: 40_000 },
					compaction: { enabled: false },
				});
				expectSuccess(await runPrint({ version, sandbox: s.sandbox, prompt: "build", extensions: [bundle] }));
				const reqs = turns(s);
				const searchAnswer = lastToolText(reqs[13] as RecordedRequest);
				expect(searchAnswer).toContain(`search "7f3a9c21": 1 matching line in 1 of`);
				expect(searchAnswer).toContain(`L2: ${BURIED}`);
				// The first tool result is folded in the request that carried the search.
				expect(foldedCodes(reqs[13] as RecordedRequest)[0]).toBe(code);
				const recallAnswer = lastToolText(reqs[14] as RecordedRequest);
				const original = rawFirstResult(s);
				expect(original).toContain(BURIED);
				expect(recallAnswer).toBe(
					`{#${code}} bash · ${original.length.toLocaleString("en-US")} chars, ${original.split("\n").filter((_, i, a) => i < a.length - 1 || a[i] !== "").length} lines (sha256 verified):\n${original}`,
				);
			},
			TIMEOUT,
		);

		test(
			"handles resolve after a restart, and after a real hard compaction followed by a restart",
			async () => {
				const s = await scenario({
					fake: { script: dynamicSequence([...buriedChain(12), text("chain done")]) },
					model: { contextWindow: 40_000 },
					compaction: { enabled: false },
				});
				expectSuccess(await runPrint({ version, sandbox: s.sandbox, prompt: "build", extensions: [bundle] }));
				const code = foldedCodes(turns(s).at(-1) as RecordedRequest)[0] as string;
				expect(code).toMatch(/^[0-9a-f]{6}$/);
				const original = rawFirstResult(s);

				// Restart: recall from the resumed session.
				s.fake.setScript(
					dynamicSequence([toolCall("recall_folded", { code, grep: "BUILD_ID" }, "call_r1"), text("ok")]),
				);
				let start = s.fake.requests.length;
				expectSuccess(
					await runPrint({ version, sandbox: s.sandbox, prompt: "recall", extensions: [bundle], continue: true }),
				);
				const afterRestart = lastToolText(s.fake.requests[start + 1] as RecordedRequest);
				expect(afterRestart).toContain(`L2: ${BURIED}`);

				// A real compaction (Pi's own, over RPC), then a restart, then recall of the whole block.
				const rpc = await startRpc({ version, sandbox: s.sandbox, extensions: [bundle], continue: true });
				s.defer(() => rpc.close());
				const compacted = await rpc.compact();
				expect(compacted.success).toBe(true);
				await rpc.close();
				expect(s.sandbox.readSession().some((e) => e.type === "compaction")).toBe(true);
				s.fake.setScript(dynamicSequence([toolCall("recall_folded", { code }, "call_r2"), text("ok")]));
				start = s.fake.requests.length;
				expectSuccess(
					await runPrint({ version, sandbox: s.sandbox, prompt: "recall again", extensions: [bundle], continue: true }),
				);
				const post = s.fake.requests.slice(start).filter((r) => !r.isSummaryRequest);
				// The raw output left live context with the compaction (its command may live on in the
				// deterministic summary, its lines do not)...
				expect(JSON.stringify(post[0]?.body.messages)).not.toContain("v0 line 00007 lorem");
				expect(JSON.stringify(post[0]?.body.messages)).toContain("Earlier history was compacted by context-fold");
				// ...yet the handle still resolves from the session ledger, byte for byte.
				const answer = lastToolText(post[1] as RecordedRequest);
				expect(answer.endsWith(`(sha256 verified):\n${original}`)).toBe(true);
			},
			TIMEOUT,
		);

		test(
			"grep= and lines= on a truncated bash result answer from the full-output file, including dropped lines",
			async () => {
				// 3,000 lines: Pi keeps the last 2,000 in the result and the rest only in its full-output file.
				const huge = `awk 'BEGIN{for(i=1;i<=3000;i++) printf "row %04d %s\\n", i, (i==77 ? "NEEDLE-dropped-by-truncation" : "filler")}'`;
				let code = "";
				const s = await scenario({
					fake: {
						script: dynamicSequence([
							bash(huge, "call_huge"),
							...buriedChain(10),
							(req) => {
								code = foldedCodes(req)[0] as string;
								return toolCall("recall_folded", { code, grep: "NEEDLE" }, "call_g");
							},
							() => toolCall("recall_folded", { code, lines: "75-79" }, "call_l"),
							text("done"),
						]),
					},
					model: { contextWindow: 60_000 },
					compaction: { enabled: false },
				});
				expectSuccess(await runPrint({ version, sandbox: s.sandbox, prompt: "go", extensions: [bundle] }));
				const reqs = turns(s);
				const grep = lastToolText(reqs[12] as RecordedRequest);
				expect(grep).toContain("from the full output file");
				expect(grep).toContain("L77: row 0077 NEEDLE-dropped-by-truncation");
				const lines = lastToolText(reqs[13] as RecordedRequest);
				expect(lines).toContain(`lines 75-79 of 3,000 (from the full output file`);
				expect(lines).toContain("L77: row 0077 NEEDLE-dropped-by-truncation");
				// The folded result itself never contained the dropped line.
				const raw = rawFirstResult(s);
				expect(raw).not.toContain("NEEDLE");
			},
			TIMEOUT,
		);

		test(
			"unfold is sticky: the block goes out in full from then on, including after a resume",
			async () => {
				let code = "";
				const s = await scenario({
					fake: {
						script: dynamicSequence([
							...buriedChain(12),
							(req) => {
								code = foldedCodes(req)[0] as string;
								return toolCall("unfold", { code }, "call_unfold");
							},
							bash("echo after", "call_after"),
							text("done"),
						]),
					},
					model: { contextWindow: 40_000 },
					compaction: { enabled: false },
				});
				expectSuccess(await runPrint({ version, sandbox: s.sandbox, prompt: "go", extensions: [bundle] }));
				const reqs = turns(s);
				expect(lastToolText(reqs[13] as RecordedRequest)).toContain(`{#${code}} unfolded`);
				const original = rawFirstResult(s);
				const firstTool = (r: RecordedRequest) => contentText(r.body.messages.find((m) => m.role === "tool")?.content);
				expect(firstTool(reqs[12] as RecordedRequest).startsWith(`{#${code} FOLDED}`)).toBe(true);
				expect(firstTool(reqs[13] as RecordedRequest)).toBe(original);
				expect(firstTool(reqs[14] as RecordedRequest)).toBe(original);
				s.fake.setScript(dynamicSequence([text("resumed")]));
				const start = s.fake.requests.length;
				expectSuccess(
					await runPrint({ version, sandbox: s.sandbox, prompt: "again", extensions: [bundle], continue: true }),
				);
				const resumed = s.fake.requests[start] as RecordedRequest;
				expect(firstTool(resumed)).toBe(original);
				expect(foldedCodes(resumed)).not.toContain(code);
				const unfolds = s.sandbox
					.readSession()
					.filter((e) => e.type === "custom" && (e.data as { type?: string }).type === "unfold");
				expect(unfolds).toHaveLength(1);
			},
			TIMEOUT,
		);

		test(
			"tampering: an edited session file under a fold is refused with the sha explanation; unknown codes name the closest",
			async () => {
				const s = await scenario({
					fake: { script: dynamicSequence([...buriedChain(12), text("chain done")]) },
					model: { contextWindow: 40_000 },
					compaction: { enabled: false },
				});
				expectSuccess(await runPrint({ version, sandbox: s.sandbox, prompt: "build", extensions: [bundle] }));
				const code = foldedCodes(turns(s).at(-1) as RecordedRequest)[0] as string;
				const file = s.sandbox.latestSessionFile();
				const before = readFileSync(file, "utf8");
				// Same length, one byte different, JSON still valid.
				writeFileSync(file, before.replace("v0 line 00007 lorem", "v0 line 00007 LOREM"));
				s.fake.setScript(
					dynamicSequence([
						toolCall("recall_folded", { code }, "call_t1"),
						toolCall("recall_folded", { code: `${code.slice(0, 5)}x` }, "call_t2"),
						text("ok"),
					]),
				);
				const start = s.fake.requests.length;
				expectSuccess(
					await runPrint({ version, sandbox: s.sandbox, prompt: "recall", extensions: [bundle], continue: true }),
				);
				const refused = lastToolText(s.fake.requests[start + 1] as RecordedRequest);
				expect(refused).toContain(`{#${code}}: refused. The bytes now at entry`);
				expect(refused).toContain("The session file was edited after the fold.");
				const unknown = lastToolText(s.fake.requests[start + 2] as RecordedRequest);
				expect(unknown).toContain(`no folded block is called "${code.slice(0, 5)}x". Closest codes: {#${code}}`);
			},
			TIMEOUT,
		);

		test(
			"an ephemeral session (--no-session) recalls from memory, and its digests say so",
			async () => {
				let code = "";
				const s = await scenario({
					fake: {
						script: dynamicSequence([
							...buriedChain(12),
							(req) => {
								code = foldedCodes(req)[0] as string;
								return toolCall("recall_folded", { code, grep: "BUILD_ID" }, "call_m");
							},
							text("done"),
						]),
					},
					model: { contextWindow: 40_000 },
					compaction: { enabled: false },
				});
				expectSuccess(
					await runPrint({ version, sandbox: s.sandbox, prompt: "go", extensions: [bundle], args: ["--no-session"] }),
				);
				const reqs = turns(s);
				const digest = contentText(reqs[12]?.body.messages.find((m) => m.role === "tool")?.content);
				expect(digest).toContain("recall from memory only (no session file)");
				expect(lastToolText(reqs[13] as RecordedRequest)).toContain(`L2: ${BURIED}`);
			},
			TIMEOUT,
		);

		test(
			"loaded twice (settings plus -e): exactly one instance acts, and the user is told once, naming both",
			async () => {
				const s = await scenario({
					fake: { script: dynamicSequence([...buriedChain(12), text("done")]) },
					model: { contextWindow: 40_000 },
					compaction: { enabled: false },
				});
				const copyDir = join(s.sandbox.root, "copy");
				mkdirSync(copyDir);
				const copy = join(copyDir, "index.js");
				copyFileSync(bundle, copy);
				s.sandbox.updateSettings({ extensions: [copy] });
				const r = expectSuccess(await runPrint({ version, sandbox: s.sandbox, prompt: "go", extensions: [bundle] }));
				const notices = r.stderr.split("\n").filter((l) => l.includes("is loaded twice"));
				expect(notices).toHaveLength(1);
				expect(notices[0]).toContain(copy);
				expect(notices[0]).toContain(bundle);
				const tools = turns(s)[0]?.body.tools?.map((t) => t.function.name) ?? [];
				expect(tools.filter((t) => t === "recall_folded")).toHaveLength(1);
				const records = s.sandbox.readSession().filter((e) => e.type === "custom" && e.customType === "context-fold");
				const seqs = records.map((e) => (e.data as { seq: number }).seq);
				expect(seqs.length).toBeGreaterThan(0);
				expect(new Set(seqs).size).toBe(seqs.length);
			},
			TIMEOUT,
		);

		test(
			"another extension's tool named unfold is detected and named",
			async () => {
				const s = await scenario({ fake: { script: dynamicSequence([text("hi")]) } });
				const other = join(import.meta.dir, "fixtures/late-unfold.ts");
				const r = expectSuccess(
					await runPrint({ version, sandbox: s.sandbox, prompt: "x", extensions: [other, bundle] }),
				);
				const lines = r.stderr.split("\n").filter((l) => l.includes('also registers the tool "unfold"'));
				expect(lines).toHaveLength(1);
				expect(lines[0]).toContain(other);
			},
			TIMEOUT,
		);
	});
});
