/**
 * How a replayed request is measured, message by message, for the biller (chars/4 of the string).
 *
 * - `content` (the default): what each message says, compactly: role, tool call ids, block kinds and
 *   texts (billing.ts serializeMessage). The system prompt and tools are measured apart, from the
 *   recording's first reported prompt, in the provider's own tokens.
 * - `openai-json`: the message as Pi's openai-completions converter puts it in the request body,
 *   JSON with its keys, tool-call arguments as a JSON string inside it (so escaped twice), thinking as
 *   `reasoning_content`. chars/4 of that body is what the economics benchmark's fake model bills and
 *   reports to Pi; it is an estimator of its own, not any provider's tokenizer.
 *
 * Both leave out what Pi never sends: an aborted or errored assistant message (pi-ai's
 * transformMessages drops it on every API, Pi 0.80.6 and 1.6.0 alike).
 */
import { serializeMessage } from "../billing.ts";
import type { ViewBlock, ViewMessage } from "../blocks.ts";
import { CHARS_PER_TOKEN, IMAGE_TOKEN_ESTIMATE } from "../tokens.ts";

export type PromptMeasure = "content" | "openai-json";
export const PROMPT_MEASURES: readonly PromptMeasure[] = ["content", "openai-json"];

/** Tokens of a request's parts as the biller counts them: each part and one separator, chars/4. */
export function partsTokens(parts: readonly string[]): number {
	let chars = 0;
	for (const p of parts) chars += p.length + 1;
	return Math.ceil(chars / CHARS_PER_TOKEN);
}

/** The system prompt and tools: a reported prompt minus the measure of its messages. */
export function overheadFrom(reported: number, parts: readonly string[]): number {
	return Math.max(0, reported - partsTokens(parts));
}

/**
 * One message as measured. `replaced` maps a block index to its replacement text: a fold digest, or
 * for a tool call the folded arguments as JSON (without the name). Null: the measure sends nothing
 * for it (openai-completions drops an assistant message with neither text nor tool calls).
 */
export function measureMessage(
	measure: PromptMeasure,
	m: ViewMessage,
	replaced?: ReadonlyMap<number, string>,
): string | null {
	if (measure === "content") {
		if (replaced === undefined) return serializeMessage(m);
		// serializeMessage reads a tool call's text as its arguments' JSON followed by its name.
		const withNames = new Map<number, string>();
		for (const [j, text] of replaced) {
			const b = m.blocks[j];
			withNames.set(j, b?.kind === "toolCall" && b.call !== undefined ? text + b.call.name : text);
		}
		return serializeMessage(m, withNames);
	}
	return openAiMessage(m, replaced);
}

/** Stands in for an image: its data URL weighs the core's fixed image estimate. */
const IMAGE_URL = `{"image_url":{"url":"${"#".repeat(IMAGE_TOKEN_ESTIMATE * CHARS_PER_TOKEN - 32)}"},"type":"image_url"}`;

const textOf = (b: ViewBlock, j: number, replaced: ReadonlyMap<number, string> | undefined) =>
	replaced?.get(j) ?? b.text;

/**
 * The message as Pi 1.6.0's openai-completions converter writes it for a model with default compat
 * (convertToLlm first: a bash execution, custom message or summary goes as a user message; Pi's
 * short wrappers around a summary or a bash command are not added). Keys in the order JSON allows
 * any: only the length is measured.
 */
function openAiMessage(m: ViewMessage, replaced: ReadonlyMap<number, string> | undefined): string | null {
	if (m.role === "assistant") {
		let text = "";
		const thinking: string[] = [];
		const calls: unknown[] = [];
		m.blocks.forEach((b, j) => {
			const t = textOf(b, j, replaced);
			if (b.kind === "text" && t.trim().length > 0) text += t;
			else if (b.kind === "thinking" && t.trim().length > 0) thinking.push(t);
			else if (b.kind === "toolCall" && b.call !== undefined) {
				const args = replaced?.get(j) ?? JSON.stringify(b.call.args ?? {}) ?? "{}";
				calls.push({ id: b.call.id ?? "", type: "function", function: { name: b.call.name, arguments: args } });
			}
		});
		// Thinking alone does not make a message: Pi skips one with neither text nor tool calls.
		if (text.length === 0 && calls.length === 0) return null;
		const o: Record<string, unknown> = { role: "assistant", content: text.length > 0 ? text : null };
		if (thinking.length > 0) o.reasoning_content = thinking.join("\n");
		if (calls.length > 0) o.tool_calls = calls;
		return JSON.stringify(o);
	}
	if (m.role === "toolResult") {
		const texts: string[] = [];
		let images = 0;
		m.blocks.forEach((b, j) => {
			if (b.kind === "image") images++;
			else if (b.kind === "text") texts.push(textOf(b, j, replaced));
		});
		const joined = texts.join("\n");
		const content = joined.trim().length > 0 ? joined : images > 0 ? "(see attached image)" : "(no tool output)";
		const tool = JSON.stringify({ role: "tool", content, tool_call_id: m.toolCallId ?? "" });
		if (images === 0) return tool;
		// Images of a result follow in a user message of their own.
		const user = `{"content":[{"text":"Attached image(s) from tool result:","type":"text"}${`,${IMAGE_URL}`.repeat(images)}],"role":"user"}`;
		return `${tool},${user}`;
	}
	// A user message, or what convertToLlm turns into one: text parts (empty ones dropped) and images.
	const parts: string[] = [];
	m.blocks.forEach((b, j) => {
		if (b.kind === "image") parts.push(IMAGE_URL);
		else {
			const t = textOf(b, j, replaced);
			if (t.length > 0) parts.push(JSON.stringify({ type: "text", text: t }));
		}
	});
	if (parts.length === 0) return null;
	return `{"role":"user","content":[${parts.join(",")}]}`;
}
