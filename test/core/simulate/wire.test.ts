// How simulate measures a replayed request: what Pi never sends is left out, a tool call carries its
// id, and the openai-json measure is, character for character, the body Pi's own openai-completions
// converter writes (pi-ai 1.6.0's convertMessages), folds included.
import { describe, expect, test } from "bun:test";
import { convertMessages } from "@earendil-works/pi-ai/api/openai-completions";
import { serializeMessage } from "../../../src/core/billing.ts";
import { messageTokens, type ViewMessage } from "../../../src/core/blocks.ts";
import type { Substitution } from "../../../src/core/plan.ts";
import { buildView, type PiEntry, type PiMessage } from "../../../src/core/session/view.ts";
import { DEFAULT_SETTINGS } from "../../../src/core/settings.ts";
import { replaySession } from "../../../src/core/simulate/replay.ts";
import { type SerializationCache, serializeView } from "../../../src/core/simulate/serialize.ts";
import { measureMessage, type PromptMeasure, partsTokens } from "../../../src/core/simulate/wire.ts";
import { sha256 } from "../../helpers/session.ts";

const cache = (): SerializationCache => ({
	base: new WeakMap(),
	folded: new WeakMap(),
	calls: new WeakMap(),
});

/** Every message of the fake model Pi talks to, so Pi keeps their thinking (same model). */
const FAKE = { provider: "fake", api: "openai-completions", model: "fake-model" };
const LONG = Array.from({ length: 40 }, (_, i) => `line ${i} of "the file"\twith\\escapes`).join("\n");

const messages: PiMessage[] = [
	{ role: "user", content: [{ type: "text", text: 'fix the "parser"\nplease' }], timestamp: 1 },
	{
		role: "assistant",
		...FAKE,
		stopReason: "toolUse",
		content: [
			{ type: "thinking", thinking: "Look at the parser first.", thinkingSignature: "reasoning_content" },
			{ type: "text", text: "Reading it." },
			{ type: "toolCall", id: "call_a", name: "read", arguments: { path: "src/parser.ts" } },
			{ type: "toolCall", id: "call_b", name: "write", arguments: { path: "out.txt", content: LONG } },
		],
		timestamp: 2,
	},
	{
		role: "toolResult",
		toolCallId: "call_a",
		toolName: "read",
		content: [
			{ type: "text", text: LONG },
			{ type: "text", text: "(end)" },
		],
		timestamp: 3,
	},
	{ role: "toolResult", toolCallId: "call_b", toolName: "write", content: [], timestamp: 4 },
	// Aborted while streaming: Pi records it and never sends it again.
	{
		role: "assistant",
		...FAKE,
		stopReason: "aborted",
		content: [
			{ type: "text", text: "half an answer that was cut" },
			{ type: "toolCall", id: "call_c", name: "bash", arguments: { command: "rm -rf build" } },
		],
		timestamp: 5,
	},
	{ role: "user", content: [{ type: "text", text: "go on" }], timestamp: 6 },
	{ role: "assistant", ...FAKE, stopReason: "error", content: [{ type: "text", text: "partial" }], timestamp: 7 },
	// Thinking alone makes no message on this API.
	{
		role: "assistant",
		...FAKE,
		stopReason: "stop",
		content: [{ type: "thinking", thinking: "nothing to say", thinkingSignature: "reasoning_content" }],
		timestamp: 8,
	},
	{ role: "user", content: [{ type: "text", text: "and?" }], timestamp: 9 },
	{ role: "assistant", ...FAKE, stopReason: "stop", content: [{ type: "text", text: "Done." }], timestamp: 10 },
];

const viewOf = (list: readonly PiMessage[]) => buildView(list, (m) => `e${String(m.timestamp)}`);

/** What Pi 1.6.0 puts in an openai-completions request for these messages (default compat of a local model). */
function piBody(list: readonly PiMessage[]): string {
	const model = {
		id: FAKE.model,
		name: FAKE.model,
		api: "openai-completions",
		provider: FAKE.provider,
		baseUrl: "http://127.0.0.1:1/v1",
		reasoning: false,
		input: ["text"],
		cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
		contextWindow: 200_000,
		maxTokens: 8_192,
	};
	const compat = {
		supportsDeveloperRole: false,
		requiresToolResultName: false,
		requiresAssistantAfterToolResult: false,
		requiresNonNullAssistantContent: false,
		requiresThinkingAsText: false,
		requiresReasoningContentOnAssistantMessages: false,
		supportsMidConvoSystemMessages: false,
		supportsMidConvoToolAdditions: false,
		supportsOpenAIGrammarTools: false,
	};
	// biome-ignore lint/suspicious/noExplicitAny: pi-ai's model and compat types are wider than this test needs
	return JSON.stringify(convertMessages(model as any, { messages: list } as any, compat as any));
}

/** The body length the biller counts for parts: each part and one separator. */
const partChars = (parts: readonly string[]) => parts.reduce((n, p) => n + p.length + 1, 0);

