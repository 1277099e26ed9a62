/**
 * Native Pi's compaction as it is billed: the summary request(s) Pi 1.6.0 sends to the model when it
 * compacts (core/compaction in Pi; its docs/compaction.md), and the summary it then puts in the
 * context, for the arm of `context-fold simulate` that stands for Pi without folding.
 *
 * What Pi sends, per compaction, with no prompt cache (it asks for none on these requests):
 * - one request for the history: Pi's summarization system prompt, and one user message holding the
 *   messages before the cut serialized as text (each tool result cut to 2,000 characters, thinking
 *   left out), then the previous compaction's summary when there is one, then Pi's instructions (to
 *   write a summary, or to update the previous one);
 * - when the cut falls inside a turn (a split turn), a second request for the start of that turn (the
 *   messages from its user message to the cut) with Pi's turn-prefix instructions. With nothing before
 *   that turn to summarize, the history request is not sent and the previous summary stands in for it.
 *
 * Pi's own prompt and instruction texts are not copied here: each is stood in for by a plain text of
 * the same length as JSON (measured on Pi 1.6.0; a test compares them with the installed Pi), which is
 * all a measure of the request reads. The summary the model writes is an assumption,
 * NATIVE_SUMMARY_TOKENS long, and so is the summary the arm's context carries afterwards (Pi joins a
 * split turn's two summaries and appends the files read and modified, as Pi does).
 *
 * Pi 0.80.6 sends the same requests except that it also serializes thinking: on a session with
 * thinking its requests are larger than estimated here.
 */
import type { PiContent, PiMessage } from "../session/view.ts";
import { CHARS_PER_TOKEN } from "../tokens.ts";
import { isRecord } from "../values.ts";
import type { PromptMeasure } from "./wire.ts";

/**
 * Output tokens assumed for each summary native Pi's model writes, and the size of the summary it
 * leaves in the context. An assumption: a real model's summary varies with the model and the session
 * (the economics benchmark's fake model answers with exactly this many, chars/4).
 */
export const NATIVE_SUMMARY_TOKENS = 1_500;

/** One summary request native Pi sends when it compacts. */
export interface SummaryRequest {
	/** The history before the cut, or the start of a split turn. */
	kind: "history" | "turn-prefix";
	/** Prompt tokens by the replay's measure (system prompt and the one user message; no tools). */
	prompt: number;
	/** Output tokens: NATIVE_SUMMARY_TOKENS, assumed. */
	output: number;
}

/** The files Pi lists after a summary, carried from one compaction to the next. */
export interface FileLists {
	readFiles: string[];
	modifiedFiles: string[];
}

export interface PreviousCompaction extends FileLists {
	summary: string;
}

export interface NativeCompaction {
	requests: SummaryRequest[];
	/** The summary Pi puts in the context (assumed-size summaries, joined, and the file lists). */
	summary: string;
	files: FileLists;
}

/**
 * Lengths, as JSON string contents (escapes counted), of Pi 1.6.0's fixed texts: the summarization
 * system prompt; the instructions for a first summary, for updating a previous one, and for a split
 * turn's start; the wrapper around a branch summary (before and after the summary).
 */
export const PI_TEXT_JSON_CHARS = {
	system: 312,
	initial: 914,
	update: 1_300,
	turnPrefix: 677,
	branchBefore: 92,
	branchAfter: 10,
} as const;

/** Characters of a tool result Pi keeps in the serialized conversation. */
const TOOL_RESULT_MAX_CHARS = 2_000;

/** A stand-in for one of Pi's fixed texts: plain characters, as long as the text is as JSON. */
function standIn(name: keyof typeof PI_TEXT_JSON_CHARS): string {
	const n = PI_TEXT_JSON_CHARS[name];
	return `[Pi's ${name} text]${".".repeat(n)}`.slice(0, n);
}

/**
 * The summary's stand-in text: lines of plain words, NATIVE_SUMMARY_TOKENS × 4 characters in all, as
 * a model's summary of that many tokens would weigh by chars/4.
 */
export function assumedSummaryText(): string {
	const target = NATIVE_SUMMARY_TOKENS * CHARS_PER_TOKEN;
	const lines: string[] = [];
	let chars = 0;
	for (let i = 1; chars < target; i++) {
		const line = `- summary line ${String(i).padStart(3, "0")}: stands in for what native Pi's model would write.`;
		lines.push(line);
		chars += line.length + 1;
	}
	return lines.join("\n").slice(0, target);
}

/** The text blocks of a message's content, joined by `separator` (a string content as is). */
function textOf(content: PiMessage["content"], separator: string): string {
	if (typeof content === "string") return content;
	if (!Array.isArray(content)) return "";
	const texts: string[] = [];
	for (const b of content as PiContent[]) if (b?.type === "text" && typeof b.text === "string") texts.push(b.text);
	return texts.join(separator);
}

