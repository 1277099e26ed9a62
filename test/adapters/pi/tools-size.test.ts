// `context-fold simulate` charges the folded arm a fixed RECALL_TOOLS_TOKENS for context-fold's two
// tools. The economics benchmark measures the real figure in Pi 1.6.0 (tools array plus system-prompt
// lines, chars/4); this keeps the constant within reach of what the declarations actually hold.
import { describe, expect, test } from "bun:test";
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { registerTools } from "../../../src/adapters/pi/tools.ts";
import { RECALL_TOOLS_TOKENS } from "../../../src/core/recall-tools.ts";

describe("the recall tools' fixed cost", () => {
	test("RECALL_TOOLS_TOKENS is within 25 % of the declarations' own size", () => {
		const tools: Array<Record<string, unknown>> = [];
		const capture = { registerTool: (t: Record<string, unknown>) => tools.push(t) } as unknown as ExtensionAPI;
		registerTools(capture, {
			sources: () => {
				throw new Error("not called");
			},
			recallTokens: () => 4000,
			commitUnfold: () => {},
		});
		expect(tools.map((t) => t.name)).toEqual(["recall_folded", "unfold"]);
		let chars = 0;
		for (const t of tools) {
			// On the wire: name, description and the JSON schema; in the system prompt: snippet and guidelines.
			chars += JSON.stringify({ name: t.name, description: t.description, parameters: t.parameters }).length;
			chars += String(t.promptSnippet ?? "").length;
			for (const g of (t.promptGuidelines as string[] | undefined) ?? []) chars += g.length;
		}
		const tokens = chars / 4;
		expect(RECALL_TOOLS_TOKENS).toBeGreaterThan(tokens * 0.75);
		expect(RECALL_TOOLS_TOKENS).toBeLessThan(tokens * 1.25);
	});
});
