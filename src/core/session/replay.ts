/**
 * A branch replayed entry by entry into the state the extension keeps for it (BranchState in the Pi
 * adapter): the recorded fold index, cache telemetry, the accounting events, the entry lookup that
 * maps an outgoing message to its session entry, and the context Pi would send next. The CLI's
 * status and simulate read sessions through this; a test holds it equal to BranchState.
 */
import type { AccountingReport, Usage } from "../accounting.ts";
import { FoldTelemetry } from "../fold-telemetry.ts";
import { type MaskIndex, parseFoldRecord } from "../layers.ts";
import { normalizeCode } from "../recall.ts";
import { ContextTracker } from "./context.ts";
import { entryTime, type ParseTime } from "./entries.ts";
import { messageKey, type PiEntry, type PiMessage } from "./view.ts";

/** customType of the entries context-fold appends (fold layers and unfolds). */
export const FOLD_ENTRY_TYPE = "context-fold";

export class BranchReplay {
	readonly context: ContextTracker;
	/** Folded blocks and the accounting: the same code the extension's BranchState uses. */
	private readonly telemetry = new FoldTelemetry();
	/** Timestamp of the newest response (any stop reason), as the adapter's idle clock keeps it. */
	lastResponseAt = 0;
	/** Fold records that failed validation (hand-edited, or written by a newer version). */
	invalidRecords = 0;
	/** Assistant messages seen: one request each. */
	responses = 0;
	/** recall_folded calls per code, from the tool calls in the branch. */
	readonly recallCalls = new Map<string, number>();
	/** Compactions context-fold answered because the window forced them (threshold or overflow). */
	forcedCompactions = 0;
	compactions = 0;
	/** The newest assistant message: its api, provider and model say where the next request goes. */
	lastAssistant: PiMessage | null = null;
	private readonly byKey = new Map<string, string | null>();

	constructor(private readonly parseTime: ParseTime) {
		this.context = new ContextTracker(parseTime);
	}

	consume(entry: PiEntry): void {
		this.context.consume(entry);
		if (entry.type === "message" && entry.message !== undefined && entry.message !== null) {
			const m = entry.message;
			const key = messageKey(m);
			this.byKey.set(key, this.byKey.has(key) ? null : entry.id);
			if (m.role === "assistant") {
				this.responses++;
				this.lastAssistant = m;
				this.lastResponseAt = typeof m.timestamp === "number" ? m.timestamp : this.lastResponseAt;
				if (m.stopReason !== "error" && m.stopReason !== "aborted")
					this.telemetry.countUsage(m.usage, this.lastResponseAt, false);
				this.countRecalls(m);
			}
			return;
		}
		if (entry.type === "usage") {
			// Pi 0.86+ cache warming: real provider traffic, never a user turn.
			this.telemetry.countUsage(entry.usage as Partial<Usage> | undefined, entryTime(entry, this.parseTime), true);
			return;
		}
		if (entry.type === "compaction") {
			this.compactions++;
			const reason = (entry.details as { contextFold?: { reason?: unknown } } | undefined)?.contextFold?.reason;
			if (reason === "threshold" || reason === "overflow") this.forcedCompactions++;
			return;
		}
		if (entry.type === "custom" && entry.customType === FOLD_ENTRY_TYPE) {
			const record = parseFoldRecord(entry.data);
			if (record === null) this.invalidRecords++;
			else this.telemetry.commit(record);
		}
	}

	/** The session entry an outgoing message came from, by role, timestamp and tool call id; null when ambiguous. */
	lookup(message: { role: string; timestamp?: number; toolCallId?: string }): string | null {
		return this.lookupKey(messageKey(message));
	}

	/** lookup() for a key already built with messageKey (a replay keeps one per message object). */
	lookupKey(key: string): string | null {
		return this.byKey.get(key) ?? null;
	}

	get index(): MaskIndex {
		return this.telemetry.index;
	}

	get everCacheRead(): boolean {
		return this.telemetry.everCacheRead;
	}

	accounting(): AccountingReport {
		return this.telemetry.accounting();
	}

	private countRecalls(m: PiMessage): void {
		if (!Array.isArray(m.content)) return;
		for (const part of m.content) {
			if (part?.type !== "toolCall" || part.name !== "recall_folded") continue;
			const code = (part.arguments as { code?: unknown } | undefined)?.code;
			if (typeof code !== "string" || code.trim() === "") continue;
			const c = normalizeCode(code);
			this.recallCalls.set(c, (this.recallCalls.get(c) ?? 0) + 1);
		}
	}
}
