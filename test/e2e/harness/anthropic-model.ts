// A fake Anthropic Messages server on 127.0.0.1, so real Pi runs its real anthropic-messages provider
// offline. Register it in models.json with `"api": "anthropic-messages"` and the bare server URL as
// `baseUrl`: Pi 0.80.6 posts to /v1/messages, 1.6.0 to /v1/messages?beta=true (docs/pi-api-surface.md §13).
// It streams SSE like the real API (message_start with usage, content blocks for thinking with a
// signature, text and tool_use with input_json_delta, message_delta, message_stop) and, like the real
// API, rejects a request whose thinking block no longer matches its signature.
import { createHash } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { type CacheModel, stableStringify, type UsageHook } from "./cache-model.ts";
import { answerRequest, argsJson, splitText } from "./fake-model.ts";
import { listenLocal, readBody } from "./local-server.ts";
import { DEFAULT_SUMMARY, type Reply, type Script, text, type Usage } from "./replies.ts";
import { requestLog } from "./request-log.ts";
import { type ChatMessage, classifySummary, type RecordedRequest, type SummaryKind } from "./requests.ts";

/** A content block as Pi sends it to Anthropic; only the fields the fake reads are typed. */
export interface AnthropicBlock {
	type: string;
	text?: string;
	thinking?: string;
	signature?: string;
	id?: string;
	name?: string;
	input?: unknown;
	tool_use_id?: string;
	content?: string | AnthropicBlock[];
	is_error?: boolean;
	[key: string]: unknown;
}

export interface AnthropicMessage {
	role: "user" | "assistant";
	content: string | AnthropicBlock[];
}

export interface AnthropicRequestBody {
	model: string;
	system?: string | AnthropicBlock[];
	messages: AnthropicMessage[];
	tools?: Array<{ name: string; description?: string; input_schema?: unknown }>;
	stream?: boolean;
	max_tokens?: number;
	thinking?: unknown;
	[key: string]: unknown;
}

export type AnthropicRequest = RecordedRequest<AnthropicRequestBody> & {
	/** The query string Pi sent (`beta=true` on 1.6.0). */
	query: string;
};

export interface AnthropicModelOptions {
	script?: Script<AnthropicRequest>;
	/** Default `{ mode: "prefix", style: "anthropic" }`. */
	cache?: CacheModel;
	usage?: UsageHook<AnthropicRequest>;
	/** Characters per streamed delta. */
	chunkChars?: number;
}

export interface AnthropicModel {
	/** Base URL to put in models.json (no /v1: Pi's Anthropic SDK adds it). */
	readonly url: string;
	readonly port: number;
	readonly requests: AnthropicRequest[];
	/** Requests the fake refused (wrong path, bad JSON, a thinking signature that does not match) and script errors. */
	readonly problems: string[];
	request(index: number): AnthropicRequest;
	turnRequests(): AnthropicRequest[];
	setScript(script: Script<AnthropicRequest>): void;
	waitForRequests(count: number, timeoutMs?: number): Promise<AnthropicRequest[]>;
	close(): Promise<void>;
}

/** The signature the fake gives a thinking text: base64 of its sha256, so any change to the text shows. */
export function signThinking(thinking: string): string {
	return createHash("sha256").update(thinking, "utf8").digest("base64");
}

/** Text of a block list or string content (text blocks only, tool results included). */
export function anthropicText(content: AnthropicMessage["content"] | AnthropicBlock["content"] | undefined): string {
	if (typeof content === "string") return content;
	if (!Array.isArray(content)) return "";
	return content.map((b) => (b.type === "text" ? (b.text ?? "") : "")).join("");
}

/** Every tool_result block of a request, in order. */
export function toolResultBlocks(req: AnthropicRequest): AnthropicBlock[] {
	return req.body.messages.flatMap((m) =>
		m.role === "user" && Array.isArray(m.content) ? m.content.filter((b) => b.type === "tool_result") : [],
	);
}

/** Summary requests are told apart by their prompts, as for the OpenAI fake (requests.ts). */
function summaryKindOf(body: AnthropicRequestBody, systemPrompt: string | undefined): SummaryKind | undefined {
	const messages: ChatMessage[] = body.messages.map((m) => ({ role: m.role, content: anthropicText(m.content) }));
	return classifySummary({ model: body.model, messages, tools: (body.tools ?? []) as never }, systemPrompt);
}

/** Thinking blocks sent back whose signature is not the one the fake gave their text. */
function badSignatures(body: AnthropicRequestBody): number {
	let bad = 0;
	for (const m of body.messages) {
		if (m.role !== "assistant" || !Array.isArray(m.content)) continue;
		for (const b of m.content) {
			if (b.type === "thinking" && b.signature !== signThinking(b.thinking ?? "")) bad++;
		}
	}
	return bad;
}

function wireUsage(u: Usage, output: number) {
	return {
		input_tokens: u.input,
		output_tokens: output,
		cache_read_input_tokens: u.cacheRead,
		cache_creation_input_tokens: u.cacheWrite,
	};
}

function writeError(res: ServerResponse, status: number, type: string, message: string): void {
	res.writeHead(status, { "content-type": "application/json" });
	res.end(JSON.stringify({ type: "error", error: { type, message } }));
}

