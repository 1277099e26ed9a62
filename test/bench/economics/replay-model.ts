/**
 * The replay model: an OpenAI chat-completions server on 127.0.0.1 (like the e2e harness's fake
 * model, whose request classification and serialization it reuses) that answers turn request k with
 * the k-th recorded assistant message, gives Pi's summary requests a fixed-size summary, and reports
 * usage from the billing simulator. It keeps no request bodies: only a small record per request and
 * the previous prompt, so a 500-request replay of 180k-token prompts stays light.
 *
 * Recorded aborts are replayed as real aborts: the request is held open and the driver is asked to
 * send RPC `abort`, so Pi records an aborted message exactly as it did in the original run.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { commonPrefixLength } from "../../../src/core/values.ts";
import { stableStringify } from "../../e2e/harness/cache-model.ts";
import { listenLocal, readBody, wireUsage } from "../../e2e/harness/local-server.ts";
import {
	type ChatMessage,
	type ChatRequestBody,
	classifySummary,
	messageText,
	systemPromptOf,
} from "../../e2e/harness/requests.ts";
import { type BillingModel, bill, type RequestShape, tokensOf } from "./billing.ts";
import type { Expect, ReplayPlan, ReplyPlan } from "./plan.ts";

export interface RequestRecord extends RequestShape {
	/** Arrival order among all requests. */
	index: number;
	/** Turn request ordinal (plan reply index), or -1 for a summary request. */
	k: number;
	reply: ReplyPlan["kind"] | "summary";
	/** Characters of the tools array alone, and of the system prompt text. */
	toolsChars: number;
	systemChars: number;
	/**
	 * Characters of everything before the conversation's first message: the tools array, the
	 * messages array's bracket and the system message as serialized, separators included. The rest of
	 * `chars` is the conversation, each message and one separator.
	 */
	fixedChars: number;
	toolNames: string[];
	messages: number;
	/** Fold codes present anywhere in the outgoing messages. */
	codes: string[];
	/** Previous turn request's characters (0 for the first). */
	previousChars: number;
	/** Usage reported to Pi (the headline billing). */
	reported: { input: number; output: number; cacheRead: number; cacheWrite: number };
	/** Empty when the request's last message is the one the trace says it must be. */
	misaligned: string;
}

export interface ReplayModelOptions {
	plan: ReplayPlan;
	/** The billing reported to Pi; any other model re-bills the records afterwards. */
	billing: BillingModel;
	/** Asked to abort the request in flight (the driver sends RPC `abort`). */
	onAbort: () => Promise<unknown>;
	/** Sees every turn request's messages before they are dropped (the floor's computation). */
	observe?: (messages: ChatMessage[], record: RequestRecord) => void;
}

export interface ReplayModel {
	readonly url: string;
	readonly records: RequestRecord[];
	readonly problems: string[];
	/** Turn requests served so far. */
	served(): number;
	close(): Promise<void>;
}

