// Proves the e2e harness against real Pi (0.80.6 and 1.6.0) with no context-fold code loaded.
import { afterEach, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { commonPrefixLength } from "../../src/core/values.ts";
import {
	assistantMessages,
	bash,
	call,
	computeUsage,
	entriesOfType,
	expectSuccess,
	forEachPiVersion,
	httpError,
	lastUserText,
	replySequence,
	runJson,
	runPrint,
	type Scenario,
	SUMMARIZATION_SYSTEM_PREFIX,
	serializePrompt,
	startRpc,
	startScenario,
	startTui,
	text,
	tmuxSkipAllowed,
	toolCalls,
	toolResultsOf,
} from "./harness/index.ts";

const PI_TEST_TIMEOUT = 60_000;
const UI_PROBE = join(import.meta.dir, "fixtures/ui-probe.ts");

let scenarios: Scenario[] = [];
afterEach(async () => {
	const current = scenarios;
	scenarios = [];
	for (const s of current) await s.dispose();
});

async function scenario(options: Parameters<typeof startScenario>[0] = {}): Promise<Scenario> {
	const s = await startScenario(options);
	scenarios.push(s);
	return s;
}

/** Text blocks of a session message's content. */
function contentText(content: unknown): string {
	if (typeof content === "string") return content;
	if (!Array.isArray(content)) return "";
	return content
		.map((block: { type?: string; text?: string }) => (block.type === "text" ? (block.text ?? "") : ""))
		.join("");
}

forEachPiVersion((version) => {
	describe(`pi ${version}`, () => {
		test(
			"-p: three bash tool calls come back as tool results, and usage lands in the session",
			async () => {
				const { fake, sandbox } = await scenario({
					fake: {
						script: replySequence([
							bash("echo hello-1", "call_a1"),
							bash("echo hello-2", "call_a2"),
							bash("echo hello-3", "call_a3"),
							text("all three said hello"),
						]),
					},
				});
				const result = expectSuccess(await runPrint({ version, sandbox, prompt: "greet three times" }));
				expect(result.stdout).toContain("all three said hello");
				expect(fake.problems).toEqual([]);

				const requests = fake.requests;
				expect(requests).toHaveLength(4);
				expect(requests.some((r) => r.isSummaryRequest)).toBe(false);
				expect(requests[0]?.body.tools?.map((t) => t.function.name)).toContain("bash");
				expect(lastUserText(fake.request(0))).toBe("greet three times");
				for (const n of [1, 2, 3]) {
					const results = toolResultsOf(fake.request(n));
					expect(results).toHaveLength(n);
					expect(results[n - 1]).toEqual({ id: `call_a${n}`, text: `hello-${n}\n` });
				}

				// The fake's prefix cache: every request extends the previous one, so later ones mostly read.
				for (const r of requests.slice(1)) expect(r.reportedUsage?.cacheRead).toBeGreaterThan(0);
				const recorded = assistantMessages(sandbox.readSession()).map((m) => m.usage);
				const reported = requests.map((r) => r.reportedUsage);
				expect(recorded).toHaveLength(4);
				recorded.forEach((usage, i) => {
					expect(usage).toMatchObject(reported[i] ?? {});
				});
			},
			PI_TEST_TIMEOUT,
		);

		test(
			"resume: --session and -c append to the same session file",
			async () => {
				const { fake, sandbox } = await scenario({
					fake: { script: replySequence([text("answer-one"), text("answer-two"), text("answer-three")]) },
				});
				expectSuccess(await runPrint({ version, sandbox, prompt: "first" }));
				const file = sandbox.latestSessionFile();
				const sessionId = sandbox.readSession(file)[0]?.id;

				const json = await runJson({ version, sandbox, prompt: "second", session: file });
				expectSuccess(json);
				expect(json.header?.id).toBe(sessionId);
				expect(json.events.map((e) => e.type)).toContain("agent_end");

				expectSuccess(await runPrint({ version, sandbox, prompt: "third", continue: true }));
				expect(sandbox.sessionFiles()).toEqual([file]);
				const last = fake.request(2);
				const history = last.body.messages.map((m) => `${m.role}:${typeof m.content === "string" ? m.content : ""}`);
				expect(history.join("\n")).toContain("assistant:answer-one");
				expect(history.join("\n")).toContain("assistant:answer-two");
				expect(lastUserText(last)).toBe("third");
				const users = sandbox
					.readSession(file)
					.filter((e) => e.type === "message" && e.message?.role === "user")
					.map((e) => contentText(e.message?.content));
				expect(users).toEqual(["first", "second", "third"]);
			},
			PI_TEST_TIMEOUT,
		);

		test(
			"rpc: two prompts in one session",
			async () => {
				const s = await scenario({
					fake: { script: replySequence([text("first answer"), bash("echo rpc-tool"), text("second answer")]) },
				});
				const rpc = await startRpc({ version, sandbox: s.sandbox });
				s.defer(() => rpc.close());

				const state = await rpc.getState();
				expect(state.sessionFile).toBeString();
				const first = await rpc.promptAndWait("one");
				expect(first.map((e) => e.type)).toContain("agent_end");
				// Version quirk: 1.6.0 reports what happened to the prompt, 0.80.6 sends no data.
				const promptResponse = rpc.responses.find((r) => r.command === "prompt");
				if (version === "1.6.0") expect(promptResponse?.data?.disposition).toBe("started");
				else expect(promptResponse?.data).toBeUndefined();

				const second = await rpc.promptAndWait("two");
				expect(second.filter((e) => e.type === "tool_execution_end")).toHaveLength(1);
				const last = await rpc.request<{ text: string }>("get_last_assistant_text");
				expect(last.text).toBe("second answer");

				expect(s.fake.turnRequests()).toHaveLength(3);
				expect(lastUserText(s.fake.request(1))).toBe("two");
				expect(toolResultsOf(s.fake.request(2)).map((r) => r.text)).toEqual(["rpc-tool\n"]);
				expect(await rpc.close()).toEqual({ code: 0, signal: null });
				expect(rpc.problems).toEqual([]);
				expect(assistantMessages(s.sandbox.readSession(state.sessionFile as string))).toHaveLength(3);
			},
			PI_TEST_TIMEOUT,
		);

		test(
			"rpc: extension dialogs are recorded and can be answered",
			async () => {
				const s = await scenario();
				const rpc = await startRpc({
					version,
					sandbox: s.sandbox,
					extensions: [UI_PROBE],
					onDialog: (request) => (request.method === "select" ? { value: "beta" } : undefined),
				});
				s.defer(() => rpc.close());

				// Both versions answer a /command prompt only once its handler is done, so answer first.
				const response = rpc.prompt("/cf-probe");
				const confirm = await rpc.waitForUiRequest("confirm");
				expect(confirm.message).toBe("You picked beta");
				rpc.answerUi(confirm.id, { confirmed: true });
				expect((await response).success).toBe(true);
				const status = await rpc.waitFor((e) => e.type === "extension_ui_request" && e.method === "setStatus");
				expect(status.statusText).toBe("picked=beta confirmed=true");
				expect(rpc.uiRequests.map((r) => r.method)).toEqual(["select", "confirm", "setStatus"]);
				expect(s.fake.requests).toHaveLength(0);
			},
			PI_TEST_TIMEOUT,
		);

		test.skipIf(tmuxSkipAllowed())(
			"tui: a typed prompt gets the fake's answer on screen",
			async () => {
				const s = await scenario({ fake: { script: replySequence([text("The fake says PONG-42")]) } });
				const tui = await startTui({ version, sandbox: s.sandbox });
				s.defer(() => tui.kill());

				await tui.waitForReady();
				tui.type("ping from tmux");
				tui.sendKeys("Enter");
				const screen = await tui.waitFor("PONG-42");
				expect(screen).toContain("ping from tmux");
				expect(lastUserText(s.fake.request(0))).toBe("ping from tmux");

				tui.type("/quit");
				tui.sendKeys("Enter");
				await tui.waitForExit();
			},
			PI_TEST_TIMEOUT,
		);

		test(
			"compaction: a small context window makes Pi send a summary request",
			async () => {
				const { fake, sandbox } = await scenario({
					model: { contextWindow: 8000 },
					compaction: { reserveTokens: 2000, keepRecentTokens: 1000 },
					fake: {
						script: replySequence([
							// About 21 kB of output: with the system prompt, over the 6000-token threshold.
							bash("yes 0123456789abcdefgh | head -n 1000"),
							text("big output seen"),
							text("after compaction"),
						]),
					},
				});
				expectSuccess(await runPrint({ version, sandbox, prompt: "make a big output" }));
				const summaries = fake.summaryRequests();
				expect(summaries.length).toBeGreaterThan(0);
				for (const r of summaries) {
					expect(r.body.tools ?? []).toEqual([]);
					expect(r.systemPrompt?.startsWith(SUMMARIZATION_SYSTEM_PREFIX)).toBe(true);
				}
				expect(entriesOfType(sandbox.readSession(), "compaction").length).toBeGreaterThan(0);

				// The next prompt in the same session carries the summary instead of the big output.
				expectSuccess(await runPrint({ version, sandbox, prompt: "continue", continue: true }));
				const next = fake.request(-1);
				expect(next.isSummaryRequest).toBe(false);
				expect(JSON.stringify(next.body.messages)).toContain("Fake summary produced by the e2e fake model");
				expect(JSON.stringify(next.body.messages)).not.toContain("0123456789abcdefgh\\n".repeat(100));
			},
			PI_TEST_TIMEOUT,
		);
	});
});

describe("fake model without Pi", () => {
	const chat = (url: string, body: Record<string, unknown>) =>
		fetch(`${url}/chat/completions`, {
			method: "POST",
			headers: { "content-type": "application/json" },
			body: JSON.stringify({ model: "fake-model", ...body }),
		});

	test("non-streaming tool calls, HTTP errors and usage overrides", async () => {
		const s = await scenario({
			fake: {
				cache: { mode: "none" },
				usage: ({ computed }) => ({ cacheRead: computed.input, input: 0 }),
				script: replySequence([
					toolCalls([call("bash", { command: "ls" }, "c1"), call("read", { path: "x" }, "c2")], {
						usage: { output: 7 },
					}),
					httpError(429, "slow down"),
				]),
			},
		});
		const ok = await chat(s.fake.url, { messages: [{ role: "user", content: "hi" }], stream: false });
		const json = (await ok.json()) as {
			choices: Array<{
				message: { tool_calls: Array<{ id: string; function: { arguments: string } }> };
				finish_reason: string;
			}>;
			usage: { prompt_tokens: number; completion_tokens: number; prompt_tokens_details: { cached_tokens: number } };
		};
		expect(json.choices[0]?.finish_reason).toBe("tool_calls");
		expect(json.choices[0]?.message.tool_calls.map((c) => c.id)).toEqual(["c1", "c2"]);
		expect(JSON.parse(json.choices[0]?.message.tool_calls[1]?.function.arguments ?? "")).toEqual({ path: "x" });
		expect(json.usage.completion_tokens).toBe(7);
		expect(json.usage.prompt_tokens_details.cached_tokens).toBe(json.usage.prompt_tokens);

		const failed = await chat(s.fake.url, { messages: [{ role: "user", content: "again" }], stream: true });
		expect(failed.status).toBe(429);
		expect(s.fake.requests.map((r) => r.stream)).toEqual([false, true]);
	});

	test("summary requests are classified by system prompt, tools and instructions", async () => {
		const s = await scenario();
		const system = { role: "system", content: `${SUMMARIZATION_SYSTEM_PREFIX}. Do NOT continue.` };
		await chat(s.fake.url, { messages: [system, { role: "user", content: "<conversation>x</conversation>\n\nGo" }] });
		await chat(s.fake.url, {
			messages: [system, { role: "user", content: "Create a structured summary of this conversation branch" }],
		});
		await chat(s.fake.url, {
			messages: [system, { role: "user", content: "hi" }],
			tools: [{ type: "function", function: { name: "bash" } }],
		});
		expect(s.fake.requests.map((r) => r.summaryKind)).toEqual(["compaction", "branch", undefined]);
	});

	test("prefix cache model reads the shared prefix and writes or inputs the rest", () => {
		const req = (content: string) =>
			({ body: { model: "m", messages: [{ role: "user", content }] } }) as Parameters<typeof serializePrompt>[0];
		const first = serializePrompt(req("a".repeat(400)));
		const second = serializePrompt(req(`${"a".repeat(400)}${"b".repeat(400)}`));
		const anthropic = computeUsage({ mode: "prefix" }, second, [first], 40);
		expect(commonPrefixLength(first, second)).toBeGreaterThan(400);
		expect(anthropic.cacheRead).toBe(Math.floor(commonPrefixLength(first, second) / 4));
		expect(anthropic.input).toBe(0);
		expect(anthropic.cacheRead + anthropic.cacheWrite).toBe(Math.ceil(second.length / 4));
		expect(anthropic.output).toBe(10);
		const openai = computeUsage({ mode: "prefix", style: "openai" }, second, [first], 0);
		expect(openai).toEqual({ input: anthropic.cacheWrite, output: 1, cacheRead: anthropic.cacheRead, cacheWrite: 0 });
		expect(computeUsage({ mode: "none" }, second, [first], 0).cacheRead).toBe(0);
	});
});
