// Folded tool-call inputs on real Pi (0.80.6 and 1.6.0). On the OpenAI chat fake, one session end to
// end: the long arguments of an old write and an old edit (its `edits` sent as a JSON string, which
// Pi rewrites into an array in place once the call ran) fold on the wire at their paths with every
// other key kept; recall returns the originals byte for byte (code, grep, search), unfold brings one
// back, the seed index holds the originals' facts; after a restart the same digests go out; after a
// hard compaction recall still serves them; a provider that refuses a request carrying a folded input
// (HTTP 400) makes context-fold stop folding inputs for that model, for good. On the Anthropic fake:
// a folded tool_use input beside signed thinking that stays signed, which the fake verifies.
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseSeedIndex } from "../../src/core/seed/render.ts";
import { bigOutputCommand, dynamicSequence, ensureBundle, foldedCodes, lastToolText, scenarioPool } from "./cf.ts";
import {
	type AnthropicBlock,
	type AnthropicRequest,
	bash,
	expectSuccess,
	forEachPiVersion,
	httpError,
	type RecordedRequest,
	type Reply,
	replySequence,
	runJson,
	runPrint,
	type Scenario,
	signThinking,
	startAnthropicScenario,
	startRpc,
	text,
	toolCall,
} from "./harness/index.ts";