const FOLD_CODE = /\{#([0-9a-f]{6,64}) FOLDED\}/g;

export function summaryText(tokens: number, charsPerToken: number): string {
	const target = Math.round(tokens * charsPerToken);
	const lines = ["## Goal", "Replay of a recorded session (fixed-size summary from the economics benchmark).", ""];
	let n = lines.join("\n").length;
	for (let i = 1; n < target; i++) {
		const line = `- progress item ${String(i).padStart(4, "0")}: files touched, commands run, decisions kept.`;
		lines.push(line);
		n += line.length + 1;
	}
	return lines.join("\n").slice(0, target);
}

export async function startReplayModel(options: ReplayModelOptions): Promise<ReplayModel> {
	const { plan, billing } = options;
	const records: RequestRecord[] = [];
	const problems: string[] = [];
	const summary = summaryText(billing.summaryOutputTokens, billing.charsPerToken);
	let next = 0;
	let previousPrompt = "";
	let previousTurnAt: number | undefined;
	let lastTurnT = plan.replies[0]?.t ?? 0;

	const handle = async (req: IncomingMessage, res: ServerResponse) => {
		const path = (req.url ?? "").split("?")[0] ?? "";
		if (req.method === "GET" && path.endsWith("/models")) {
			res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ object: "list", data: [] }));
			return;
		}
		if (req.method !== "POST" || !path.endsWith("/chat/completions")) {
			problems.push(`unexpected ${req.method} ${req.url}`);
			res.writeHead(404).end();
			return;
		}
		const body = JSON.parse(await readBody(req)) as ChatRequestBody;
		const system = systemPromptOf(body);
		const isSummary = classifySummary(body, system) !== undefined;
		const toolsText = stableStringify(body.tools ?? []);
		const messagesText = stableStringify(body.messages);
		const prompt = `${toolsText}${messagesText}`;
		const reply = isSummary ? undefined : plan.replies[next];
		const k = isSummary ? -1 : next;
		if (!isSummary) next++;
		const shape: RequestShape = {
			kind: isSummary ? "summary" : "turn",
			t: reply?.t ?? lastTurnT,
			chars: prompt.length,
			prefixChars: isSummary ? 0 : commonPrefixLength(prompt, previousPrompt),
			outputTokens: isSummary ? billing.summaryOutputTokens : (reply?.outputTokens ?? 0),
		};
		const billed = bill(shape, previousTurnAt, billing);
		const record: RequestRecord = {
			...shape,
			index: records.length,
			k,
			reply: isSummary ? "summary" : (reply?.kind ?? "reply"),
			toolsChars: toolsText.length,
			systemChars: system?.length ?? 0,
			fixedChars: fixedCharsOf(toolsText, body.messages),
			toolNames: (body.tools ?? []).map((t) => t.function.name),
			messages: body.messages.length,
			codes: [...new Set(Array.from(messagesText.matchAll(FOLD_CODE), (m) => m[1] as string))],
			previousChars: isSummary ? 0 : previousPrompt.length,
			reported: billed.usage,
			misaligned: isSummary ? "" : checkExpect(body.messages, reply?.expect),
		};
		records.push(record);
		if (!isSummary) {
			previousPrompt = prompt;
			previousTurnAt = shape.t;
			lastTurnT = shape.t;
			options.observe?.(body.messages, record);
		}
		if (isSummary) return writeStream(res, body.model, { text: summary, thinking: "", calls: [] }, billed.usage);
		if (reply === undefined) {
			problems.push(`turn request ${k}: the trace has only ${plan.replies.length} replies`);
			res.writeHead(500, { "content-type": "application/json" });
			res.end(JSON.stringify({ error: { message: "replay exhausted", type: "replay_error" } }));
			return;
		}
		if (reply.kind === "abort") {
			const closed = new Promise<void>((resolve) => res.once("close", () => resolve()));
			await options.onAbort();
			const timeout = new Promise<"timeout">((resolve) => setTimeout(() => resolve("timeout"), 30_000).unref());
			if ((await Promise.race([closed, timeout])) === "timeout") {
				problems.push(`turn request ${k}: Pi did not abort within 30 s`);
				res.writeHead(500).end();
			}
			return;
		}
		if (reply.kind === "error") {
			res.writeHead(500, { "content-type": "application/json" });
			res.end(JSON.stringify({ error: { message: "replayed provider error", type: "replay_error" } }));
			return;
		}
		writeStream(res, body.model, reply, billed.usage);
	};

	const server = await listenLocal(handle, problems);
	const port = server.port;
	return {
		url: `http://127.0.0.1:${port}/v1`,
		records,
		problems,
		served: () => next,
		close: server.close,
	};
}

function fixedCharsOf(toolsText: string, messages: readonly ChatMessage[]): number {
	let chars = toolsText.length + 1;
	for (const m of messages) {
		if (m.role !== "system" && m.role !== "developer") break;
		chars += stableStringify(m).length + 1;
	}
	return chars;
}

function checkExpect(messages: ChatMessage[], expect: Expect | undefined): string {
	if (expect === undefined) return "";
	let last: ChatMessage | undefined;
	for (let i = messages.length - 1; i >= 0 && last === undefined; i--) {
		const m = messages[i] as ChatMessage;
		if (m.role !== "system" && m.role !== "developer") last = m;
	}
	if (last === undefined) return "no message";
	if (expect.role === "tool") {
		if (last.role === "tool" && expect.ids.includes(last.tool_call_id ?? "")) return "";
		return `expected a result of ${expect.ids.join(",")}, got ${last.role} ${last.tool_call_id ?? messageText(last).slice(0, 60)}`;
	}
	const text = messageText(last).trim();
	if (last.role === "user" && (text === expect.text.trim() || text.includes(expect.text.trim()))) return "";
	return `expected user "${expect.text.slice(0, 60)}", got ${last.role} "${text.slice(0, 60)}"`;
}

/** One delta per part: Pi relays every delta over RPC with the whole partial message, so fewer is faster. */
function writeStream(
	res: ServerResponse,
	model: string,
	reply: Pick<ReplyPlan, "text" | "thinking" | "calls">,
	usage: { input: number; output: number; cacheRead: number; cacheWrite: number },
): void {
	const id = "chatcmpl-replay";
	const send = (choices: unknown[], extra: Record<string, unknown> = {}) =>
		res.write(
			`data: ${JSON.stringify({ id, object: "chat.completion.chunk", created: 0, model, choices, ...extra })}\n\n`,
		);
	const delta = (d: Record<string, unknown>) => send([{ index: 0, delta: d, finish_reason: null }]);
	res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
	delta({ role: "assistant", content: "" });
	if (reply.thinking.length > 0) delta({ reasoning_content: reply.thinking });
	if (reply.text.length > 0) delta({ content: reply.text });
	reply.calls.forEach((c, index) => {
		const args = JSON.stringify(c.args ?? {});
		delta({ tool_calls: [{ index, id: c.id, type: "function", function: { name: c.name, arguments: args } }] });
	});
	send([{ index: 0, delta: {}, finish_reason: reply.calls.length > 0 ? "tool_calls" : "stop" }]);
	send([], { usage: wireUsage(usage) });
	res.end("data: [DONE]\n\n");
}

/** Tokens of a request as billed: re-exported for callers that only hold a record. */
export function promptTokens(record: RequestShape, charsPerToken: number): number {
	return tokensOf(record.chars, charsPerToken);
}
