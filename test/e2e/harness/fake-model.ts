// A fake OpenAI chat-completions server on 127.0.0.1, so real Pi runs its real provider code offline.
import type { IncomingMessage, ServerResponse } from "node:http";
import { type CacheModel, computeUsage, serializePrompt, type UsageHook } from "./cache-model.ts";
import { listenLocal, readBody, wireUsage } from "./local-server.ts";
import { DEFAULT_SUMMARY, type Reply, type Script, text, type Usage } from "./replies.ts";
import { requestLog } from "./request-log.ts";
import { type ChatRequestBody, classifySummary, type RecordedRequest, systemPromptOf } from "./requests.ts";

export interface FakeModelOptions {
	/** Answers each request; the default says "ok" to turns and gives a canned summary to summary requests. */
	script?: Script;
	/** Default `{ mode: "prefix", style: "anthropic" }`. */
	cache?: CacheModel;
	/** Per-request usage override, applied after the cache model and before a reply's own `usage`. */
	usage?: UsageHook;
	/** Characters per streamed text delta; small values exercise Pi's delta assembly. */
	chunkChars?: number;
}

export interface FakeModel {
	/** Base URL to put in models.json, ending in /v1. */
	readonly url: string;
	readonly port: number;
	/** Every chat request, in arrival order. */
	readonly requests: RecordedRequest[];
	/** Requests the fake could not serve (wrong path, bad JSON) and errors thrown by the script. */
	readonly problems: string[];
	/** The request at `index` (negative counts from the end); throws if there is none, naming how many came. */
	request(index: number): RecordedRequest;
	turnRequests(): RecordedRequest[];
	summaryRequests(): RecordedRequest[];
	setScript(script: Script): void;
	/** Resolves once at least `count` chat requests have arrived. */
	waitForRequests(count: number, timeoutMs?: number): Promise<RecordedRequest[]>;
	close(): Promise<void>;
}

const defaultScript: Script = (req) => (req.isSummaryRequest ? text(DEFAULT_SUMMARY) : text("ok"));

export function outputChars(reply: Reply): number {
	if (reply.kind === "text") return reply.text.length + (reply.reasoning?.length ?? 0);
	if (reply.kind === "toolCalls")
		return (
			(reply.text?.length ?? 0) +
			(reply.reasoning?.length ?? 0) +
			reply.calls.reduce((n, c) => n + c.name.length + argsJson(c.args).length, 0)
		);
	return 0;
}

export function argsJson(args: unknown): string {
	return typeof args === "string" ? args : JSON.stringify(args ?? {});
}

export function splitText(s: string, size: number): string[] {
	if (s.length === 0) return [];
	const parts: string[] = [];
	for (let i = 0; i < s.length; i += size) parts.push(s.slice(i, i + size));
	return parts;
}

export function sleep(ms: number): Promise<void> {
	return new Promise((resolve) => setTimeout(resolve, ms));
}

function writeStream(
	res: ServerResponse,
	model: string,
	reply: Reply & { kind: "text" | "toolCalls" },
	usage: Usage | null,
	chunkChars: number,
) {
	const id = `chatcmpl-fake-${Date.now().toString(36)}`;
	const created = Math.floor(Date.now() / 1000);
	const send = (choices: unknown[], extra: Record<string, unknown> = {}) =>
		res.write(
			`data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model, choices, ...extra })}\n\n`,
		);
	const delta = (d: Record<string, unknown>) => send([{ index: 0, delta: d, finish_reason: null }]);
	res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
	delta({ role: "assistant", content: "" });
	if ((reply.kind === "text" || reply.kind === "toolCalls") && reply.reasoning) {
		for (const part of splitText(reply.reasoning, chunkChars)) delta({ reasoning_content: part });
	}
	for (const part of splitText(reply.text ?? "", chunkChars)) delta({ content: part });
	if (reply.kind === "toolCalls") {
		reply.calls.forEach((c, index) => {
			delta({ tool_calls: [{ index, id: c.id, type: "function", function: { name: c.name, arguments: "" } }] });
			for (const part of splitText(argsJson(c.args), chunkChars))
				delta({ tool_calls: [{ index, function: { arguments: part } }] });
		});
	}
	send([{ index: 0, delta: {}, finish_reason: reply.kind === "toolCalls" ? "tool_calls" : "stop" }]);
	// Final usage-only chunk, as OpenAI sends it with stream_options.include_usage (none when null).
	if (usage !== null) send([], { usage: wireUsage(usage) });
	res.end("data: [DONE]\n\n");
}

function writeJson(
	res: ServerResponse,
	model: string,
	reply: Reply & { kind: "text" | "toolCalls" },
	usage: Usage | null,
) {
	const message: Record<string, unknown> = { role: "assistant", content: reply.text ?? null };
	if (reply.kind === "toolCalls") {
		message.tool_calls = reply.calls.map((c) => ({
			id: c.id,
			type: "function",
			function: { name: c.name, arguments: argsJson(c.args) },
		}));
	}
	const body = {
		id: `chatcmpl-fake-${Date.now().toString(36)}`,
		object: "chat.completion",
		created: Math.floor(Date.now() / 1000),
		model,
		choices: [{ index: 0, message, finish_reason: reply.kind === "toolCalls" ? "tool_calls" : "stop" }],
		...(usage !== null && { usage: wireUsage(usage) }),
	};
	res.writeHead(200, { "content-type": "application/json" });
	res.end(JSON.stringify(body));
}

