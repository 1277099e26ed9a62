/**
 * Find a folded block's original bytes and prove they are the ones that were folded.
 * Sources: the session ledger (normal sessions), or an in-memory map (ephemeral sessions only).
 * Nothing is served unless its sha256 matches the one recorded at fold time.
 */
import { renderPath, valueAt } from "../core/inputs.ts";
import type { MaskedBlock } from "../core/layers.ts";
import { sha256 } from "./hash.ts";
import { type Ledger, LedgerError } from "./ledger.ts";

export type Original =
	| { ok: true; text: string; fullOutputPath?: string; source: "ledger" | "memory" }
	| {
			ok: false;
			reason: "no-ledger" | "missing-file" | "unreadable" | "missing-entry" | "sha-mismatch" | "shape";
			message: string;
	  };

/** In-memory originals for sessions without a file, bounded by total characters (oldest evicted). */
export class MemoryOriginals {
	private readonly texts = new Map<string, string>();
	private chars = 0;
	evicted = 0;

	constructor(readonly maxChars: number = DEFAULT_MEMORY_CHARS) {}

	put(code: string, text: string): void {
		if (this.texts.has(code)) return;
		this.texts.set(code, text);
		this.chars += text.length;
		while (this.chars > this.maxChars && this.texts.size > 1) {
			const [oldest, t] = this.texts.entries().next().value as [string, string];
			this.texts.delete(oldest);
			this.chars -= t.length;
			this.evicted++;
		}
	}

	get(code: string): string | undefined {
		return this.texts.get(code);
	}

	get heldChars(): number {
		return this.chars;
	}
}

/** 32 Mi characters (~64 MB of UTF-16) of originals kept for an ephemeral session. */
export const DEFAULT_MEMORY_CHARS = 32 * 1024 * 1024;

export function findOriginal(block: MaskedBlock, ledger: Ledger | null, memory?: MemoryOriginals): Original {
	if (ledger === null) {
		const text = memory?.get(block.code);
		if (text === undefined) {
			return {
				ok: false,
				reason: "no-ledger",
				message: `{#${block.code}} was folded in a session without a session file, and its original is no longer held in memory (the in-memory store keeps the newest ${Math.round((memory?.maxChars ?? DEFAULT_MEMORY_CHARS) / 1024 / 1024)} Mi characters).`,
			};
		}
		return verify(block, text, undefined, "memory");
	}
	try {
		ledger.refresh();
	} catch (error) {
		if (error instanceof LedgerError) {
			return { ok: false, reason: error.code === "missing" ? "missing-file" : "unreadable", message: error.message };
		}
		throw error;
	}
	const entry = ledger.read(block.entryId);
	if (entry === undefined) {
		return {
			ok: false,
			reason: "missing-entry",
			message: `{#${block.code}}: entry ${block.entryId} is no longer in the session file ${ledger.path}; the original cannot be served.`,
		};
	}
	const message = entry.message as { role?: unknown; content?: unknown; details?: unknown } | undefined;
	const part = Array.isArray(message?.content)
		? (message.content[block.blockIndex] as Record<string, unknown> | undefined)
		: undefined;
	if (block.kind === "input") return inputOriginal(block, part);
	const text =
		block.kind === "toolResult"
			? part?.type === "text"
				? part.text
				: undefined
			: part?.type === "thinking"
				? part.thinking
				: undefined;
	if (typeof text !== "string") {
		return {
			ok: false,
			reason: "shape",
			message: `{#${block.code}}: entry ${block.entryId} no longer has a ${block.kind === "toolResult" ? "text" : "thinking"} block at index ${block.blockIndex}; the session file was changed.`,
		};
	}
	const full = (message?.details as { fullOutputPath?: unknown } | undefined)?.fullOutputPath;
	return verify(block, text, typeof full === "string" ? full : undefined, "ledger");
}

/**
 * A folded tool-call input: the value at its path in the tool call the session file holds. The file
 * keeps the arguments as the model sent them (a JSON-string `edits` stays a string there, while Pi
 * parses it in place on the live message); the path reaches the same value in either form.
 */
function inputOriginal(block: MaskedBlock, part: Record<string, unknown> | undefined): Original {
	const text = part?.type === "toolCall" && block.path !== undefined ? valueAt(part.arguments, block.path) : undefined;
	if (text === undefined) {
		return {
			ok: false,
			reason: "shape",
			message: `{#${block.code}}: entry ${block.entryId} no longer has a tool call at index ${block.blockIndex} with a string at ${renderPath(block.path ?? [])}; the session file was changed.`,
		};
	}
	return verify(block, text, undefined, "ledger");
}

function verify(
	block: MaskedBlock,
	text: string,
	fullOutputPath: string | undefined,
	source: "ledger" | "memory",
): Original {
	const actual = sha256(text);
	if (actual !== block.sha256) {
		return {
			ok: false,
			reason: "sha-mismatch",
			message: `{#${block.code}}: refused. The bytes now at entry ${block.entryId} block ${block.blockIndex} do not match what was folded (sha256 recorded ${block.sha256.slice(0, 12)}…, now ${actual.slice(0, 12)}…; ${block.chars} chars then, ${text.length} now). The session file was edited after the fold.`,
		};
	}
	return { ok: true, text, source, ...(fullOutputPath !== undefined && { fullOutputPath }) };
}
