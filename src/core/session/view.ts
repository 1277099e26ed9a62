/**
 * Pi messages -> the core's ViewMessage, and each outgoing message -> the session entry it came from.
 * Shared by the extension (src/adapters/pi) and the CLI's replay, so both see a session the same way;
 * the Pi shapes below are structural plain data, never Pi's own types.
 * The outgoing list is a deep copy Pi makes per request, so identity is by content keys, not object:
 * role, message timestamp and tool call id (see BranchState). Ambiguous keys map to nothing, which
 * means "never mask".
 */
import { keyOfBlock, type ViewBlock, type ViewMessage } from "../blocks.ts";
import { type DigestFacts, digestFacts } from "../digest.ts";
import { findLongValues, INPUT_MIN_CHARS, pathKey } from "../inputs.ts";
import { MIN_FOLD_TOKENS } from "../policy/select.ts";
import { CHARS_PER_TOKEN } from "../tokens.ts";
import { finiteOr0 } from "../values.ts";
import type { ViewCache } from "./view-cache.ts";

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
			case "toolCall": {
				const name = typeof part.name === "string" ? part.name : "";
				const text = safeJson(part.arguments) + name;
				// Only a call this long can hold a value of INPUT_MIN_CHARS: most calls skip the walk.
				const long =
					text.length < INPUT_MIN_CHARS
						? []
						: findLongValues(part.arguments).map((v) => ({ ...v, key: pathKey(v.path) }));
				blocks.push({
					kind: "toolCall",
					text,
					call: { id: typeof part.id === "string" ? part.id : undefined, name, args: part.arguments, long },
				});
				break;
			}
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

/** Whether the message has any of the fields extraText reads (most have none: no string is built). */
export function hasExtraText(m: PiMessage): boolean {
	return typeof m.command === "string" || typeof m.output === "string" || typeof m.summary === "string";
}

/** Text Pi sends for roles it converts to user text (bash executions, summaries). */
export function extraText(m: PiMessage): string {
	const parts: string[] = [];
	for (const field of ["command", "output", "summary"] as const) {
		const v = m[field];
		if (typeof v === "string") parts.push(v);
	}
	return parts.join("\n");
}

/**
 * What buildView checks each message's blocks against (the session entry, and what was verified
 * before) and the digest facts it fills in.
 */
export interface ForeignCheck {
	raw(entryId: string): PiMessage | undefined;
	/** Length of a block's text last verified equal to the session's, by block key. */
	verified: Map<string, number>;
	/** Digest facts by block key (see BranchState.facts). */
	facts?: Map<string, DigestFacts>;
	/** Keys already masked: no facts needed. */
	masked?: ReadonlyMap<string, unknown>;
}

/** Build the core view of an outgoing message list. */
export function buildView(
	messages: readonly PiMessage[],
	lookup: (m: PiMessage) => string | null,
	foreign?: ForeignCheck,
	cache?: ViewCache,
): ViewMessage[] {
	const view: ViewMessage[] = new Array(messages.length);
	for (let i = 0; i < messages.length; i++) {
		const m = messages[i] as PiMessage;
		const entryId = lookup(m);
		if (cache !== undefined && entryId !== null) {
			const hit = cache.take(entryId, m);
			if (hit !== undefined) {
				view[i] = hit;
				continue;
			}
		}
		const v = toView(m, entryId, messages, i);
		if (foreign && entryId !== null && (m.role === "toolResult" || m.role === "assistant")) {
			markForeign(v.blocks, entryId, foreign);
		}
		view[i] = v;
		if (cache !== undefined && entryId !== null) cache.put(entryId, v);
	}
	cache?.prune();
	return view;
}

/** One message's view; a tool result is described by its call, the newest one before it with its id. */
function toView(m: PiMessage, entryId: string | null, messages: readonly PiMessage[], i: number): ViewMessage {
	const blocks = toBlocks(m.content);
	const extra = extraText(m);
	if (extra.length > 0) blocks.push({ kind: "other", text: extra });
	const v: ViewMessage = {
		role: typeof m.role === "string" ? m.role : "unknown",
		entryId,
		timestamp: typeof m.timestamp === "number" ? m.timestamp : 0,
		blocks,
	};
	if (m.role === "toolResult") {
		if (typeof m.toolName === "string") v.toolName = m.toolName;
		if (typeof m.toolCallId === "string") {
			v.toolCallId = m.toolCallId;
			const summary = callSummaryBefore(messages, i, m.toolCallId);
			if (summary !== undefined) v.callSummary = summary;
		}
		const details = m.details as { fullOutputPath?: unknown; truncation?: { truncated?: unknown } } | undefined;
		const full = details?.fullOutputPath;
		if (typeof full === "string") v.fullOutputPath = full;
		if (m.isError === true) v.isError = true;
		if (details?.truncation?.truncated === true) v.truncated = true;
	}
	if (m.role === "assistant") {
		if (m.usage !== undefined && m.usage !== null && typeof m.usage === "object") {
			v.usage = {
				input: finiteOr0(m.usage.input),
				output: finiteOr0(m.usage.output),
				cacheRead: finiteOr0(m.usage.cacheRead),
				cacheWrite: finiteOr0(m.usage.cacheWrite),
			};
		}
		if (typeof m.stopReason === "string") v.stopReason = m.stopReason;
	}
	return v;
}

/**
 * The summary of the newest tool call with this id in an assistant message before `i` (usually the
 * one just before it). Searched only for a tool result whose view is built, never on a cached one.
 */
function callSummaryBefore(messages: readonly PiMessage[], i: number, id: string): string | undefined {
	for (let k = i - 1; k >= 0; k--) {
		const m = messages[k] as PiMessage;
		if (m.role !== "assistant" || !Array.isArray(m.content)) continue;
		let found: PiContent | undefined;
		for (const part of m.content) if (part?.type === "toolCall" && part.id === id) found = part;
		if (found !== undefined) return summarizeCall(found.name, found.arguments);
	}
	return undefined;
}

/**
 * Flag maskable blocks whose text no longer equals the session entry's (rewritten upstream).
 * A block verified equal once is not compared again while its length is unchanged, so steady
 * requests do no string comparisons; the fold commit re-verifies every block it masks in full.
 */
function markForeign(blocks: ViewBlock[], entryId: string, check: ForeignCheck): void {
	let content: PiMessage["content"] | null = null;
	for (let j = 0; j < blocks.length; j++) {
		const b = blocks[j] as ViewBlock;
		if (b.kind !== "text" && b.kind !== "thinking") continue;
		const key = keyOfBlock(b, entryId, j);
		if (check.verified.get(key) === b.text.length) continue;
		content ??= check.raw(entryId)?.content;
		const part = Array.isArray(content) ? content[j] : undefined;
		const text = b.kind === "text" ? part?.text : part?.thinking;
		if (typeof text === "string" && text === b.text) check.verified.set(key, text.length);
		else b.foreign = true;
	}
	if (check.facts === undefined) return;
	for (let j = 0; j < blocks.length; j++) {
		const b = blocks[j] as ViewBlock;
		if ((b.kind !== "text" && b.kind !== "thinking") || b.foreign === true) continue;
		if (b.text.length < MIN_FOLD_TOKENS * CHARS_PER_TOKEN) continue;
		const key = keyOfBlock(b, entryId, j);
		if (check.masked?.has(key)) continue;
		let facts = check.facts.get(key);
		if (facts === undefined || facts.chars !== b.text.length) {
			facts = digestFacts(b.text);
			check.facts.set(key, facts);
		}
		b.facts = facts;
	}
}
