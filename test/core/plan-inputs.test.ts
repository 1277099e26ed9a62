/**
 * planFold with tool-call inputs and superseded/duplicate blocks: what becomes a candidate, what a
 * fold event commits (the layer's `inputs` field, digests that say why), and how frozen input masks
 * are re-applied request after request, whatever form Pi gives `edits`.
 */
import { describe, expect, test } from "bun:test";
import type { ViewMessage } from "../../src/core/blocks.ts";
import { foldArguments, valueAt } from "../../src/core/inputs.ts";
import { addRecord, emptyIndex, type MaskIndex } from "../../src/core/layers.ts";
import { type FoldPlan, planFold } from "../../src/core/plan.ts";
import { buildView, type PiMessage } from "../../src/core/session/view.ts";
import { EAGER_SETTINGS, filler, sha256, T0 } from "../helpers/session.ts";

/** Fold at the first chance, no protected tail unless asked. */
const EAGER = EAGER_SETTINGS;
const WINDOW = 100_000;

/** A branch of Pi messages with entry ids, turned into the core's view. */
class Branch {
	readonly messages: PiMessage[] = [];
	private readonly ids = new Map<PiMessage, string>();
	private t = T0;
	private n = 0;

	user(text: string): this {
		return this.add({ role: "user", content: [{ type: "text", text }] });
	}

	/** An assistant message with one tool call, answered by its result (error when `isError`). */
	call(
		name: string,
		args: Record<string, unknown>,
		result: string,
		opts: { isError?: boolean; id?: string } = {},
	): string {
		const id = opts.id ?? `call_${++this.n}`;
		this.add({
			role: "assistant",
			content: [{ type: "toolCall", id, name, arguments: args }],
			usage: { input: 10, output: 10, cacheRead: 20_000, cacheWrite: 0 },
			stopReason: "toolUse",
		});
		this.add({
			role: "toolResult",
			toolCallId: id,
			toolName: name,
			content: [{ type: "text", text: result }],
			isError: opts.isError === true,
		});
		return id;
	}

	/** The assistant's closing answer (a successful response after everything before it). */
	answer(text = "done"): this {
		return this.add({
			role: "assistant",
			content: [{ type: "text", text }],
			usage: { input: 10, output: 10, cacheRead: 20_000, cacheWrite: 0 },
			stopReason: "stop",
		});
	}

	view(): ViewMessage[] {
		return buildView(this.messages, (m) => this.ids.get(m) ?? null);
	}

	idOf(i: number): string {
		return this.ids.get(this.messages[i] as PiMessage) as string;
	}

	private add(m: Omit<PiMessage, "timestamp">): this {
		this.t += 1000;
		const message = { ...m, timestamp: this.t } as PiMessage;
		this.messages.push(message);
		this.ids.set(message, `e${this.messages.length}`);
		return this;
	}
}

function plan(view: ViewMessage[], index: MaskIndex, extra: Partial<Parameters<typeof planFold>[0]> = {}): FoldPlan {
	return planFold({
		messages: view,
		index,
		settings: EAGER,
		window: WINDOW,
		everCacheRead: true,
		hash: sha256,
		...extra,
	});
}

const big = (seed: string, lines = 40) => `${filler(lines * 10, seed, { error: `Error: ${seed} failed` })}\n`;

