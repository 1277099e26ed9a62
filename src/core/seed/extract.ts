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
import { FileTally } from "./file-tally.ts";
import { cleanPath, findPaths, harvestTokens, numberClass, Tally, withoutPiTempFiles } from "./harvest.ts";
import { scanSecrets } from "./redact.ts";
import {
	emptyOmitted,
	SEED_ID_MAX_CHARS,
	SEED_INDEX_VERSION,
	SEED_LIMITS,
	SEED_RECORD_TYPE,
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

/** Risk lines in a folded input (file content being written) rank with those of file contents. */
const INPUT_TIER = 1;
const SKIPPED_ROLES = new Set(["compactionSummary", "branchSummary"]);
const USER_LINES_PER_MESSAGE = 3;

interface Timed {
	text: string;
	at: number;
}

/** One seed record from a fold's or a compaction's messages: tool calls, then blocks, then the bounded record. */
export function extractSeedRecord(input: ExtractInput): SeedRecord {
	const builder = new RecordBuilder(input);
	builder.addCalls(input.calls ?? parseCallBlocks(input.messages));
	for (const message of input.messages) builder.addMessage(message);
	if (input.kind === "fold") builder.addFoldSpans();
	return builder.finish();
}

/** What a record collects while its messages are read, in first-seen order, redacted as it goes. */
class RecordBuilder {
	private readonly markerHash: Hash;
	private readonly fold: boolean;
	private readonly masked = new Map<string, MaskedBlock>();
	private readonly files = new FileTally();
	private readonly commands = new Map<string, number>();
	private readonly errors = new Map<string, { ref?: string; tier: number; at: number }>();
	private readonly users = new Map<string, number>();
	private readonly identifiers = new Tally();
	private readonly numbers = new Tally();
	private readonly spans: SeedSpan[] = [];
	/** Each call's command or path, by tool call id, for the spans' `call`. */
	private readonly callText = new Map<string, string>();
	private secrets = 0;
	private order = 0;
	private blocks = 0;
	private chars = 0;

	constructor(private readonly input: ExtractInput) {
		this.markerHash = input.markerHash ?? input.hash;
		this.fold = input.kind === "fold";
		for (const m of input.masked ?? []) if (m.kind !== "input") this.masked.set(blockKey(m.entryId, m.blockIndex), m);
	}

	/** Redact secrets and count them. */
	private redact(text: string): string {
		const r = scanSecrets(text, this.markerHash);
		this.secrets += r.count;
		return r.text;
	}

	/** Call summaries repeat a command or path already redacted and counted: redact without counting. */
	private readonly quiet = (text: string): string => scanSecrets(text, this.markerHash).text;

	/** Files touched and commands run, from the structured tool calls. */
	addCalls(calls: readonly SeedToolCall[]): void {
		for (const call of calls) {
			const { path, command, op } = readCall(call);
			if (path !== undefined) {
				const clean = cleanPath(this.redact(path).trim());
				if (clean !== null) this.files.add(clean, op);
			}
			if (command !== undefined) {
				const text = this.redact(command).trimEnd();
				if (text.length > 0 && !this.commands.has(text)) this.commands.set(text, this.order++);
				for (const p of findPaths(text)) this.files.add(p, "command");
			}
			const summary = command ?? path;
			if (summary !== undefined) this.callText.set(call.toolCallId, summary);
		}
	}

	/** A user message's first lines, and every block this record covers (a fold: only its masked ones). */
	addMessage(message: ViewMessage): void {
		if (SKIPPED_ROLES.has(message.role)) return;
		if (message.role === "user") {
			const line = firstLines(this.redact(userText(message)));
			if (line.length > 0 && !this.users.has(line)) this.users.set(line, this.order++);
		}
		for (let j = 0; j < message.blocks.length; j++) {
			const block = message.blocks[j];
			if (block === undefined || block.kind === "toolCall" || block.kind === "image" || block.text.length === 0)
				continue;
			const key = message.entryId === null ? null : blockKey(message.entryId, j);
			const mask = key === null ? undefined : this.masked.get(key);
			if (this.fold && mask === undefined) continue;
			this.addBlock(message, j, block.kind, block.text, mask?.code ?? key ?? undefined);
		}
	}

	/** Error lines, paths, identifiers and numbers of one block; a compaction also records its span. */
	private addBlock(message: ViewMessage, j: number, kind: string, raw: string, ref: string | undefined): void {
		this.harvest(raw, ref, errorTier(message, kind));
		if (this.fold || message.entryId === null) return;
		this.spans.push({
			entryId: message.entryId,
			blockIndex: j,
			kind: spanKind(message.role, kind),
			...(message.toolName !== undefined && { toolName: clipTo(message.toolName, SEED_ID_MAX_CHARS) }),
			...callOf(message, this.callText, this.quiet),
			sha256: this.input.hash(raw),
			chars: raw.length,
			bytes: utf8Length(raw),
			lines: countLines(raw),
		});
	}

	/** Error lines, paths, identifiers and numbers of one original text, redacted first. */
	private harvest(raw: string, ref: string | undefined, tier: number): void {
		this.blocks++;
		this.chars += raw.length;
		const text = this.redact(raw);
		for (const risk of findRiskLines(text)) {
			const line = clipTo(risk.text.trim(), SEED_LIMITS.errors.chars);
			if (line.length > 0 && !this.errors.has(line))
				this.errors.set(line, { ...(ref && { ref }), tier, at: this.order++ });
		}
		// Pi's own temporary files (full-output logs and the like) are not the project's: leave them out.
		const harvested = withoutPiTempFiles(text);
		for (const p of findPaths(harvested)) this.files.add(p, "output");
		harvestTokens(harvested, this.identifiers, this.numbers);
	}

	/** A fold's spans: one per masked block, with its code and fold-time sha256. */
	addFoldSpans(): void {
		// A folded input is harvested like a result of the file it shows (it is read as such content).
		for (const b of this.input.masked ?? []) {
			const text = b.kind === "input" ? this.input.inputTexts?.get(b.code) : undefined;
			if (text !== undefined) this.harvest(text, b.code, INPUT_TIER);
		}
		const byEntry = new Map<string, ViewMessage>();
		for (const m of this.input.messages) if (m.entryId !== null) byEntry.set(m.entryId, m);
		for (const b of this.input.masked ?? []) {
			const message = byEntry.get(b.entryId);
			const isInput = b.kind === "input";
			this.spans.push({
				code: b.code,
				entryId: b.entryId,
				blockIndex: b.blockIndex,
				// An input lives in an assistant message (a kind every reader knows); its path says where.
				kind: b.kind === "input" ? "assistant" : b.kind,
				...(b.toolName !== undefined && { toolName: clipTo(b.toolName, SEED_ID_MAX_CHARS) }),
				...(isInput || message === undefined
					? callById(b.toolCallId, this.callText, this.quiet)
					: callOf(message, this.callText, this.quiet)),
				...(isInput && b.path !== undefined && spanPath(b.path) !== undefined && { path: spanPath(b.path) }),
				sha256: b.sha256,
				chars: b.chars,
				bytes: b.bytes,
				lines: b.lines,
			});
		}
	}

	/** The record, every field within its bound (what was left out is counted in `omitted`). */
	finish(): SeedRecord {
		const input = this.input;
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
		const validSpans = this.spans.filter(
			(s) => /^[0-9a-f]{64}$/.test(s.sha256) && s.entryId.length <= SEED_ID_MAX_CHARS,
		);
		omitted.spans = this.spans.length - validSpans.length;
		const errorList = [...this.errors.entries()].map(([text, e]) => ({ text, ...e }));
		const userList = entriesOf(this.users);
		return {
			type: SEED_RECORD_TYPE,
			v: SEED_INDEX_VERSION,
			kind: input.kind,
			seq: wholeNumber(input.seq),
			at: wholeNumber(input.at),
			source: { messages: input.messages.length, blocks: this.blocks, chars: this.chars },
			files: bound("files", this.files.ranked()),
			commands: bound("commands", entriesOf(this.commands), laterFirst).map((c) =>
				clipTo(c.text, SEED_LIMITS.commands.chars),
			),
			// Execution output before file contents and thinking, later before earlier.
			errors: bound("errors", errorList, (a, b) => a.tier - b.tier || b.at - a.at).map((e) =>
				e.ref === undefined ? { text: e.text } : { text: e.text, ref: e.ref },
			),
			identifiers: bound("identifiers", this.identifiers.ranked()),
			numbers: bound("numbers", this.numbers.ranked(numberClass)),
			// The first message (usually the task), then the most recent ones.
			userLines: bound(
				"userLines",
				userList,
				(a, b) => Number(b === userList[0]) - Number(a === userList[0]) || b.at - a.at,
			).map((u) => u.text),
			spans: bound("spans", validSpans),
			secrets: this.secrets,
			omitted,
		};
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