/** What a bash execution the user ran (`!cmd`) says to the model, as Pi words it. */
function bashText(m: PiMessage): string {
	const output = typeof m.output === "string" ? m.output : "";
	let text = `Ran \`${String(m.command ?? "")}\`\n${output ? `\`\`\`\n${output}\n\`\`\`` : "(no output)"}`;
	if (m.cancelled === true) text += "\n\n(command cancelled)";
	else if (typeof m.exitCode === "number" && m.exitCode !== 0) text += `\n\nCommand exited with code ${m.exitCode}`;
	if (m.truncated === true && typeof m.fullOutputPath === "string")
		text += `\n\n[Output truncated. Full output: ${m.fullOutputPath}]`;
	return text;
}

/** A tool call as Pi writes it in the serialized conversation: name(key=json, ...). */
function callText(b: PiContent): string {
	const args = isRecord(b.arguments) ? Object.entries(b.arguments) : [];
	return `${String(b.name ?? "")}(${args.map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(", ")})`;
}

/** A tool result's text as Pi keeps it: at most TOOL_RESULT_MAX_CHARS, a note of what was cut. */
function truncated(text: string): string {
	if (text.length <= TOOL_RESULT_MAX_CHARS) return text;
	// Never end on half a surrogate pair.
	const high = text.charCodeAt(TOOL_RESULT_MAX_CHARS - 1);
	const low = text.charCodeAt(TOOL_RESULT_MAX_CHARS);
	const split = high >= 0xd800 && high <= 0xdbff && low >= 0xdc00 && low <= 0xdfff;
	const end = split ? TOOL_RESULT_MAX_CHARS - 1 : TOOL_RESULT_MAX_CHARS;
	return `${text.slice(0, end)}\n\n[... ${text.length - TOOL_RESULT_MAX_CHARS} more characters truncated]`;
}

/** The conversation as the text Pi sends for summarization (its serializeConversation after convertToLlm). */
export function serializeForSummary(messages: readonly PiMessage[]): string {
	const parts: string[] = [];
	const user = (text: string) => {
		if (text) parts.push(`[User]: ${text}`);
	};
	for (const m of messages) {
		switch (m.role) {
			case "user":
			case "custom":
				user(textOf(m.content, ""));
				break;
			case "bashExecution":
				if (m.excludeFromContext !== true) user(bashText(m));
				break;
			case "branchSummary":
				user(`${standIn("branchBefore")}${String(m.summary ?? "")}${standIn("branchAfter")}`);
				break;
			case "assistant": {
				const content = typeof m.content === "string" ? [{ type: "text", text: m.content }] : (m.content ?? []);
				const blocks = (Array.isArray(content) ? content : []) as PiContent[];
				const calls = blocks.filter((b) => b?.type === "toolCall").map(callText);
				if (blocks.some((b) => b?.type === "text")) parts.push(`[Assistant]: ${textOf(blocks, "\n")}`);
				if (calls.length > 0) parts.push(`[Assistant tool calls]: ${calls.join("; ")}`);
				break;
			}
			case "toolResult": {
				const text = textOf(m.content, "");
				if (text) parts.push(`[Tool result]: ${truncated(text)}`);
				break;
			}
		}
	}
	return parts.join("\n\n");
}

/** The user message of a history request: the conversation, the previous summary, the instructions. */
function historyPrompt(messages: readonly PiMessage[], previous: string | undefined): string {
	const prior = previous === undefined ? "" : `<previous-summary>\n${previous}\n</previous-summary>\n\n`;
	return `<conversation>\n${serializeForSummary(messages)}\n</conversation>\n\n${prior}${standIn(previous === undefined ? "initial" : "update")}`;
}

/** The user message of a split turn's request: the turn's start, then the instructions. */
function turnPrefixPrompt(messages: readonly PiMessage[]): string {
	return `# Conversation\n${serializeForSummary(messages)}\n\n# Instructions\n${standIn("turnPrefix")}`;
}

/**
 * Prompt tokens of a summary request by the replay's measure, chars/4 either way. `openai-json`: the
 * request body's tools (none) and messages as Pi's openai-completions converter writes them, which is
 * what the economics benchmark's fake model bills. `content`: the system prompt and the user message
 * as the biller serializes messages, each with one separator.
 */
export function summaryPromptTokens(measure: PromptMeasure, system: string, user: string): number {
	const sys = JSON.stringify(system);
	const text = JSON.stringify(user);
	const chars =
		measure === "openai-json"
			? `[][{"role":"system","content":${sys}},{"role":"user","content":[{"type":"text","text":${text}}]}]`.length
			: `["system",null,["text",${sys}]]`.length + 1 + `["user",null,["text",${text}]]`.length + 1;
	return Math.ceil(chars / CHARS_PER_TOKEN);
}