const TIMEOUT = 180_000;
const bundle = ensureBundle();
const scenario = scenarioPool();
const MARKER = /^\{#([0-9a-f]{6,64}) FOLDED\}/;

/** Source-like text of `n` lines; one line throws, so the digest and the seed index keep it. */
function source(tag: string, n: number): string {
	const lines: string[] = [];
	for (let i = 1; i <= n; i++)
		lines.push(i === 5 ? `  throw new Error("${tag}: boom ${i}");` : `  const ${tag}${i} = compute(${i}, "${tag}");`);
	return `${lines.join("\n")}\n`;
}

const CONTENT = source("w", 80);
const OLD = CONTENT.slice(CONTENT.indexOf("  const w20"), CONTENT.indexOf("  const w40"));
const NEW = source("n", 30);

const turns = (s: Scenario) => s.fake.requests.filter((r) => !r.isSummaryRequest);

function chain(tag: string, n: number) {
	return Array.from({ length: n }, (_, i) => bash(bigOutputCommand(`${tag}${i}`, 2500), `call_${tag}${i}`));
}

/** The arguments of one tool call as it went out (OpenAI chat: a JSON string per call). */
function sentArgs(req: RecordedRequest, id: string): Record<string, unknown> | undefined {
	for (const m of req.body.messages)
		for (const c of m.tool_calls ?? []) if (c.id === id) return JSON.parse(c.function.arguments);
	return undefined;
}

/** Codes of every fold marker inside any tool call's arguments of a request. */
function inputCodes(req: RecordedRequest): string[] {
	const codes: string[] = [];
	const visit = (v: unknown): void => {
		if (typeof v === "string") {
			const hit = MARKER.exec(v);
			if (hit) codes.push(hit[1] as string);
			else if (v.startsWith("[") || v.startsWith("{")) {
				try {
					visit(JSON.parse(v));
				} catch {}
			}
		} else if (v && typeof v === "object") for (const x of Object.values(v)) visit(x);
	};
	for (const m of req.body.messages) for (const c of m.tool_calls ?? []) visit(JSON.parse(c.function.arguments));
	return codes;
}

/** The call's arguments as the session file holds them. */
function fileArgs(s: Scenario, id: string): Record<string, unknown> {
	for (const e of s.sandbox.readSession()) {
		const content = e.type === "message" ? e.message?.content : undefined;
		if (!Array.isArray(content)) continue;
		for (const part of content as Array<{ type: string; id?: string; arguments?: Record<string, unknown> }>)
			if (part.type === "toolCall" && part.id === id) return part.arguments ?? {};
	}
	throw new Error(`no call ${id} in the session file`);
}

function seedRecords(s: Scenario) {
	const header = s.sandbox.readSession()[0] as { id?: string };
	return parseSeedIndex(
		readFileSync(join(s.sandbox.agentDir, "context-fold", String(header.id), "seed-index.jsonl"), "utf8"),
	).records;
}

forEachPiVersion((version) => {
	describe(`pi ${version}: folded tool-call inputs`, () => {
		test(
			"OpenAI chat: inputs fold at their paths, recall is byte-exact live, after a restart and a compaction; a 400 stops input folding",
			async () => {
				let writeCode = "";
				let oldCode = "";
				const s = await scenario({
					fake: {
						script: dynamicSequence([
							// Prompt 1: a write, an edit of it (edits as a JSON string), some output.
							toolCall("write", { path: "gen.ts", content: CONTENT }, "call_write"),
							toolCall(
								"edit",
								{ path: "gen.ts", edits: JSON.stringify([{ oldText: OLD, newText: NEW }]) },
								"call_edit",
							),
							...chain("p", 1),
							text("first done"),
							// Prompt 2: enough output to push them out of the protected tail and fold.
							...chain("q", 7),
							(req) => {
								const write = sentArgs(req, "call_write");
								writeCode = MARKER.exec(String(write?.content))?.[1] ?? "";
								return toolCall("recall_folded", { code: writeCode }, "call_r1");
							},
							() => toolCall("recall_folded", { code: writeCode, grep: "boom" }, "call_r2"),
							() => toolCall("recall_folded", { search: "compute(33" }, "call_r3"),
							(req) => {
								const edits = sentArgs(req, "call_edit")?.edits as Array<{ oldText: string }>;
								oldCode = MARKER.exec(edits[0]?.oldText ?? "")?.[1] ?? "";
								return toolCall("unfold", { code: oldCode }, "call_u");
							},
							bash("echo after", "call_after"),
							text("second done"),
						]),
					},
					model: { contextWindow: 40_000 },
					compaction: { enabled: false },
				});
				// One process: the edit runs, Pi parses its JSON-string edits in place, then the fold happens.
				expectSuccess(
					await runJson({ version, sandbox: s.sandbox, prompt: ["write it", "go on"], extensions: [bundle] }),
				);
				const reqs = turns(s);
				expect(s.fake.problems).toEqual([]);
				expect(writeCode).toMatch(/^[0-9a-f]{6}$/);
				expect(oldCode).toMatch(/^[0-9a-f]{6}$/);

				// On the wire: same keys, short values verbatim, long ones a digest naming tool and path.
				const atRecall = reqs[11] as RecordedRequest;
				const write = sentArgs(atRecall, "call_write") as { path: string; content: string };
				expect(Object.keys(write)).toEqual(["path", "content"]);
				expect(write.path).toBe("gen.ts");
				expect(write.content.split("\n")[0]).toMatch(
					new RegExp(
						`^\\{#${writeCode} FOLDED\\} write content · ${CONTENT.length.toLocaleString("en-US")} chars, 80 lines$`,
					),
				);
				expect(write.content).toContain('! L5:   throw new Error("w: boom 5");');
				// The live message holds `edits` as the array Pi parsed in place; the file keeps the string.
				const edit = sentArgs(atRecall, "call_edit") as { path: string; edits: Array<Record<string, string>> };
				expect(Object.keys(edit)).toEqual(["path", "edits"]);
				expect(Array.isArray(edit.edits)).toBe(true);
				expect(edit.edits[0]?.oldText).toMatch(/^\{#[0-9a-f]{6} FOLDED\} edit edits\[0\]\.oldText · /);
				expect(edit.edits[0]?.newText).toMatch(/^\{#[0-9a-f]{6} FOLDED\} edit edits\[0\]\.newText · /);
				expect(typeof fileArgs(s, "call_edit").edits).toBe("string");
				// The newest calls (the running loop) go out in full.
				expect(sentArgs(atRecall, "call_q6")?.command).toBe(bigOutputCommand("q6", 2500));

				// Recall: the original bytes, verified against the session file; grep and search reach inputs.
				expect(lastToolText(reqs[12] as RecordedRequest)).toBe(
					`{#${writeCode}} write input content · ${CONTENT.length.toLocaleString("en-US")} chars, 80 lines (sha256 verified):\n${CONTENT}`,
				);
				expect(lastToolText(reqs[13] as RecordedRequest)).toContain('L5:   throw new Error("w: boom 5");');
				expect(lastToolText(reqs[14] as RecordedRequest)).toContain("L14:   const w33 = compute(33");
				// Unfold: the edit's oldText is back in full from the next request on; newText stays folded.
				expect(lastToolText(reqs[15] as RecordedRequest)).toContain(`{#${oldCode}} unfolded`);
				const afterUnfold = sentArgs(reqs[15] as RecordedRequest, "call_edit") as {
					edits: Array<Record<string, string>>;
				};
				expect(afterUnfold.edits[0]?.oldText).toBe(OLD);
				expect(afterUnfold.edits[0]?.newText).toMatch(MARKER);

				// The seed index indexed the originals, not the digests.
				const records = seedRecords(s);
				const spans = records.flatMap((r) => r.spans);
				expect(spans).toContainEqual(
					expect.objectContaining({ code: writeCode, kind: "assistant", path: ["content"] }),
				);
				// The record that covers the write harvested its original (2.5k characters), not its digest.
				const covering = records.find((r) => r.spans.some((x) => x.code === writeCode));
				expect(covering?.source.chars).toBeGreaterThanOrEqual(CONTENT.length);
				const errors = records.flatMap((r) => r.errors);
				expect(errors).toContainEqual({ text: 'throw new Error("w: boom 5");', ref: writeCode });
				expect(records.flatMap((r) => r.files)).toContainEqual(
					expect.objectContaining({ path: "gen.ts", ops: expect.arrayContaining(["write"]) }),
				);

				// Restart, on a provider that refuses any request carrying a folded input (HTTP 400). The
				// refused request shows the resumed session sent the same digests at the same paths, byte for
				// byte (the file's string form of edits folded the same way).
				const REFUSAL = "tool call arguments do not match the original call";
				const refusing = (reply: Reply) => (req: RecordedRequest) =>
					inputCodes(req).length > 0 ? httpError(400, REFUSAL) : reply;
				s.fake.setScript(dynamicSequence([refusing(text("resumed"))]));
				let start = s.fake.requests.length;
				const refused = await runPrint({
					version,
					sandbox: s.sandbox,
					prompt: "again",
					extensions: [bundle],
					continue: true,
				});
				const resumed = s.fake.requests[start] as RecordedRequest;
				expect(sentArgs(resumed, "call_write")).toEqual(sentArgs(reqs.at(-1) as RecordedRequest, "call_write"));
				const resumedEdits = JSON.parse(String(sentArgs(resumed, "call_edit")?.edits)) as Array<Record<string, string>>;
				expect(resumedEdits[0]?.oldText).toBe(OLD);
				expect(resumedEdits[0]?.newText).toBe(afterUnfold.edits[0]?.newText);
				// The refusal is detected, remembered on the branch, and told once.
				const told = refused.stderr
					.split("\n")
					.filter((l) => l.includes("refused a request that carried folded tool-call inputs"));
				expect(told).toHaveLength(1);
				expect(told[0]).toContain("no longer folds tool-call inputs for");
				const notes = s.sandbox
					.readSession()
					.filter((e) => e.type === "custom" && e.customType === "context-fold-inputs-refused");
				expect(notes).toHaveLength(1);
				expect(String((notes[0]?.data as { error?: string } | undefined)?.error)).toContain("400");

				// From then on, after another restart too, every call goes out in full; results still fold.
				s.fake.setScript(dynamicSequence([refusing(text("accepted"))]));
				start = s.fake.requests.length;
				expectSuccess(
					await runPrint({ version, sandbox: s.sandbox, prompt: "again 2", extensions: [bundle], continue: true }),
				);
				const full = s.fake.requests[start] as RecordedRequest;
				expect(inputCodes(full)).toEqual([]);
				expect(sentArgs(full, "call_write")).toEqual({ path: "gen.ts", content: CONTENT });
				expect(foldedCodes(full).length).toBeGreaterThan(0);

				// A real compaction, then recall of the folded write from the session file, byte for byte.
				const rpc = await startRpc({ version, sandbox: s.sandbox, extensions: [bundle], continue: true });
				s.defer(() => rpc.close());
				expect((await rpc.compact()).success).toBe(true);
				await rpc.close();
				s.fake.setScript(dynamicSequence([toolCall("recall_folded", { code: writeCode }, "call_r4"), text("ok")]));
				start = s.fake.requests.length;
				expectSuccess(
					await runPrint({ version, sandbox: s.sandbox, prompt: "recall", extensions: [bundle], continue: true }),
				);
				const post = s.fake.requests.slice(start).filter((r) => !r.isSummaryRequest);
				expect(lastToolText(post[1] as RecordedRequest).endsWith(`(sha256 verified):\n${CONTENT}`)).toBe(true);
			},
			TIMEOUT,
		);

		test(
			"Anthropic Messages: a folded tool_use input beside signed thinking that stays signed and is accepted",
			async () => {
				const brief = "Write the generated file first, then build.";
				const s = await startAnthropicScenario({
					fake: {
						script: replySequence([
							{ ...toolCall("write", { path: "gen.ts", content: CONTENT }, "toolu_write"), reasoning: brief },
							...chain("a", 1),
							text("first done"),
							...chain("b", 7),
							text("second done"),
						]),
					},
					model: { contextWindow: 40_000, reasoning: true },
					compaction: { enabled: false },
				});
				try {
					expectSuccess(
						await runJson({ version, sandbox: s.sandbox, prompt: ["write it", "build"], extensions: [bundle] }),
					);
					expect(s.fake.problems).toEqual([]);
					const last = s.fake.turnRequests().at(-1) as AnthropicRequest;
					const message = last.body.messages.find(
						(m) => Array.isArray(m.content) && m.content.some((b) => b.type === "tool_use" && b.id === "toolu_write"),
					);
					const blocks = (message?.content ?? []) as AnthropicBlock[];
					const use = blocks.find((b) => b.type === "tool_use");
					// tool_use.input is still an object with every key; only the long value is a digest.
					const input = use?.input as { path: string; content: string };
					expect(Object.keys(input)).toEqual(["path", "content"]);
					expect(input.path).toBe("gen.ts");
					expect(input.content).toMatch(/^\{#[0-9a-f]{6} FOLDED\} write content · /);
					// The thinking of that same message went back unchanged and signed, and the fake accepted it.
					const thinking = blocks.find((b) => b.type === "thinking");
					expect(thinking?.thinking).toBe(brief);
					expect(thinking?.signature).toBe(signThinking(brief));
				} finally {
					await s.dispose();
				}
			},
			TIMEOUT,
		);
	});
});
