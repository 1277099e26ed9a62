// What the fake model can answer, plus small builders so test scripts read like a conversation.
import type { RecordedRequest } from "./requests.ts";

/** Token usage as Pi records it on an assistant message. */
export interface Usage {
	input: number;
	output: number;
	cacheRead: number;
	cacheWrite: number;
}

export interface ToolCallSpec {
	id: string;
	name: string;
	/** Serialized with JSON.stringify unless already a string (lets a test send malformed arguments). */
	args: unknown;
}

interface ReplyBase {
	/** Replaces any field of the usage the cache model computed for this reply. */
	usage?: Partial<Usage>;
	/** Delay before the response starts, e.g. to give a test time to abort. */
	delayMs?: number;
}

export interface TextReply extends ReplyBase {
	kind: "text";
	text: string;
	/** Streamed as `reasoning_content` before the text (only meaningful for reasoning models). */
	reasoning?: string;
}

export interface ToolCallsReply extends ReplyBase {
	kind: "toolCalls";
	calls: ToolCallSpec[];
	/** Optional text streamed before the tool calls. */
	text?: string;
	/** Streamed as `reasoning_content` first (only meaningful for reasoning models). */
	reasoning?: string;
}

export interface ErrorReply extends ReplyBase {
	kind: "error";
	status: number;
	message: string;
}

export type Reply = TextReply | ToolCallsReply | ErrorReply;

/** What a script needs to know of a request, whichever provider's fake received it. */
export interface ScriptRequest {
	isSummaryRequest: boolean;
}

/** Decides the answer to each chat request; `index` counts every request the fake received, from 0. */
export type Script<R extends ScriptRequest = RecordedRequest> = (req: R, index: number) => Reply | Promise<Reply>;

let nextCallId = 0;
/** Ids look like OpenAI's so nothing in Pi special-cases them. */
function freshCallId(): string {
	nextCallId += 1;
	return `call_fake_${nextCallId.toString().padStart(4, "0")}`;
}

export function text(s: string, extra: Omit<TextReply, "kind" | "text"> = {}): TextReply {
	return { kind: "text", text: s, ...extra };
}

export function call(name: string, args: unknown, id?: string): ToolCallSpec {
	return { id: id ?? freshCallId(), name, args };
}

export function toolCall(name: string, args: unknown, id?: string): ToolCallsReply {
	return { kind: "toolCalls", calls: [call(name, args, id)] };
}

export function toolCalls(calls: ToolCallSpec[], extra: Omit<ToolCallsReply, "kind" | "calls"> = {}): ToolCallsReply {
	return { kind: "toolCalls", calls, ...extra };
}

/** Shorthand for the most common tool call in tests. */
export function bash(command: string, id?: string): ToolCallsReply {
	return toolCall("bash", { command }, id);
}

export function httpError(status: number, message = `fake error ${status}`): ErrorReply {
	return { kind: "error", status, message };
}

export const DEFAULT_SUMMARY = "## Goal\nFake summary produced by the e2e fake model.";

export interface SequenceOptions<R extends ScriptRequest = RecordedRequest> {
	/** Answer to compaction / branch summary requests (they never consume the sequence). */
	summary?: Reply | ((req: R) => Reply);
	/** Answer once the sequence is used up; by default the fake fails loudly with HTTP 500. */
	after?: Reply;
}

/**
 * A script that answers the non-summary requests with `replies` in order and summary requests
 * with a fixed summary, so tests don't have to count Pi's compaction calls.
 */
export function replySequence<R extends ScriptRequest = RecordedRequest>(
	replies: Reply[],
	options: SequenceOptions<R> = {},
): Script<R> {
	let next = 0;
	return (req) => {
		if (req.isSummaryRequest) {
			const summary = options.summary ?? text(DEFAULT_SUMMARY);
			return typeof summary === "function" ? summary(req) : summary;
		}
		const reply = replies[next];
		next += 1;
		if (reply) return reply;
		return options.after ?? httpError(500, `fake model script exhausted after ${replies.length} replies`);
	};
}