/** Roles that start a turn (Pi: a user-like message; a compaction's summary never does). */
const TURN_START_ROLES = new Set(["user", "bashExecution", "custom", "branchSummary"]);

/** One summary request's texts: the system prompt and the user message (Pi's fixed texts stood in for). */
export interface SummaryPrompt {
	kind: SummaryRequest["kind"];
	system: string;
	user: string;
}

/**
 * The summary requests native Pi sends to compact `messages` (the context, the previous compaction's
 * summary first when there is one) at `cut` (the first kept message, findCutIndex), measured, and the
 * summary it keeps. `previous`: the previous compaction of this arm, whose summary Pi updates and
 * whose file lists it carries on.
 */
export function nativeCompaction(
	messages: readonly PiMessage[],
	cut: number,
	previous: PreviousCompaction | null,
	measure: PromptMeasure,
): NativeCompaction {
	const { prompts, summary, files } = summaryPrompts(messages, cut, previous);
	const requests = prompts.map((p) => ({
		kind: p.kind,
		prompt: summaryPromptTokens(measure, p.system, p.user),
		output: NATIVE_SUMMARY_TOKENS,
	}));
	return { requests, summary, files };
}

/** The texts of the summary requests nativeCompaction measures, and the summary Pi keeps. */
export function summaryPrompts(
	messages: readonly PiMessage[],
	cut: number,
	previous: PreviousCompaction | null,
): { prompts: SummaryPrompt[]; summary: string; files: FileLists } {
	const start = messages[0]?.role === "compactionSummary" ? 1 : 0;
	const cutMessage = messages[cut] as PiMessage;
	let turnStart = -1;
	if (!TURN_START_ROLES.has(cutMessage.role))
		for (let i = cut - 1; i >= start && turnStart < 0; i--)
			if (TURN_START_ROLES.has((messages[i] as PiMessage).role)) turnStart = i;
	const split = turnStart >= 0;
	const history = messages.slice(start, split ? turnStart : cut).filter((m) => m.role !== "system");
	const prefix = split ? messages.slice(turnStart, cut).filter((m) => m.role !== "system") : [];
	const system = standIn("system");
	const prompts: SummaryPrompt[] = [];
	const written = assumedSummaryText();
	const ask = (kind: SummaryRequest["kind"], user: string) => prompts.push({ kind, system, user });
	let summary: string;
	if (split) {
		let historyText = previous?.summary ?? "No prior history.";
		if (history.length > 0) {
			ask("history", historyPrompt(history, previous?.summary));
			historyText = written;
		}
		ask("turn-prefix", turnPrefixPrompt(prefix));
		summary = `${historyText}\n\n---\n\n**Turn Context (split turn):**\n\n${written}`;
	} else {
		ask("history", historyPrompt(history, previous?.summary));
		summary = written;
	}
	const files = fileLists([...history, ...prefix], previous);
	return { prompts, summary: summary + fileListText(files), files };
}

/** Files read and modified (Pi's read, write and edit tools), with the previous compaction's. */
function fileLists(messages: readonly PiMessage[], previous: FileLists | null): FileLists {
	const read = new Set(previous?.readFiles ?? []);
	const modified = new Set(previous?.modifiedFiles ?? []);
	const add = (name: unknown, args: unknown) => {
		const path = isRecord(args) && typeof args.path === "string" ? args.path : "";
		if (path === "") return;
		if (name === "read") read.add(path);
		else if (name === "write" || name === "edit") modified.add(path);
	};
	for (const m of messages) {
		if (m.role === "assistant" && Array.isArray(m.content)) {
			for (const b of m.content as PiContent[]) if (b?.type === "toolCall") add(b.name, b.arguments);
		} else if (m.role === "toolResult" && isRecord(m.nestedCalls) && Array.isArray(m.nestedCalls.calls)) {
			// Calls a codemode script made are recorded on its result.
			for (const c of m.nestedCalls.calls) if (isRecord(c)) add(c.name, c.arguments);
		}
	}
	return {
		readFiles: [...read].filter((f) => !modified.has(f)).sort(),
		modifiedFiles: [...modified].sort(),
	};
}

function fileListText(f: FileLists): string {
	const sections: string[] = [];
	if (f.readFiles.length > 0) sections.push(`<read-files>\n${f.readFiles.join("\n")}\n</read-files>`);
	if (f.modifiedFiles.length > 0) sections.push(`<modified-files>\n${f.modifiedFiles.join("\n")}\n</modified-files>`);
	return sections.length === 0 ? "" : `\n\n${sections.join("\n\n")}`;
}
