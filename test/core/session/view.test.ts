// Pi messages to the core's view, and the view cache that lets a steady request reuse last request's
// views: a cached view is reused only when it is still exactly what the message would give.
import { describe, expect, test } from "bun:test";
import { blockKey, keyOfBlock, type ViewBlock } from "../../../src/core/blocks.ts";
import { buildView, type PiMessage } from "../../../src/core/session/view.ts";
import { ViewCache } from "../../../src/core/session/view-cache.ts";

const result = (text: string, extra?: string): PiMessage => ({
	role: "toolResult",
	toolCallId: "c1",
	toolName: "bash",
	timestamp: 1,
	content: [{ type: "text", text }, ...(extra === undefined ? [] : [{ type: "text", text: extra }])],
});
const lookup = () => "e1";

describe("ViewCache", () => {
	test("an unchanged message reuses its view object", () => {
		const cache = new ViewCache();
		const a = buildView([result("x".repeat(50))], lookup, undefined, cache);
		const b = buildView([result("x".repeat(50))], lookup, undefined, cache);
		expect(b[0]).toBe(a[0] as never);
	});

	test("a view made while another extension had added a part is not reused once the part is gone", () => {
		const cache = new ViewCache();
		// Another extension appended a part to the message in this request only.
		buildView([result("x".repeat(50), "note from another extension")], lookup, undefined, cache);
		const next = buildView([result("x".repeat(50))], lookup, undefined, cache);
		expect(next[0]?.blocks).toEqual([{ kind: "text", text: "x".repeat(50) }]);
	});

	test("a bash execution's view keeps its extra block (command and output) and is reused", () => {
		const cache = new ViewCache();
		const m: PiMessage = { role: "bashExecution", timestamp: 2, content: [], command: "ls", output: "a\nb" };
		const a = buildView([m], lookup, undefined, cache);
		const b = buildView([m], lookup, undefined, cache);
		expect(a[0]?.blocks).toEqual([{ kind: "other", text: "ls\na\nb" }]);
		expect(b[0]).toBe(a[0] as never);
	});

	test("a bash execution whose text changed is rebuilt, not reused", () => {
		const cache = new ViewCache();
		const m = (output: string): PiMessage => ({
			role: "bashExecution",
			timestamp: 2,
			content: [],
			command: "ls",
			output,
		});
		buildView([m("a")], lookup, undefined, cache);
		expect(buildView([m("b")], lookup, undefined, cache)[0]?.blocks).toEqual([{ kind: "other", text: "ls\nb" }]);
	});
});

describe("a tool result's call summary", () => {
	const call = (id: string, command: string, ts: number): PiMessage => ({
		role: "assistant",
		timestamp: ts,
		content: [{ type: "toolCall", id, name: "bash", arguments: { command } }],
	});
	const res = (id: string, ts: number): PiMessage => ({
		role: "toolResult",
		toolCallId: id,
		toolName: "bash",
		timestamp: ts,
		content: [{ type: "text", text: "out" }],
	});
	const ids = (m: PiMessage) => `e${m.timestamp}`;

	test("comes from the newest call with its id before it, never from one after it", () => {
		const view = buildView([call("c1", "old", 1), call("c1", "new", 2), res("c1", 3), call("c1", "later", 4)], ids);
		expect(view[2]?.callSummary).toBe("new");
		// A result before any call with its id has no summary.
		expect(buildView([res("c9", 1), call("c9", "ls", 2)], ids)[0]?.callSummary).toBeUndefined();
		// Two calls with one id in one message: the later part, as a map filled in order would say.
		const twice: PiMessage = {
			role: "assistant",
			timestamp: 1,
			content: [
				{ type: "toolCall", id: "c1", name: "bash", arguments: { command: "first" } },
				{ type: "toolCall", id: "c1", name: "bash", arguments: { command: "second" } },
			],
		};
		expect(buildView([twice, res("c1", 2)], ids)[1]?.callSummary).toBe("second");
	});

	test("a result built fresh after a cached call still finds it; a cached result keeps its summary", () => {
		const cache = new ViewCache();
		buildView([call("c1", "ls", 1)], ids, undefined, cache);
		const second = buildView([call("c1", "ls", 1), res("c1", 2)], ids, undefined, cache);
		expect(second[1]?.callSummary).toBe("ls");
		const third = buildView(
			[call("c1", "ls", 1), res("c1", 2), call("c2", "pwd", 3), res("c2", 4)],
			ids,
			undefined,
			cache,
		);
		expect(third[1]).toBe(second[1] as never);
		expect(third[3]?.callSummary).toBe("pwd");
	});

	test("the cache holds only the views the latest request used", () => {
		const cache = new ViewCache();
		buildView([call("c1", "ls", 1), res("c1", 2)], ids, undefined, cache);
		expect(cache.size).toBe(2);
		buildView([res("c1", 2)], ids, undefined, cache);
		expect(cache.size).toBe(1);
		buildView([], ids, undefined, cache);
		expect(cache.size).toBe(0);
	});
});

describe("keyOfBlock", () => {
	test("is blockKey, memoized out of sight, and rebuilt for another entry or index", () => {
		const block: ViewBlock = { kind: "text", text: "x" };
		expect(keyOfBlock(block, "e1", 2)).toBe(blockKey("e1", 2));
		// The memo is a cache, not data: copies, comparisons and JSON never see it.
		expect(Object.keys(block)).toEqual(["kind", "text"]);
		expect(JSON.stringify(block)).toBe('{"kind":"text","text":"x"}');
		expect(block).toEqual({ kind: "text", text: "x" });
		const first = block.key;
		expect(keyOfBlock(block, "e1", 2)).toBe("e1:2");
		expect(block.key).toBe(first as never);
		expect(keyOfBlock(block, "e2", 2)).toBe("e2:2");
		expect(keyOfBlock(block, "e2", 3)).toBe("e2:3");
	});
});
