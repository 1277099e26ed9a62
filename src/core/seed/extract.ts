export type { SeedToolCall } from "./calls.ts";

/**
 * extractSeedRecord: one fold event or one compaction in, one seed record out. Pure and
 * deterministic: the same input always gives a record that serializes to the same bytes. All text
 * is redacted before anything is harvested from it, so no secret reaches a field.
 */
import { blockKey, type ViewMessage } from "../blocks.ts";
import { countLines, type Hash, utf8Length } from "../digest.ts";
import type { MaskedBlock } from "../layers.ts";
import { findRiskLines } from "../lexicon.ts";
import { clipTo } from "../values.ts";
import { parseCallBlocks, readCall, type SeedToolCall } from "./calls.ts";
import { cleanPath, findPaths, harvestTokens, numberClass, Tally } from "./harvest.ts";
import { scanSecrets } from "./redact.ts";
import {
	emptyOmitted,
	FILE_OPS,
	type FileOp,
	SEED_ID_MAX_CHARS,
	SEED_INDEX_VERSION,
	SEED_LIMITS,
	SEED_RECORD_TYPE,
	type SeedFile,
	type SeedKind,
	type SeedRecord,
	type SeedSpan,
	type SpanKind,
	spanPath,
} from "./schema.ts";

export interface ExtractInput {
	kind: SeedKind;
	/** The record's sequence number: for a fold, the layer's seq; for a compaction, the adapter's count. */
	seq: number;
	/** When the fold or compaction happened, in ms. The core has no clock; the caller passes it. */
	at: number;
	/**
	 * Fold: the messages whose blocks were masked, the assistant messages whose tool calls produced
	 * them, and optionally the user messages since the previous fold. Compaction: every message the
	 * compaction removed that was never folded.
	 */
	messages: readonly ViewMessage[];
	/**
	 * Fold: the blocks the layer masked, its inputs included. Their text is what gets harvested; each
	 * becomes a span.
	 */
	masked?: readonly MaskedBlock[];
	/** Fold: the original value of each masked input, by code (a tool call's block text is not it). */
	inputTexts?: ReadonlyMap<string, string>;
	/**
	 * Structured tool calls for the messages above (bash commands, read/edit/write paths). A user's
	 * own shell command may be passed as a call named "bash". Without this list the extractor parses
	 * the assistant's toolCall blocks, whose text the adapter writes as JSON(arguments) + name.
	 */
	calls?: readonly SeedToolCall[];
	/** Lowercase hex sha256 of a string (compaction spans are hashed with it). */
	hash: Hash;
	/** Hash for secret markers; defaults to `hash`. Pass a keyed hash to stop guess-confirmation. */
	markerHash?: Hash;
}

const OP_TIER: Record<FileOp, number> = { write: 0, edit: 0, read: 1, command: 2, output: 3 };
/** Risk lines in a folded input (file content being written) rank with those of file contents. */
const INPUT_TIER = 1;
const SKIPPED_ROLES = new Set(["compactionSummary", "branchSummary"]);
const USER_LINES_PER_MESSAGE = 3;

interface Timed {
	text: string;
	at: number;
}

