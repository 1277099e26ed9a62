/**
 * The model-callable tools: recall_folded (read an original back, verified) and unfold (sticky
 * re-expansion). Their prompt guidelines are also where the model learns the folding contract.
 * When the two are declared to the model is recall-declaration.ts.
 */

import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { Type } from "typebox";
import { renderPath } from "../../core/inputs.ts";
import type { MaskedBlock, UnfoldRecord } from "../../core/layers.ts";
import { FOLD_STATE_VERSION } from "../../core/layers.ts";
import { normalizeCode } from "../../core/recall.ts";
import { findOriginal } from "../../store/originals.ts";
import { answerRecall, type RecallSources } from "../../store/recall.ts";

export const RECALL_TOOL = "recall_folded";
export const UNFOLD_TOOL = "unfold";

export const FOLDING_GUIDELINES = [
	"Text that starts with {#code FOLDED} is a digest that context-fold put in place of older tool output, thinking, or a long argument of an older tool call (a file's content, an edit's text) to save context. The original is intact on disk and verified by sha256; the digest keeps the first line and every error-like line. Never copy a digest into a tool call: recall the original first.",
	"Use recall_folded to read a folded original: search=<text> looks through every folded block at once; code=<code> returns the original, with grep=<text> for matching lines or lines=a-b for a range. Answers are capped, so prefer grep= or lines= for large outputs.",
	"Use unfold code=<code> only when you need a folded block back in context for the rest of the session; it stays expanded and costs its full size on every later request.",
];

const recallParams = Type.Object({
	code: Type.Optional(Type.String({ description: "Code of a folded block, as in {#code FOLDED}" })),
	search: Type.Optional(Type.String({ description: "Find this text (case-insensitive) in every folded block" })),
	grep: Type.Optional(Type.String({ description: "With code: matching lines of that block, with context" })),
	lines: Type.Optional(Type.String({ description: "With code: a 1-based line range such as 40-80" })),
});

const unfoldParams = Type.Object({
	code: Type.String({ description: "Code of a folded block, as in {#code FOLDED}" }),
});

/** True when a tool's parameter schema is one of ours (identity, not shape). */
export function isOurToolSchema(parameters: unknown): boolean {
	return parameters === recallParams || parameters === unfoldParams;
}

export interface ToolDeps {
	sources(): RecallSources;
	recallTokens(): number;
	/** Persist an unfold record and apply it to the in-memory state. Throws when it cannot be recorded. */
	commitUnfold(record: UnfoldRecord): void;
}

function textResult(text: string, isError = false) {
	return { content: [{ type: "text" as const, text }], details: undefined, ...(isError && { isError: true }) };
}

export function registerTools(pi: ExtensionAPI, deps: ToolDeps): void {
	pi.registerTool({
		name: RECALL_TOOL,
		label: "Recall folded",
		description:
			"Read back the original of a block that context-fold folded into a {#code FOLDED} digest. Give search=<text> to look through every folded block at once, or code=<code> for one block (optionally with grep=<text> or lines=a-b). Originals are verified against the sha256 recorded when they were folded. Answers are token-capped.",
		promptSnippet: "Read back folded tool output ({#code FOLDED}) by code, grep, line range, or search",
		promptGuidelines: FOLDING_GUIDELINES,
		parameters: recallParams,
		async execute(_id, params) {
			try {
				const answer = answerRecall(
					{
						...(params.code !== undefined && { code: params.code }),
						...(params.search !== undefined && { search: params.search }),
						...(params.grep !== undefined && { grep: params.grep }),
						...(params.lines !== undefined && { lines: params.lines }),
						maxTokens: deps.recallTokens(),
					},
					deps.sources(),
				);
				return textResult(answer.text, !answer.ok);
			} catch (error) {
				return textResult(`recall_folded failed: ${(error as Error).message}`, true);
			}
		},
	});

	pi.registerTool({
		name: UNFOLD_TOOL,
		label: "Unfold",
		description:
			"Expand a folded block ({#code FOLDED}) back into context for the rest of the session. It stays expanded and is never folded again. Prefer recall_folded when you only need to read it once.",
		promptSnippet: "Permanently expand a folded block ({#code FOLDED}) back into context",
		parameters: unfoldParams,
		async execute(_id, params) {
			try {
				const code = normalizeCode(params.code);
				const src = deps.sources();
				const block = src.index.byCode.get(code);
				if (block === undefined) {
					// Reuse recall's message for unknown codes: it names the closest ones.
					return textResult(answerRecall({ code: params.code, maxTokens: 200 }, src).text, true);
				}
				if (src.index.unfolded.has(code))
					return textResult(`{#${code}} is already unfolded; its original is in context.`);
				// Verify exactly as recall does: never put back bytes that are not the ones folded (the
				// session file edited since), nor promise a block whose entry is gone from the file.
				const original = findOriginal(block, src.ledger, src.memory);
				if (!original.ok) return textResult(original.message, true);
				deps.commitUnfold({ type: "unfold", v: FOLD_STATE_VERSION, codes: [code] });
				return textResult(
					`{#${code}} unfolded: from the next request on, the original ${unfoldedWhat(block)} (${block.chars} chars) is back in context in place of its digest, and it will not be folded again.`,
				);
			} catch (error) {
				return textResult(`unfold failed: ${(error as Error).message}`, true);
			}
		},
	});
}

/** What an unfold brings back, in words. */
function unfoldedWhat(block: MaskedBlock): string {
	if (block.kind === "thinking") return "thinking";
	if (block.kind === "input") return `${block.toolName ?? "tool"} input ${renderPath(block.path ?? [])}`;
	return `${block.toolName ?? "tool"} output`;
}
