// The shape of what Pi sends to the fake, and how to tell its summary requests from normal turns.
import type { Usage } from "./replies.ts";

/** An OpenAI chat message as Pi sends it; only the fields the harness reads are typed. */
export interface ChatMessage {
	role: string;
	content?: string | Array<{ type: string; text?: string }> | null;
	tool_calls?: Array<{ id: string; type: string; function: { name: string; arguments: string } }>;
	tool_call_id?: string;
	[key: string]: unknown;
}

export interface ChatRequestBody {
	model: string;
	messages: ChatMessage[];
	tools?: Array<{ type: string; function: { name: string; description?: string; parameters?: unknown } }>;
	stream?: boolean;
	[key: string]: unknown;
}

/** Which of Pi's summarization prompts a summary request carries. */
export type SummaryKind = "compaction" | "compaction-update" | "turn-prefix" | "branch";

/** One request a fake provider received; `Body` is the provider's request body (OpenAI chat by default). */
export interface RecordedRequest<Body = ChatRequestBody> {
	/** Position among all chat requests the fake received, from 0. */
	index: number;
	path: string;
	headers: Record<string, string | string[] | undefined>;
	body: Body;
	stream: boolean;
	/** Text of the system (or developer) message, if any. */
	systemPrompt: string | undefined;
	/** True for Pi's compaction and branch summary requests: no tools, summarization system prompt. */
	isSummaryRequest: boolean;
	summaryKind: SummaryKind | undefined;
	/** The usage the fake reported for this request (absent for error replies). */
	reportedUsage?: Usage;
}

export const SUMMARIZATION_SYSTEM_PREFIX = "You are a context summarization assistant";

export function messageText(message: ChatMessage | undefined): string {
	if (!message?.content) return "";
	if (typeof message.content === "string") return message.content;
	return message.content.map((part) => part.text ?? "").join("");
}

export function systemPromptOf(body: ChatRequestBody): string | undefined {
	const system = body.messages.find((m) => m.role === "system" || m.role === "developer");
	return system ? messageText(system) : undefined;
}

/**
 * Both Pi versions send compaction, turn-prefix and branch summaries with the same system prompt and
 * no tools; the user message's instructions tell them apart (texts checked in 0.80.6 and 1.6.0 dist).
 */
export function classifySummary(body: ChatRequestBody, systemPrompt: string | undefined): SummaryKind | undefined {
	if ((body.tools?.length ?? 0) > 0) return undefined;
	if (!systemPrompt?.startsWith(SUMMARIZATION_SYSTEM_PREFIX)) return undefined;
	const users = body.messages.filter((m) => m.role === "user");
	const prompt = messageText(users[users.length - 1]);
	if (prompt.includes("summary of this conversation branch")) return "branch";
	if (prompt.includes("PREFIX of a turn") || prompt.includes("# Instructions\nThe messages above are earlier context"))
		return "turn-prefix";
	if (prompt.includes("<previous-summary>")) return "compaction-update";
	return "compaction";
}

/** Tool results Pi sent back, in order, as `{id, text}`; handy to prove a tool really ran. */
export function toolResultsOf(req: RecordedRequest): Array<{ id: string; text: string }> {
	return req.body.messages
		.filter((m) => m.role === "tool")
		.map((m) => ({ id: m.tool_call_id ?? "", text: messageText(m) }));
}

export function lastUserText(req: RecordedRequest): string {
	const users = req.body.messages.filter((m) => m.role === "user");
	return messageText(users[users.length - 1]);
}