export function extractSeedRecord(input: ExtractInput): SeedRecord {
	const markerHash = input.markerHash ?? input.hash;
	let secrets = 0;
	const redact = (text: string): string => {
		const r = scanSecrets(text, markerHash);
		secrets += r.count;
		return r.text;
	};
	// Call summaries repeat a command or path already redacted and counted: redact without counting.
	const quiet = (text: string): string => scanSecrets(text, markerHash).text;
	const files = new FileTally();
	const commands = new Map<string, number>();
	const errors = new Map<string, { ref?: string; tier: number; at: number }>();
	const users = new Map<string, number>();
	const identifiers = new Tally();
	const numbers = new Tally();
	const spans: SeedSpan[] = [];
	let order = 0;
	let blocks = 0;
	let chars = 0;

	const calls = input.calls ?? parseCallBlocks(input.messages);
	const callText = new Map<string, string>();
	for (const call of calls) {
		const { path, command, op } = readCall(call);
		if (path !== undefined) {
			const clean = cleanPath(redact(path).trim());
			if (clean !== null) files.add(clean, op);
		}
		if (command !== undefined) {
			const text = redact(command).trimEnd();
			if (text.length > 0 && !commands.has(text)) commands.set(text, order++);
			for (const p of findPaths(text)) files.add(p, "command");
		}
		const summary = command ?? path;
		if (summary !== undefined) callText.set(call.toolCallId, summary);
	}

	const masked = new Map<string, MaskedBlock>();
	for (const m of input.masked ?? []) if (m.kind !== "input") masked.set(blockKey(m.entryId, m.blockIndex), m);
	const fold = input.kind === "fold";
	const harvest = (original: string, ref: string | undefined, tier: number): void => {
		blocks++;
		chars += original.length;
		const text = redact(original);
		for (const risk of findRiskLines(text)) {
			const line = clipTo(risk.text.trim(), SEED_LIMITS.errors.chars);
			if (line.length > 0 && !errors.has(line)) errors.set(line, { ...(ref && { ref }), tier, at: order++ });
		}
		for (const p of findPaths(text)) files.add(p, "output");
		harvestTokens(text, identifiers, numbers);
	};

	for (const message of input.messages) {
		if (SKIPPED_ROLES.has(message.role)) continue;
		if (message.role === "user") {
			const line = firstLines(redact(userText(message)));
			if (line.length > 0 && !users.has(line)) users.set(line, order++);
		}
		for (let j = 0; j < message.blocks.length; j++) {
			const block = message.blocks[j];
			if (block === undefined || block.kind === "toolCall" || block.kind === "image" || block.text.length === 0)
				continue;
			const key = message.entryId === null ? null : blockKey(message.entryId, j);
			const mask = key === null ? undefined : masked.get(key);
			if (fold && mask === undefined) continue;
			harvest(block.text, mask?.code ?? key ?? undefined, errorTier(message, block.kind));
			if (!fold && message.entryId !== null) {
				spans.push({
					entryId: message.entryId,
					blockIndex: j,
					kind: spanKind(message.role, block.kind),
					...(message.toolName !== undefined && { toolName: clipTo(message.toolName, SEED_ID_MAX_CHARS) }),
					...callOf(message, callText, quiet),
					sha256: input.hash(block.text),
					chars: block.text.length,
					bytes: utf8Length(block.text),
					lines: countLines(block.text),
				});
			}
		}
	}

	if (fold) {
		// A folded input is harvested like a result of the file it shows (it is read as such content).
		for (const b of input.masked ?? []) {
			const text = b.kind === "input" ? input.inputTexts?.get(b.code) : undefined;
			if (text !== undefined) harvest(text, b.code, INPUT_TIER);
		}
		const byEntry = new Map<string, ViewMessage>();
		for (const m of input.messages) if (m.entryId !== null) byEntry.set(m.entryId, m);
		for (const b of input.masked ?? []) {
			const message = byEntry.get(b.entryId);
			const isInput = b.kind === "input";
			spans.push({
				code: b.code,
				entryId: b.entryId,
				blockIndex: b.blockIndex,
				// An input lives in an assistant message (a kind every reader knows); its path says where.
				kind: b.kind === "input" ? "assistant" : b.kind,
				...(b.toolName !== undefined && { toolName: clipTo(b.toolName, SEED_ID_MAX_CHARS) }),
				...(isInput || message === undefined
					? callById(b.toolCallId, callText, quiet)
					: callOf(message, callText, quiet)),
				...(isInput && b.path !== undefined && spanPath(b.path) !== undefined && { path: spanPath(b.path) }),
				sha256: b.sha256,
				chars: b.chars,
				bytes: b.bytes,
				lines: b.lines,
			});
		}
	}

	const omitted = emptyOmitted();
	const bound = <T>(field: keyof typeof SEED_LIMITS, items: T[], prefer?: (a: T, b: T) => number): T[] => {
		const max = SEED_LIMITS[field].items;
		omitted[field] += Math.max(0, items.length - max);
		if (items.length <= max) return items;
		if (prefer === undefined) return items.slice(0, max);
		// Choose by preference, then list what was kept in its original order.
		const kept = new Set([...items].sort(prefer).slice(0, max));
		return items.filter((item) => kept.has(item));
	};
	const validSpans = spans.filter((s) => /^[0-9a-f]{64}$/.test(s.sha256) && s.entryId.length <= SEED_ID_MAX_CHARS);
	omitted.spans = spans.length - validSpans.length;
	const errorList = [...errors.entries()].map(([text, e]) => ({ text, ...e }));
	const userList = entriesOf(users);
	return {
		type: SEED_RECORD_TYPE,
		v: SEED_INDEX_VERSION,
		kind: input.kind,
		seq: wholeNumber(input.seq),
		at: wholeNumber(input.at),
		source: { messages: input.messages.length, blocks, chars },
		files: bound("files", files.ranked()),
		commands: bound("commands", entriesOf(commands), laterFirst).map((c) => clipTo(c.text, SEED_LIMITS.commands.chars)),
		// Execution output before file contents and thinking, later before earlier.
		errors: bound("errors", errorList, (a, b) => a.tier - b.tier || b.at - a.at).map((e) =>
			e.ref === undefined ? { text: e.text } : { text: e.text, ref: e.ref },
		),
		identifiers: bound("identifiers", identifiers.ranked()),
		numbers: bound("numbers", numbers.ranked(numberClass)),
		// The first message (usually the task), then the most recent ones.
		userLines: bound(
			"userLines",
			userList,
			(a, b) => Number(b === userList[0]) - Number(a === userList[0]) || b.at - a.at,
		).map((u) => u.text),
		spans: bound("spans", validSpans),
		secrets,
		omitted,
	};
}