describe("tool-call inputs as fold candidates", () => {
	test("an old edit's long values fold at their paths; keys, short values, name and id stay", () => {
		const b = new Branch().user("fix it");
		const oldText = big("old");
		const newText = big("new");
		b.call(
			"edit",
			{
				path: "src/a.ts",
				edits: [
					{ oldText, newText },
					{ oldText: "x", newText: "y" },
				],
			},
			"ok",
		);
		b.answer().user("next");
		const view = b.view();
		const p = plan(view, emptyIndex());
		expect(p.state).toBe("fold");
		const inputs = p.layer?.inputs?.blocks ?? [];
		expect(inputs.map((m) => [m.entryId, m.blockIndex, m.path, m.toolName, m.toolCallId])).toEqual([
			["e2", 0, ["edits", 0, "oldText"], "edit", "call_1"],
			["e2", 0, ["edits", 0, "newText"], "edit", "call_1"],
		]);
		expect(inputs[0]?.sha256).toBe(sha256(oldText));
		expect(inputs[0]?.chars).toBe(oldText.length);
		expect(inputs[0]?.digest.startsWith(`{#${inputs[0]?.code} FOLDED} edit edits[0].oldText · `)).toBe(true);
		expect(p.layer?.blocks.every((m) => m.kind !== "input")).toBe(true);
		const subs = p.substitutions.filter((s) => s.path !== undefined);
		expect(subs.map((s) => [s.messageIndex, s.blockIndex, s.path])).toEqual([
			[1, 0, ["edits", 0, "oldText"]],
			[1, 0, ["edits", 0, "newText"]],
		]);
		const args = b.messages[1]?.content as Array<{ arguments: unknown }>;
		const folded = foldArguments(
			args[0]?.arguments,
			subs.map((s) => ({ path: s.path ?? [], text: s.text })),
		) as { path: string; edits: Array<{ oldText: string; newText: string }> };
		expect(folded.path).toBe("src/a.ts");
		expect(folded.edits[1]).toEqual({ oldText: "x", newText: "y" });
		expect(folded.edits[0]?.oldText).toBe(inputs[0]?.digest);
	});

	test("a call in the tool loop still running (after the newest user message) keeps its input", () => {
		const b = new Branch().user("fix it");
		b.call("write", { path: "a.ts", content: big("w") }, "wrote");
		b.call("bash", { command: "ls" }, big("ls"));
		b.answer();
		const p = plan(b.view(), emptyIndex());
		expect(p.layer?.inputs).toBeUndefined();
		// The result before the newest response still folds.
		expect(p.layer?.blocks.map((m) => m.kind)).toContain("toolResult");
	});

	test("a call whose result the model has not seen yet keeps its input", () => {
		const b = new Branch().user("fix it");
		b.call("write", { path: "a.ts", content: big("w") }, "wrote");
		b.user("and then?");
		// No response after the result: it has not been delivered.
		const p = plan(b.view(), emptyIndex());
		expect(p.layer).toBeNull();
	});

	test("inside the protected tail: not a candidate (unless superseded)", () => {
		const b = new Branch().user("fix it");
		b.call("write", { path: "a.ts", content: big("w") }, "wrote");
		b.answer().user("next");
		const p = plan(b.view(), emptyIndex(), { settings: { ...EAGER, tail: 1_000_000 } });
		expect(p.layer).toBeNull();
		expect(p.mass).toBe(0);
	});

	test("inputs off (a provider refused them): no input candidate, and frozen input masks are not applied", () => {
		const b = new Branch().user("fix it");
		b.call("write", { path: "a.ts", content: big("w") }, "wrote");
		b.answer().user("next");
		const index = emptyIndex();
		const first = plan(b.view(), index);
		expect(first.layer?.inputs?.blocks).toHaveLength(1);
		addRecord(index, first.layer as NonNullable<FoldPlan["layer"]>);
		b.answer("more");
		const on = plan(b.view(), index);
		expect(on.substitutions.filter((s) => s.path !== undefined)).toHaveLength(1);
		const off = plan(b.view(), index, { inputs: false });
		expect(off.substitutions.filter((s) => s.path !== undefined)).toHaveLength(0);
		expect(off.maskedTokens).toBeLessThan(on.maskedTokens);
		const fresh = plan(b.view(), emptyIndex(), { inputs: false });
		expect(fresh.layer?.inputs).toBeUndefined();
	});

	test("frozen input masks re-apply byte for byte, on whichever form edits comes in", () => {
		const b = new Branch().user("fix it");
		const oldText = big("old");
		const edits = JSON.stringify([{ oldText, newText: "n" }]);
		b.call("edit", { path: "a.ts", edits }, "ok");
		b.answer().user("next");
		const index = emptyIndex();
		const first = plan(b.view(), index);
		const layer = first.layer as NonNullable<FoldPlan["layer"]>;
		expect(layer.inputs?.blocks.map((m) => m.path)).toEqual([["edits", 0, "oldText"]]);
		addRecord(index, layer);
		b.answer("again");
		const frozenSubs = (p: FoldPlan) => p.substitutions.filter((s) => s.path !== undefined);
		const again = plan(b.view(), index);
		expect(again.layer).toBeNull();
		expect(frozenSubs(again)).toEqual(frozenSubs(first));
		// Pi parses a JSON-string edits in place once the call ran: the live message holds the array.
		const call = (b.messages[1]?.content as Array<{ arguments: { edits: unknown } }> | undefined)?.[0];
		if (call) call.arguments.edits = JSON.parse(edits);
		const live = plan(b.view(), index);
		expect(frozenSubs(live)).toEqual(frozenSubs(first));
		expect(valueAt(call?.arguments, ["edits", 0, "oldText"])).toBe(oldText);
	});

	test("a value whose length changed (an id reused for other content) is not masked", () => {
		const b = new Branch().user("fix it");
		b.call("write", { path: "a.ts", content: big("w") }, "wrote");
		b.answer().user("next");
		const index = emptyIndex();
		addRecord(index, plan(b.view(), index).layer as NonNullable<FoldPlan["layer"]>);
		const call = (b.messages[1]?.content as Array<{ arguments: { content: string } }> | undefined)?.[0];
		if (call) call.arguments.content += "!";
		expect(plan(b.view(), index).substitutions.filter((s) => s.path !== undefined)).toEqual([]);
	});

	test("verify sees each input value with its path; a refused one is left out", () => {
		const b = new Branch().user("fix it");
		b.call("write", { path: "a.ts", content: big("w") }, "wrote");
		b.answer().user("next");
		const seen: unknown[] = [];
		const p = plan(b.view(), emptyIndex(), {
			verify: (entryId, blockIndex, text, path) => {
				seen.push([entryId, blockIndex, text.length, path]);
				return path === undefined;
			},
		});
		expect(seen).toContainEqual(["e2", 0, big("w").length, ["content"]]);
		expect(p.layer?.inputs).toBeUndefined();
	});
});

