// Real Pi (0.80.6 and 1.6.0) on the fake Anthropic Messages server: a multi-turn tool-calling session
// with signed thinking runs end to end, context-fold folds stale tool results (and, in the second
// prompt, thinking of the first one), and every request body is captured. The fake rejects thinking
// whose signature no longer matches its text, as the real API does, so "no problems" also means no
// fold ever changed signed thinking that went out signed.
import { describe, expect, test } from "bun:test";
import { bigOutputCommand, ensureBundle } from "./cf.ts";
import {
	type AnthropicRequest,
	anthropicText,
	bash,
	expectSuccess,
	forEachPiVersion,
	replySequence,
	runJson,
	signThinking,
	startAnthropicModel,
	startAnthropicScenario,
	text,
	toolResultBlocks,
} from "./harness/index.ts";

const TIMEOUT = 120_000;
const bundle = ensureBundle();
const MARKER = /^\{#([0-9a-f]{6,64}) FOLDED\}/;

/** Thinking long enough to fold (over 256 tokens), distinct per step. */
function thinking(tag: string): string {
	return Array.from({ length: 30 }, (_, i) => `${tag}: step ${i} weighs the build output before the next command`).join(
		"\n",
	);
}

function steps(prefix: string, n: number) {
	const out = [];
	for (let i = 0; i < n; i++) {
		out.push({
			...bash(bigOutputCommand(`${prefix}${i}`, 2500), `toolu_${prefix}${i}`),
			reasoning: thinking(`${prefix}${i}`),
		});
	}
	return out;
}

function foldedResults(req: AnthropicRequest): string[] {
	return toolResultBlocks(req)
		.map((b) => anthropicText(b.content))
		.filter((t) => MARKER.test(t));
}

function assistantBlocks(req: AnthropicRequest) {
	return req.body.messages.flatMap((m) => (m.role === "assistant" && Array.isArray(m.content) ? m.content : []));
}

forEachPiVersion((version) => {
	describe(`pi ${version}: Anthropic Messages fake`, () => {
		test(
			"a multi-turn tool session with signed thinking runs, folds, and every request is captured",
			async () => {
				const s = await startAnthropicScenario({
					fake: {
						script: replySequence([...steps("a", 8), text("first done"), ...steps("b", 6), text("second done")]),
					},
					model: { contextWindow: 40_000, reasoning: true },
					compaction: { enabled: false },
				});
				try {
					const run = await runJson({
						version,
						sandbox: s.sandbox,
						prompt: ["build it", "build it again"],
						extensions: [bundle],
					});
					expectSuccess(run);
					const reqs = s.fake.turnRequests();
					expect(s.fake.problems).toEqual([]);
					expect(reqs).toHaveLength(16);
					// The URL Pi builds from a bare baseUrl, per version.
					for (const r of reqs)
						expect([r.path, r.query]).toEqual(["/v1/messages", version === "1.6.0" ? "beta=true" : ""]);

					// Tool calls went back as tool_use with the arguments as an object, results as tool_result.
					const last = reqs[15] as AnthropicRequest;
					const toolUses = assistantBlocks(last).filter((b) => b.type === "tool_use");
					expect(toolUses.map((b) => b.id)).toEqual([...steps("a", 8), ...steps("b", 6)].map((r) => r.calls[0]?.id));
					expect(toolUses[0]?.input).toEqual({ command: bigOutputCommand("a0", 2500) });
					expect(toolResultBlocks(last)).toHaveLength(14);

					// Signed thinking made the round trip: the newest loop's thinking went back signed.
					const signed = assistantBlocks(last).filter((b) => b.type === "thinking");
					expect(signed.length).toBeGreaterThan(0);
					for (const b of signed) expect(b.signature).toBe(signThinking(b.thinking ?? ""));

					// context-fold folded stale tool results, recorded in the session.
					expect(foldedResults(last).length).toBeGreaterThan(0);
					const layers = s.sandbox.readSession().filter((e) => e.type === "custom" && e.customType === "context-fold");
					expect(layers.length).toBeGreaterThan(0);
					// The first prompt's thinking, outside the running loop in the second, folded to a plain text digest.
					const foldedThinking = assistantBlocks(last).filter((b) => b.type === "text" && MARKER.test(b.text ?? ""));
					expect(foldedThinking.length).toBeGreaterThan(0);
					expect(foldedThinking[0]?.text).toContain(" thinking · ");

					// Pi read the fake's usage: cache reads and writes reached the session.
					const usage = s.sandbox
						.readSession()
						.flatMap((e) =>
							e.type === "message" && e.message?.role === "assistant" && e.message.usage ? [e.message.usage] : [],
						);
					expect(usage).toHaveLength(16);
					expect(usage.filter((u) => u.cacheRead > 0).length).toBeGreaterThan(10);
					expect(usage.every((u) => u.cacheWrite > 0)).toBe(true);
				} finally {
					await s.dispose();
				}
			},
			TIMEOUT,
		);
	});
});

describe("the Anthropic fake itself", () => {
	test("refuses thinking whose signature does not match its text, as the real API does", async () => {
		const fake = await startAnthropicModel();
		try {
			const post = (thinkingText: string, signature: string) =>
				fetch(`${fake.url}/v1/messages`, {
					method: "POST",
					headers: { "content-type": "application/json" },
					body: JSON.stringify({
						model: "m",
						stream: true,
						max_tokens: 10,
						messages: [
							{ role: "user", content: "hi" },
							{
								role: "assistant",
								content: [
									{ type: "thinking", thinking: thinkingText, signature },
									{ type: "text", text: "x" },
								],
							},
							{ role: "user", content: "again" },
						],
					}),
				});
			const good = await post("plan", signThinking("plan"));
			expect(good.status).toBe(200);
			expect(await good.text()).toContain("event: message_stop");
			const bad = await post("plan, changed", signThinking("plan"));
			expect(bad.status).toBe(400);
			expect(await bad.json()).toEqual({
				type: "error",
				error: { type: "invalid_request_error", message: "messages: Invalid `signature` in `thinking` block" },
			});
			expect(fake.problems).toEqual(["request 1: 1 thinking block(s) whose signature does not match the text"]);
		} finally {
			await fake.close();
		}
	});
});