/** Paths by strongest op (write/edit, read, command, output), then mentions, then first sighting. */
class FileTally {
	private readonly seen = new Map<string, { ops: Set<FileOp>; count: number; first: number }>();

	add(path: string, op: FileOp): void {
		const hit = this.seen.get(path);
		if (hit === undefined) this.seen.set(path, { ops: new Set([op]), count: 1, first: this.seen.size });
		else {
			hit.ops.add(op);
			hit.count++;
		}
	}

	ranked(): SeedFile[] {
		return [...this.seen.entries()]
			.map(([path, v]) => {
				const ops = FILE_OPS.filter((op) => v.ops.has(op));
				return { path, ops, tier: OP_TIER[ops[0] as FileOp], count: v.count, first: v.first };
			})
			.sort((a, b) => a.tier - b.tier || b.count - a.count || a.first - b.first)
			.map((f) => ({ path: f.path, ops: f.ops }));
	}
}

function entriesOf(map: Map<string, number>): Timed[] {
	return [...map.entries()].map(([text, at]) => ({ text, at }));
}

function laterFirst(a: Timed, b: Timed): number {
	return b.at - a.at;
}

function errorTier(message: ViewMessage, kind: string): number {
	if (kind === "thinking" || (message.role === "assistant" && kind === "text")) return 1;
	return message.role === "toolResult" && message.toolName === "read" ? 1 : 0;
}

function spanKind(role: string, kind: string): SpanKind {
	if (role === "toolResult") return "toolResult";
	if (role === "assistant") return kind === "thinking" ? "thinking" : "assistant";
	return role === "user" ? "user" : "other";
}

function callOf(message: ViewMessage, calls: Map<string, string>, redact: (t: string) => string): { call?: string } {
	if (message.role !== "toolResult") return {};
	const summary = message.callSummary ?? (message.toolCallId && calls.get(message.toolCallId));
	return summary ? { call: oneLine(redact(summary)) } : {};
}

function callById(id: string | undefined, calls: Map<string, string>, redact: (t: string) => string) {
	const summary = id === undefined ? undefined : calls.get(id);
	return summary ? { call: oneLine(redact(summary)) } : {};
}

function oneLine(text: string): string {
	return clipTo(text.replace(/\s+/g, " ").trim(), SEED_LIMITS.spans.chars);
}

function userText(message: ViewMessage): string {
	return message.blocks
		.filter((b) => b.kind === "text")
		.map((b) => b.text)
		.join("\n");
}

/** The first non-empty lines of a message, trimmed, joined by newlines, within the item bound. */
function firstLines(text: string): string {
	const out: string[] = [];
	for (const line of text.split("\n")) {
		const t = line.trim();
		if (t.length > 0) out.push(t);
		if (out.length >= USER_LINES_PER_MESSAGE) break;
	}
	return clipTo(out.join("\n"), SEED_LIMITS.userLines.chars);
}

/** The schema's integers: non-negative and safe. A fractional or invalid input cannot make a record unreadable. */
function wholeNumber(n: number): number {
	return Number.isFinite(n) ? Math.min(Number.MAX_SAFE_INTEGER, Math.max(0, Math.floor(n))) : 0;
}
