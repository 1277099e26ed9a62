/**
 * Pi messages -> the core's ViewMessage, and each outgoing message -> the session entry it came from.
 * The outgoing list is a deep copy Pi makes per request, so identity is by content keys, not object:
 * role, message timestamp and tool call id (see BranchState). Ambiguous keys map to nothing, which
 * means "never mask".
 */
import type { ViewBlock, ViewMessage } from "../../core/blocks.ts";

// Pi's message shapes, reduced to the fields we read. Kept structural so both Pi versions fit.
export interface PiContent {
	type: string;
	text?: string;
	thinking?: string;
	thinkingSignature?: string;
	redacted?: boolean;
	name?: string;
	id?: string;
	arguments?: unknown;
	data?: string;
}

export interface PiMessage {
	role: string;
	content?: string | PiContent[];
	timestamp?: number;
	toolCallId?: string;
	toolName?: string;
	details?: unknown;
	usage?: { input?: number; output?: number; cacheRead?: number; cacheWrite?: number };
	stopReason?: string;
	[key: string]: unknown;
}

export interface PiEntry {
	type: string;
	id: string;
	parentId?: string | null;
	timestamp?: string;
	message?: PiMessage;
	customType?: string;
	data?: unknown;
	[key: string]: unknown;
}

export function messageKey(m: PiMessage): string {
	return `${m.role}|${typeof m.timestamp === "number" ? m.timestamp : "?"}|${m.toolCallId ?? ""}`;
}

/** Short description of a tool call for digests: the command, the path, or compact arguments. */
export function summarizeCall(name: string | undefined, args: unknown): string | undefined {
	if (typeof args !== "object" || args === null) return undefined;
	const a = args as Record<string, unknown>;
	if (typeof a.command === "string") return a.command;
	if (typeof a.path === "string") return a.path;
	if (typeof a.file_path === "string") return a.file_path;
	if (typeof a.pattern === "string") return a.pattern;
	try {
		const json = JSON.stringify(args);
		return json === "{}" ? undefined : json;
	} catch {
		return name;
	}
}

function toBlocks(content: PiMessage["content"]): ViewBlock[] {
	if (typeof content === "string") return [{ kind: "text", text: content }];
	if (!Array.isArray(content)) return [];
	const blocks: ViewBlock[] = [];
	for (const part of content) {
		if (part === null || typeof part !== "object") {
			blocks.push({ kind: "other", text: "" });
			continue;
		}
		switch (part.type) {
			case "text":
				blocks.push({ kind: "text", text: typeof part.text === "string" ? part.text : "" });
				break;
			case "thinking":
				blocks.push({
					kind: "thinking",
					text: typeof part.thinking === "string" ? part.thinking : "",
					...(typeof part.thinkingSignature === "string" && part.thinkingSignature.length > 0 && { signed: true }),
					...(typeof part.thinkingSignature === "string" &&
						/^\s*[[{]/.test(part.thinkingSignature) && { opaqueSignature: true }),
					...(part.redacted === true && { redacted: true }),
				});
				break;
			case "image":
				blocks.push({ kind: "image", text: "" });
				break;
			case "toolCall":
				blocks.push({ kind: "toolCall", text: safeJson(part.arguments) + (part.name ?? "") });
				break;
			default:
				blocks.push({ kind: "other", text: safeJson(part) });
		}
	}
	return blocks;
}

function safeJson(v: unknown): string {
	try {
		return JSON.stringify(v) ?? "";
	} catch {
		return "";
	}
}

/** Text Pi sends for roles it converts to user text (bash executions, summaries). */
function extraText(m: PiMessage): string {
	let s = "";
	for (const field of ["command", "output", "summary"] as const) {
		const v = m[field];
		if (typeof v === "string") s += v;
	}
	return s;
}

/** Build the core view of an outgoing message list. */
export function buildView(
	messages: readonly PiMessage[],
	lookup: (m: PiMessage) => string | null,
	raw: (entryId: string) => PiMessage | undefined = () => undefined,
): ViewMessage[] {
	const calls = new Map<string, string | undefined>();
	const view: ViewMessage[] = new Array(messages.length);
	for (let i = 0; i < messages.length; i++) {
		const m = messages[i] as PiMessage;
		const blocks = toBlocks(m.content);
		const extra = extraText(m);
		if (extra.length > 0) blocks.push({ kind: "other", text: extra });
		if (m.role === "assistant" && Array.isArray(m.content)) {
			for (const part of m.content) {
				if (part?.type === "toolCall" && typeof part.id === "string")
					calls.set(part.id, summarizeCall(part.name, part.arguments));
			}
		}
		const v: ViewMessage = {
			role: typeof m.role === "string" ? m.role : "unknown",
			entryId: lookup(m),
			timestamp: typeof m.timestamp === "number" ? m.timestamp : 0,
			blocks,
		};
		if (m.role === "toolResult") {
			if (typeof m.toolName === "string") v.toolName = m.toolName;
			if (typeof m.toolCallId === "string") {
				v.toolCallId = m.toolCallId;
				const summary = calls.get(m.toolCallId);
				if (summary !== undefined) v.callSummary = summary;
			}
			const full = (m.details as { fullOutputPath?: unknown } | undefined)?.fullOutputPath;
			if (typeof full === "string") v.fullOutputPath = full;
		}
		if (m.role === "assistant") {
			if (m.usage !== undefined && m.usage !== null && typeof m.usage === "object") {
				v.usage = {
					input: num(m.usage.input),
					output: num(m.usage.output),
					cacheRead: num(m.usage.cacheRead),
					cacheWrite: num(m.usage.cacheWrite),
				};
			}
			if (typeof m.stopReason === "string") v.stopReason = m.stopReason;
		}
		if (v.entryId !== null && (m.role === "toolResult" || m.role === "assistant")) markForeign(blocks, raw(v.entryId));
		view[i] = v;
	}
	return view;
}

/** Flag maskable blocks whose text no longer equals the session entry's (rewritten upstream). */
function markForeign(blocks: ViewBlock[], original: PiMessage | undefined): void {
	const content = original?.content;
	for (let j = 0; j < blocks.length; j++) {
		const b = blocks[j] as ViewBlock;
		if (b.kind !== "text" && b.kind !== "thinking") continue;
		const part = Array.isArray(content) ? content[j] : undefined;
		const text = b.kind === "text" ? part?.text : part?.thinking;
		if (typeof text !== "string" || text !== b.text) b.foreign = true;
	}
}

function num(v: unknown): number {
	return typeof v === "number" && Number.isFinite(v) ? v : 0;
}