describe("what a replayed request sends", () => {
	test.each(["content", "openai-json"] as const)(
		"%s: an aborted or errored response is never sent again, so it is not measured",
		(measure: PromptMeasure) => {
			const view = viewOf(messages);
			const parts = serializeView(cache(), view, null, measure);
			const sent = view.filter((v) => v.stopReason !== "aborted" && v.stopReason !== "error");
			expect(sent).toHaveLength(view.length - 2);
			const expected = sent.map((v) => measureMessage(measure, v)).filter((p): p is string => p !== null);
			expect(parts).toEqual(expected);
			expect(parts.join("")).not.toContain("half an answer");
			expect(parts.join("")).not.toContain("partial");
		},
	);

	test("content: a tool call is measured with its id, as every API sends it", () => {
		const call: ViewMessage = viewOf([messages[1] as PiMessage])[0] as ViewMessage;
		expect(serializeMessage({ ...call, blocks: call.blocks.slice(2, 3) })).toBe(
			'["assistant",null,["toolCall","{\\"path\\":\\"src/parser.ts\\"}read","call_a"]]',
		);
	});

	test("openai-json: the body Pi's openai-completions converter writes, to the character", () => {
		const parts = serializeView(cache(), viewOf(messages), null, "openai-json");
		// The array's brackets and commas: n parts, n - 1 commas, 2 brackets = the biller's n separators + 1.
		expect(partChars(parts) + 1).toBe(piBody(messages).length);
	});

	test("openai-json with folds: a digest for a result, a folded value inside a call's arguments", () => {
		const view = viewOf(messages);
		const digest = "{#0a1b2c FOLDED} read src/parser.ts: 41 lines";
		const folded = "{#3d4e5f FOLDED} 40 lines";
		const subs: Substitution[] = [
			{ messageIndex: 2, blockIndex: 0, code: "0a1b2c", text: digest, dropSignature: false },
			{ messageIndex: 1, blockIndex: 3, code: "3d4e5f", text: folded, dropSignature: false, path: ["content"] },
		];
		const parts = serializeView(cache(), view, subs, "openai-json");
		// The same messages with the folds applied in place, as the extension hands them to Pi.
		const asSent = structuredClone(messages);
		const calls = asSent[1]?.content as Array<{ arguments: { content: string } }>;
		(calls[3] as { arguments: { content: string } }).arguments.content = folded;
		const results = asSent[2]?.content as Array<{ text: string }>;
		(results[0] as { text: string }).text = digest;
		expect(partChars(parts) + 1).toBe(piBody(asSent).length);
		// The content measure says the same thing in its own shape.
		const content = serializeView(cache(), view, subs, "content").join("");
		expect(content).toContain(JSON.stringify(`${JSON.stringify({ path: "out.txt", content: folded })}write`));
		expect(content).toContain(JSON.stringify(digest));
	});
});

describe("the usage a replayed response reports", () => {
	const iso = (ms: number) => new Date(ms).toISOString();
	const said: PiMessage[] = [
		{ role: "user", content: [{ type: "text", text: "list the files" }], timestamp: 1 },
		{
			role: "assistant",
			...FAKE,
			stopReason: "toolUse",
			usage: { input: 7_000, output: 40, cacheRead: 0, cacheWrite: 0 },
			content: [{ type: "toolCall", id: "call_1", name: "bash", arguments: { command: "ls" } }],
			timestamp: 2,
		},
		{
			role: "toolResult",
			toolCallId: "call_1",
			toolName: "bash",
			content: [{ type: "text", text: LONG }],
			timestamp: 3,
		},
		{
			role: "assistant",
			...FAKE,
			stopReason: "stop",
			usage: { input: 7_500, output: 20, cacheRead: 0, cacheWrite: 0 },
			content: [{ type: "text", text: "Two files." }],
			timestamp: 4,
		},
	];
	const entries: PiEntry[] = said.map((message, i) => ({
		type: "message",
		id: `m${i}`,
		parentId: i === 0 ? null : `m${i - 1}`,
		timestamp: iso(1_000 * i),
		message,
	}));
	const replay = (measure: PromptMeasure) =>
		replaySession({
			entries,
			settings: DEFAULT_SETTINGS,
			windowFor: () => 200_000,
			hash: sha256,
			parseTime: (s) => Date.parse(s),
			measure,
			overhead: 300,
		});
	// The trailing tool result, as the ladder estimates it after the newest report.
	const trailing = messageTokens(viewOf([said[2] as PiMessage])[0] as ViewMessage);

	test("content: the provider's own report (its tokens)", () => {
		const r = replay("content").requests[1];
		expect(r?.usage).toBe(7_000 + 40 + trailing);
	});

	test("openai-json: the measure of the request, as the benchmark's fake model reports it", () => {
		const replayed = replay("openai-json");
		const first = replayed.requests[0];
		expect(first?.foldedParts).toHaveLength(1);
		expect(replayed.requests[1]?.usage).toBe(300 + partsTokens(first?.foldedParts ?? []) + 40 + trailing);
		expect(replayed.overhead).toBe(300);
	});
});