export interface AnswerInput<R extends RecordedRequest<unknown>> {
	req: R;
	script: Script<R>;
	problems: string[];
	cache: CacheModel;
	usageHook: UsageHook<R> | undefined;
	/** This request's serialized prompt, and the earlier ones (see cache-model.ts). */
	prompt: string;
	previous: readonly string[];
	res: ServerResponse;
	/** Sends an error reply in the provider's own shape. */
	writeError(status: number, message: string): void;
}

/**
 * Run the script for one request and work out the usage to report, as every fake provider does:
 * a throwing script becomes a 500, a reply's delay is waited out, an error reply is sent with
 * `writeError`. Null when the reply was an error (already sent) or Pi hung up meanwhile.
 */
export async function answerRequest<R extends RecordedRequest<unknown>>(
	input: AnswerInput<R>,
): Promise<{ reply: Reply & { kind: "text" | "toolCalls" }; usage: Usage | null } | null> {
	const { req } = input;
	let reply: Reply;
	try {
		reply = await input.script(req, req.index);
	} catch (error) {
		input.problems.push(`script threw on request ${req.index}: ${String(error)}`);
		reply = { kind: "error", status: 500, message: `fake script threw: ${String(error)}` };
	}
	if (reply.delayMs) await sleep(reply.delayMs);
	if (input.res.destroyed) return null; // Pi aborted the request while we waited.
	if (reply.kind === "error") {
		input.writeError(reply.status, reply.message);
		return null;
	}
	let usage = computeUsage(input.cache, input.prompt, input.previous, outputChars(reply));
	const hooked = input.usageHook?.({
		req,
		computed: usage,
		serialized: input.prompt,
		previousSerialized: input.previous,
	});
	usage = { ...usage, ...hooked, ...reply.usage };
	const sent = hooked === null ? null : usage;
	if (sent !== null) req.reportedUsage = usage;
	return { reply, usage: sent };
}

export async function startFakeModel(options: FakeModelOptions = {}): Promise<FakeModel> {
	let script = options.script ?? defaultScript;
	const cache: CacheModel = options.cache ?? { mode: "prefix", style: "anthropic" };
	const chunkChars = options.chunkChars ?? 16;
	const log = requestLog<RecordedRequest>("fake model");
	const requests = log.requests;
	const serialized: string[] = [];
	const problems: string[] = [];

	const handle = async (req: IncomingMessage, res: ServerResponse) => {
		const path = (req.url ?? "").split("?")[0] ?? "";
		if (req.method === "GET" && path.endsWith("/models")) {
			res.writeHead(200, { "content-type": "application/json" });
			res.end(JSON.stringify({ object: "list", data: [] }));
			return;
		}
		if (req.method !== "POST" || !path.endsWith("/chat/completions")) {
			problems.push(`unexpected ${req.method} ${req.url}`);
			res.writeHead(404, { "content-type": "application/json" });
			res.end(JSON.stringify({ error: { message: "not found", type: "invalid_request_error" } }));
			return;
		}
		let body: ChatRequestBody;
		try {
			body = JSON.parse(await readBody(req)) as ChatRequestBody;
		} catch (error) {
			problems.push(`bad JSON body: ${String(error)}`);
			res.writeHead(400).end();
			return;
		}
		const systemPrompt = systemPromptOf(body);
		const summaryKind = classifySummary(body, systemPrompt);
		const recorded: RecordedRequest = {
			index: requests.length,
			path,
			headers: req.headers,
			body,
			stream: body.stream === true,
			systemPrompt,
			isSummaryRequest: summaryKind !== undefined,
			summaryKind,
		};
		const prompt = serializePrompt(recorded);
		const previous = serialized.slice();
		serialized.push(prompt);
		log.add(recorded);

		const answer = await answerRequest({
			req: recorded,
			script,
			problems,
			cache,
			usageHook: options.usage,
			prompt,
			previous,
			res,
			writeError: (status, message) => {
				res.writeHead(status, { "content-type": "application/json" });
				res.end(JSON.stringify({ error: { message, type: "fake_error", code: status } }));
			},
		});
		if (answer === null) return;
		if (recorded.stream) writeStream(res, body.model, answer.reply, answer.usage, chunkChars);
		else writeJson(res, body.model, answer.reply, answer.usage);
	};

	const server = await listenLocal(handle, problems);
	const port = server.port;

	return {
		url: `http://127.0.0.1:${port}/v1`,
		port,
		requests,
		problems,
		request: log.request,
		turnRequests: () => requests.filter((r) => !r.isSummaryRequest),
		summaryRequests: () => requests.filter((r) => r.isSummaryRequest),
		setScript(next) {
			script = next;
		},
		waitForRequests: log.waitForRequests,
		close: server.close,
	};
}
