/**
 * Folded tool-call inputs in the adapter: the substitution replaces one argument value of a tool call
 * in place (a folded copy of the arguments, everything beside them kept), the hook no longer drops
 * substitutions on tool-call parts, the seed record sees the originals, memory originals serve recall
 * without a session file, and a provider's refusal stops input folding for its model.
 */
import { describe, expect, test } from "bun:test";
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import { ApplyError, applySubstitutions, fits } from "../../../src/adapters/pi/apply.ts";
import { runContextHook } from "../../../src/adapters/pi/context-hook.ts";
import { checkInputRefusal } from "../../../src/adapters/pi/refusal.ts";
import type { Runtime } from "../../../src/adapters/pi/runtime.ts";
import { LiveBranch } from "../../../src/adapters/pi/state.ts";
import type { ViewMessage } from "../../../src/core/blocks.ts";
import type { FrozenLayer } from "../../../src/core/layers.ts";
import { pickFoldMessages } from "../../../src/core/seed/pick.ts";
import { INPUTS_REFUSED_TYPE, isRequestRefusal } from "../../../src/core/session/branch-state.ts";
import type { PiContent, PiEntry, PiMessage } from "../../../src/core/session/view.ts";
import { DEFAULT_SETTINGS } from "../../../src/core/settings.ts";
import { MemoryOriginals } from "../../../src/store/originals.ts";
import { answerRecall } from "../../../src/store/recall.ts";
import { EAGER_SETTINGS } from "../../helpers/session.ts";

const T0 = Date.UTC(2025, 0, 1);
const CONTENT = Array.from({ length: 60 }, (_, i) => `line ${i} of the generated file`).join("\n");
const OLD = Array.from({ length: 30 }, (_, i) => `old ${i} text that the edit replaces`).join("\n");

function entries(): PiEntry[] {
	const usage = { input: 10, output: 10, cacheRead: 30_000, cacheWrite: 0 };
	const messages: PiMessage[] = [
		{ role: "user", content: [{ type: "text", text: "go" }], timestamp: T0 },
		{
			role: "assistant",
			content: [
				{
					type: "toolCall",
					id: "call_w",
					name: "write",
					arguments: { path: "a.ts", content: CONTENT },
					thoughtSignature: "c2lnbmF0dXJl",
				} as PiContent,
				{
					type: "toolCall",
					id: "call_e",
					name: "edit",
					arguments: { path: "a.ts", edits: JSON.stringify([{ oldText: OLD, newText: "x" }]) },
				},
			],
			usage,
			stopReason: "toolUse",
			timestamp: T0 + 1000,
		},
		{
			role: "toolResult",
			toolCallId: "call_w",
			toolName: "write",
			content: [{ type: "text", text: "ok" }],
			timestamp: T0 + 2000,
		},
		{
			role: "toolResult",
			toolCallId: "call_e",
			toolName: "edit",
			content: [{ type: "text", text: "ok" }],
			timestamp: T0 + 3000,
		},
		{ role: "assistant", content: [{ type: "text", text: "done" }], usage, stopReason: "stop", timestamp: T0 + 4000 },
		{ role: "user", content: [{ type: "text", text: "next" }], timestamp: T0 + 5000 },
	];
	return messages.map((message, i) => ({
		type: "message",
		id: `e${i}`,
		parentId: i === 0 ? null : `e${i - 1}`,
		message,
	}));
}

/** Pi's outgoing copy of the branch's messages, as it makes one per request. */
function outgoing(branch: readonly PiEntry[]): PiMessage[] {
	return structuredClone(branch.filter((e) => e.type === "message").map((e) => e.message as PiMessage));
}

function hook(branch: PiEntry[], messages: PiMessage[], extra: Partial<Parameters<typeof runContextHook>[1]> = {}) {
	const state = new LiveBranch();
	const committed: Array<{ layer: FrozenLayer; view: readonly ViewMessage[] }> = [];
	const outcome = runContextHook(messages, {
		state,
		settings: EAGER_SETTINGS,
		getBranch: () => branch,
		contextWindow: () => 100_000,
		persist: (layer) => {
			branch.push({ type: "custom", id: `l${branch.length}`, parentId: null, customType: "context-fold", data: layer });
		},
		onCommit: (layer, view) => committed.push({ layer, view }),
		...extra,
	});
	return { outcome, committed, state };
}

type Call = { type: string; id: string; name: string; arguments: Record<string, unknown>; thoughtSignature?: string };

