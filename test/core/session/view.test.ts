// Pi messages to the core's view, and the view cache that lets a steady request reuse last request's
// views: a cached view is reused only when it is still exactly what the message would give.
import { describe, expect, test } from "bun:test";
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
