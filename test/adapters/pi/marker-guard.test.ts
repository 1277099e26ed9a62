import { describe, expect, test } from "bun:test";
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { registerMarkerGuard, renderGuardReason } from "../../../src/adapters/pi/marker-guard.ts";
import type { Runtime } from "../../../src/adapters/pi/runtime.ts";

type Handler = (event: { toolName: string; input: unknown }, ctx: unknown) => unknown;

/** The guard's handler, registered against a stand-in Pi, over a runtime that knows `codes`. */
function guard(codes: string[], sync: () => boolean = () => true): Handler {
	let handler: Handler | undefined;
	const pi = { on: (_event: string, h: Handler) => (handler = h) } as unknown as ExtensionAPI;
	const rt = { state: { index: { byCode: new Map(codes.map((c) => [c, {}])) } }, sync } as unknown as Runtime;
	registerMarkerGuard(pi, rt);
	if (handler === undefined) throw new Error("no tool_call handler registered");
	return handler;
}

describe("marker guard", () => {
	test("blocks a call whose arguments carry a marker of this session, anywhere in them", () => {
		const h = guard(["a1b2c3", "d4e5f6"]);
		expect(h({ toolName: "write", input: { path: "x", content: "{#a1b2c3 FOLDED} bash · 10 chars" } }, {})).toEqual({
			block: true,
			reason: renderGuardReason(["a1b2c3"]),
		});
		expect(
			h(
				{
					toolName: "edit",
					input: { path: "x", edits: [{ oldText: "{#D4E5F6 FOLDED}", newText: "{#a1b2c3 FOLDED}" }] },
				},
				{},
			),
		).toEqual({ block: true, reason: renderGuardReason(["d4e5f6", "a1b2c3"]) });
	});
	test("lets through markers of other sessions, text without a marker, and our own tools", () => {
		const h = guard(["a1b2c3"]);
		expect(h({ toolName: "write", input: { content: "{#ffffff FOLDED} not ours" } }, {})).toBeUndefined();
		expect(h({ toolName: "write", input: { content: "#a1b2c3 FOLDED, a1b2c3" } }, {})).toBeUndefined();
		expect(h({ toolName: "recall_folded", input: { code: "{#a1b2c3 FOLDED}" } }, {})).toBeUndefined();
		expect(h({ toolName: "unfold", input: { code: "{#a1b2c3 FOLDED}" } }, {})).toBeUndefined();
	});
	test("never throws: a failing sync or a hostile argument object lets the call through", () => {
		const failing = guard(["a1b2c3"], () => {
			throw new Error("session unreadable");
		});
		expect(failing({ toolName: "write", input: { content: "{#a1b2c3 FOLDED}" } }, {})).toBeUndefined();
		const hostile = {
			get content(): string {
				throw new Error("getter");
			},
		};
		expect(guard(["a1b2c3"])({ toolName: "write", input: hostile }, {})).toBeUndefined();
	});
	test("the reason names every code and tells the model to recall first", () => {
		expect(renderGuardReason(["a1b2c3"])).toBe(
			"Blocked by context-fold: the arguments contain the fold marker {#a1b2c3 FOLDED}. A marker starts a digest, a short stand-in for a folded block, not its content, so this call would use the digest instead of the original. Call recall_folded code=a1b2c3 to read the original first, or unfold code=a1b2c3 to bring it back into context, then repeat this call with the real text.",
		);
		expect(renderGuardReason(["a1b2c3", "d4e5f6"])).toContain(
			"the fold markers {#a1b2c3 FOLDED}, {#d4e5f6 FOLDED}. A marker starts",
		);
		expect(renderGuardReason(["a1b2c3", "d4e5f6"])).toContain("(and likewise for the other codes)");
	});
});