function partsOf(m: PiMessage | undefined): Call[] {
	return (Array.isArray(m?.content) ? m.content : []) as unknown as Call[];
}

describe("input substitutions in the hook", () => {
	test("the argument value is replaced at its path; name, id, other keys and the thoughtSignature stay", () => {
		const branch = entries();
		const messages = outgoing(branch);
		const originalArgs = partsOf(messages[1])[0]?.arguments;
		const { outcome } = hook(branch, messages);
		expect(outcome.appliedInputs).toBe(2);
		expect(outcome.skipped).toBe(0);
		const [write, edit] = partsOf(messages[1]);
		expect(write?.id).toBe("call_w");
		expect(write?.name).toBe("write");
		expect(write?.thoughtSignature).toBe("c2lnbmF0dXJl");
		expect(Object.keys(write?.arguments ?? {})).toEqual(["path", "content"]);
		expect(write?.arguments.path).toBe("a.ts");
		expect(String(write?.arguments.content)).toMatch(/^\{#[0-9a-f]{6} FOLDED\} write content · /);
		// A folded copy: the object the message held before is untouched.
		expect(originalArgs?.content).toBe(CONTENT);
		// edits came as a JSON string and stays one.
		const edits = JSON.parse(String(edit?.arguments.edits)) as Array<{ oldText: string; newText: string }>;
		expect(edits[0]?.oldText).toMatch(/^\{#[0-9a-f]{6} FOLDED\} edit edits\[0\]\.oldText · /);
		expect(edits[0]?.newText).toBe("x");
	});

	test("a layer that could not be recorded is not applied: its inputs go out as they came", () => {
		const branch = entries();
		const messages = outgoing(branch);
		const { outcome } = hook(branch, messages, {
			persist: () => {
				throw new Error("disk full");
			},
		});
		expect(outcome.persistFailed?.message).toBe("disk full");
		expect(outcome.appliedInputs).toBe(0);
		expect(partsOf(messages[1])[0]?.arguments.content).toBe(CONTENT);
	});

	test("what the seed record is picked from holds the originals, even read after the fold was applied", () => {
		const branch = entries();
		const messages = outgoing(branch);
		const { committed } = hook(branch, messages);
		const { layer, view } = committed[0] as { layer: FrozenLayer; view: readonly ViewMessage[] };
		const picked = pickFoldMessages(layer, undefined, view);
		const codes = layer.inputs?.blocks.map((b) => b.code) ?? [];
		expect(codes).toHaveLength(2);
		expect([...picked.inputTexts.values()]).toEqual([CONTENT, OLD]);
		expect(picked.inputTexts.get(codes[0] as string)).toBe(CONTENT);
		expect(picked.calls.find((c) => c.toolCallId === "call_w")?.args).toEqual({ path: "a.ts", content: CONTENT });
	});

	test("a tool-call part another extension reshaped is left alone; the rest applies", () => {
		const branch = entries();
		const messages = outgoing(branch);
		const state = new LiveBranch();
		state.sync(branch);
		// First request commits the layer; the second one meets a reshaped part.
		const first = hook(branch, messages, { state });
		expect(first.outcome.appliedInputs).toBe(2);
		const again = outgoing(branch);
		const content = partsOf(again[1]) as unknown as Array<Record<string, unknown>>;
		content[0] = { type: "text", text: "rewritten by another extension" };
		const second = runContextHook(again, {
			state,
			settings: DEFAULT_SETTINGS,
			getBranch: () => branch,
			contextWindow: () => 100_000,
			persist: () => {},
		});
		// The frozen pass sees the part is no longer a tool call: that value is not planned at all.
		expect(second.skipped).toBe(0);
		expect(second.appliedInputs).toBe(1);
		expect(content[0]).toEqual({ type: "text", text: "rewritten by another extension" });
	});

	test("without a session file the input values are held in memory and recall serves them, verified", () => {
		const branch = entries();
		const messages = outgoing(branch);
		const memory = new MemoryOriginals();
		const { state, committed } = hook(branch, messages, { memory });
		const layer = committed[0]?.layer as FrozenLayer;
		const write = layer.inputs?.blocks.find((b) => b.toolCallId === "call_w");
		expect(write?.digest).toContain("recall from memory only (no session file)");
		const answer = answerRecall(
			{ code: write?.code as string, maxTokens: null },
			{ index: state.index, ledger: null, memory },
		);
		expect(answer.ok).toBe(true);
		expect(answer.text).toBe(
			`{#${write?.code}} write input content · ${CONTENT.length.toLocaleString("en-US")} chars, 60 lines (sha256 verified):\n${CONTENT}`,
		);
	});
});

describe("applySubstitutions on tool calls", () => {
	test("fits: an input substitution needs a tool call with a string at its path", () => {
		const messages: PiMessage[] = [
			{ role: "assistant", content: [{ type: "toolCall", id: "c", name: "bash", arguments: { command: "ls" } }] },
		];
		const sub = { messageIndex: 0, blockIndex: 0, code: "a", text: "D", dropSignature: false };
		expect(fits(messages, { ...sub, path: ["command"] })).toBe(true);
		expect(fits(messages, { ...sub, path: ["timeout"] })).toBe(false);
		expect(fits(messages, sub)).toBe(false);
		expect(fits([{ role: "assistant", content: [{ type: "text", text: "x" }] }], { ...sub, path: ["command"] })).toBe(
			false,
		);
	});

	test("a path that leads nowhere rolls every change back", () => {
		const messages: PiMessage[] = [
			{ role: "tool", content: [{ type: "text", text: "t" }] },
			{ role: "assistant", content: [{ type: "toolCall", id: "c", name: "bash", arguments: { command: "ls" } }] },
		];
		expect(() =>
			applySubstitutions(messages, [
				{ messageIndex: 0, blockIndex: 0, code: "a", text: "D", dropSignature: false },
				{ messageIndex: 1, blockIndex: 0, code: "b", text: "D", dropSignature: false, path: ["nope"] },
			]),
		).toThrow();
		expect((partsOf(messages[0])[0] as unknown as { text: string }).text).toBe("t");
		expect(() =>
			applySubstitutions(messages, [
				{ messageIndex: 0, blockIndex: 0, code: "a", text: "D", dropSignature: false, path: ["x"] },
			]),
		).toThrow(ApplyError);
	});
});

describe("a provider's refusal of folded inputs", () => {
	test("what counts as a refusal: HTTP 400 or 422 first, not an outage, a limit or auth", () => {
		for (const m of ['400 {"type":"error"}', "400 Bad Request", "422 Unprocessable Entity", "Error: 400 status code"])
			expect(isRequestRefusal(m)).toBe(true);
		for (const m of [
			"429 rate limited",
			"500 Internal",
			"401 Unauthorized",
			"overloaded",
			"connection reset",
			undefined,
		])
			expect(isRequestRefusal(m)).toBe(false);
	});

	function runtime(lastAssistant: PiMessage, inputRequest: string | undefined) {
		const appended: Array<[string, unknown]> = [];
		const said: string[] = [];
		const branch = { lastAssistant, lastAssistantId: "e9", inputsRefused: new Set<string>() };
		const rt = {
			inputRequest,
			refusalChecked: undefined,
			sync: () => true,
			state: { branch },
			pi: { appendEntry: (type: string, data: unknown) => appended.push([type, data]) },
			notices: { once: (_ctx: unknown, _key: string, message: string) => said.push(message) },
		} as unknown as Runtime;
		return { rt, appended, said, branch };
	}
	const refused: PiMessage = {
		role: "assistant",
		content: [],
		stopReason: "error",
		errorMessage: "400 tool call arguments do not match",
		provider: "fake",
		model: "m1",
	};

	test("a 400 right after a request that carried folded inputs: recorded on the branch, told once", () => {
		const { rt, appended, said, branch } = runtime(refused, "fake/m1");
		checkInputRefusal(rt, {} as ExtensionContext);
		checkInputRefusal(rt, {} as ExtensionContext);
		expect(appended).toEqual([
			[INPUTS_REFUSED_TYPE, { v: 1, model: "fake/m1", error: "400 tool call arguments do not match" }],
		]);
		expect(branch.inputsRefused.has("fake/m1")).toBe(true);
		expect(said).toHaveLength(1);
		expect(said[0]).toContain("no longer folds tool-call inputs for fake/m1");
	});

	test("no inputs on that request, another model, or another kind of failure: nothing", () => {
		for (const [message, sent] of [
			[refused, undefined],
			[refused, "fake/other"],
			[{ ...refused, errorMessage: "429 slow down" }, "fake/m1"],
			[{ ...refused, stopReason: "stop" }, "fake/m1"],
		] as const) {
			const { rt, appended } = runtime(message as PiMessage, sent);
			checkInputRefusal(rt, {} as ExtensionContext);
			expect(appended).toEqual([]);
		}
	});
});