describe("superseded and duplicate blocks in planFold", () => {
	const inTail = { ...EAGER, tail: 1_000_000 };

	test("a read later re-read in full folds even inside the protected tail, and its digest says why", () => {
		const b = new Branch().user("look");
		b.call("read", { path: "src/a.ts" }, big("v1"));
		b.call("read", { path: "src/a.ts" }, big("v2"), { id: "call_9" });
		b.answer().user("next");
		const p = plan(b.view(), emptyIndex(), { settings: inTail });
		expect(p.state).toBe("fold");
		expect(p.layer?.blocks.map((m) => [m.entryId, m.kind])).toEqual([["e3", "toolResult"]]);
		expect(p.layer?.blocks[0]?.digest.split("\n")[0]).toContain("· superseded by read src/a.ts (call_9)");
	});

	test("a duplicate names the later call it repeats; that call stays", () => {
		const b = new Branch().user("look");
		b.call("bash", { command: "make test" }, big("out"));
		b.call("bash", { command: "make test" }, big("out"), { id: "call_7" });
		b.answer().user("next");
		const p = plan(b.view(), emptyIndex(), { settings: inTail });
		expect(p.layer?.blocks.map((m) => m.entryId)).toEqual(["e3"]);
		expect(p.layer?.blocks[0]?.digest.split("\n")[0]).toContain("· same as bash `make test` (call_7)");
	});

	test("a failed edit's input and result, once the same edit succeeds; a write's input once read back", () => {
		const b = new Branch().user("edit");
		b.call("edit", { path: "a.ts", oldText: big("miss"), newText: "x" }, "oldText not found", { isError: true });
		b.call("edit", { path: "a.ts", oldText: "y", newText: "z" }, "ok", { id: "call_5" });
		b.call("write", { path: "b.ts", content: big("body") }, "wrote");
		b.call("read", { path: "b.ts" }, "short", { id: "call_8" });
		b.answer().user("next");
		const p = plan(b.view(), emptyIndex(), { settings: inTail });
		const inputs = p.layer?.inputs?.blocks ?? [];
		expect(inputs.map((m) => [m.entryId, m.path])).toEqual([
			["e2", ["oldText"]],
			["e6", ["content"]],
		]);
		expect(inputs[0]?.digest.split("\n")[0]).toContain("· superseded by edit a.ts (call_5)");
		expect(inputs[1]?.digest.split("\n")[0]).toContain("· superseded by read b.ts (call_8)");
	});

	test("stale blocks still wait for a fold event, and count in its mass", () => {
		const b = new Branch().user("look");
		b.call("read", { path: "a.ts" }, big("v1"));
		b.call("read", { path: "a.ts" }, big("v2"));
		b.answer().user("next");
		const high = plan(b.view(), emptyIndex(), { settings: { ...inTail, foldAt: 0.9, coldFoldAt: 0.9 } });
		expect(high.state).toBe("accumulating");
		expect(high.layer).toBeNull();
		expect(high.mass).toBeGreaterThan(0);
	});

	test("nothing stale in the tool loop still running, or before its result was delivered", () => {
		const b = new Branch().user("look");
		b.call("read", { path: "a.ts" }, big("v1"));
		b.call("read", { path: "a.ts" }, big("v2"));
		b.answer();
		const p = plan(b.view(), emptyIndex(), { settings: inTail });
		expect(p.layer).toBeNull();
		expect(p.mass).toBe(0);
	});

	test("the session's cwd matches a relative and an absolute path", () => {
		const b = new Branch().user("look");
		b.call("read", { path: "src/a.ts" }, big("v1"));
		b.call("write", { path: "/w/src/a.ts", content: "new" }, "ok");
		b.answer().user("next");
		expect(plan(b.view(), emptyIndex(), { settings: inTail }).layer).toBeNull();
		const p = plan(b.view(), emptyIndex(), { settings: inTail, cwd: "/w" });
		expect(p.layer?.blocks.map((m) => m.entryId)).toEqual(["e3"]);
	});

	test("an age candidate that is also stale says why too", () => {
		const b = new Branch().user("look");
		b.call("read", { path: "a.ts" }, big("v1"));
		b.call("read", { path: "a.ts" }, big("v2"), { id: "call_2" });
		b.answer().user("next");
		const p = plan(b.view(), emptyIndex());
		const digests = p.layer?.blocks.map((m) => m.digest.split("\n")[0]) ?? [];
		expect(digests).toHaveLength(2);
		expect(digests[0]).toContain("superseded by read a.ts (call_2)");
		expect(digests[1]).not.toContain("superseded");
	});
});