function writeStream(
	res: ServerResponse,
	model: string,
	reply: Reply & { kind: "text" | "toolCalls" },
	usage: Usage | null,
	chunkChars: number,
): void {
	const send = (type: string, data: Record<string, unknown>) =>
		res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
	const zero: Usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 };
	res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
	send("message_start", {
		message: {
			id: `msg_fake_${Date.now().toString(36)}`,
			type: "message",
			role: "assistant",
			model,
			content: [],
			stop_reason: null,
			stop_sequence: null,
			usage: wireUsage(usage ?? zero, 1),
		},
	});
	let index = 0;
	const block = (start: Record<string, unknown>, deltas: Array<Record<string, unknown>>) => {
		send("content_block_start", { index, content_block: start });
		for (const delta of deltas) send("content_block_delta", { index, delta });
		send("content_block_stop", { index });
		index += 1;
	};
	if (reply.reasoning) {
		block({ type: "thinking", thinking: "", signature: "" }, [
			...splitText(reply.reasoning, chunkChars).map((t) => ({ type: "thinking_delta", thinking: t })),
			{ type: "signature_delta", signature: signThinking(reply.reasoning) },
		]);
	}
	if (reply.text) {
		block(
			{ type: "text", text: "" },
			splitText(reply.text, chunkChars).map((t) => ({ type: "text_delta", text: t })),
		);
	}
	if (reply.kind === "toolCalls") {
		for (const c of reply.calls) {
			block(
				{ type: "tool_use", id: c.id, name: c.name, input: {} },
				splitText(argsJson(c.args), chunkChars).map((p) => ({ type: "input_json_delta", partial_json: p })),
			);
		}
	}
	send("message_delta", {
		delta: { stop_reason: reply.kind === "toolCalls" ? "tool_use" : "end_turn", stop_sequence: null },
		usage: wireUsage(usage ?? zero, (usage ?? zero).output),
	});
	send("message_stop", {});
	res.end();
}

const defaultScript: Script<AnthropicRequest> = (req) => (req.isSummaryRequest ? text(DEFAULT_SUMMARY) : text("ok"));

export async function startAnthropicModel(options: AnthropicModelOptions = {}): Promise<AnthropicModel> {
	let script = options.script ?? defaultScript;
	const cache: CacheModel = options.cache ?? { mode: "prefix", style: "anthropic" };
	const chunkChars = options.chunkChars ?? 16;
	const log = requestLog<AnthropicRequest>("anthropic fake");
	const serialized: string[] = [];
	const problems: string[] = [];

	const handle = async (req: IncomingMessage, res: ServerResponse) => {
		const [path = "", query = ""] = (req.url ?? "").split("?");
		if (req.method !== "POST" || path !== "/v1/messages") {
			problems.push(`unexpected ${req.method} ${req.url}`);
			writeError(res, 404, "not_found_error", "not found");
			return;
		}
		let body: AnthropicRequestBody;
		try {
			body = JSON.parse(await readBody(req)) as AnthropicRequestBody;
		} catch (error) {
			problems.push(`bad JSON body: ${String(error)}`);
			writeError(res, 400, "invalid_request_error", "bad JSON");
			return;
		}
		const systemPrompt = body.system === undefined ? undefined : anthropicText(body.system);
		const summaryKind = summaryKindOf(body, systemPrompt);
		const recorded: AnthropicRequest = {
			index: log.requests.length,
			path,
			query,
			headers: req.headers,
			body,
			stream: body.stream === true,
			systemPrompt,
			isSummaryRequest: summaryKind !== undefined,
			summaryKind,
		};
		// The cacheable prompt in the order Anthropic caches it: tools, system, messages.
		const prompt = `${stableStringify(body.tools ?? [])}${stableStringify(body.system ?? "")}${stableStringify(body.messages)}`;
		const previous = serialized.slice();
		serialized.push(prompt);
		log.add(recorded);
		const bad = badSignatures(body);
		if (bad > 0) {
			problems.push(`request ${recorded.index}: ${bad} thinking block(s) whose signature does not match the text`);
			writeError(res, 400, "invalid_request_error", "messages: Invalid `signature` in `thinking` block");
			return;
		}
		if (!recorded.stream) {
			problems.push(`request ${recorded.index} was not streamed; the fake only streams`);
			writeError(res, 400, "invalid_request_error", "the fake only streams");
			return;
		}
		const answer = await answerRequest({
			req: recorded,
			script,
			problems,
			cache,
			usageHook: options.usage,
			prompt,
			previous,
			res,
			writeError: (status, message) => writeError(res, status, "api_error", message),
		});
		if (answer === null) return;
		writeStream(res, body.model, answer.reply, answer.usage, chunkChars);
	};

	const server = await listenLocal(handle, problems);
	return {
		url: `http://127.0.0.1:${server.port}`,
		port: server.port,
		requests: log.requests,
		problems,
		request: log.request,
		turnRequests: () => log.requests.filter((r) => !r.isSummaryRequest),
		setScript(next) {
			script = next;
		},
		waitForRequests: log.waitForRequests,
		close: server.close,
	};
}
