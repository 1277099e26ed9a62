/**
 * What a branch's entries add up to, consumed root to leaf: the fold index and the accounting (via
 * FoldTelemetry), the entry lookup that maps an outgoing message to its session entry, the idle
 * clock's last response, the recall and compaction counts the status flags read, and unusable usage
 * reports. One implementation: the extension drives it live (its adapter keeps only caches around
 * it), and the CLI's status and simulate drive it over a session file, so they cannot drift apart.
 */
import type { AccountingReport } from "../accounting.ts";
import { isSuccessfulResponse } from "../blocks.ts";
import { FoldTelemetry } from "../fold-telemetry.ts";
import { parseLayerInputs } from "../input-records.ts";
import { type FoldRecord, type MaskIndex, parseFoldRecord } from "../layers.ts";
import { type EarlyCompactionRecord, parseEarlyRecord } from "../policy/compact.ts";
import { normalizeCode } from "../recall.ts";
import { MAX_REPORTED_TOKENS, type Usage } from "../tokens.ts";
import { ContextTracker } from "./context.ts";
import { entryTime, type ParseTime } from "./entries.ts";
import { MessageIndex } from "./message-index.ts";
import type { PiEntry, PiMessage } from "./view.ts";

/** customType of the entries context-fold appends (fold layers and unfolds). */
export const FOLD_ENTRY_TYPE = "context-fold";
/**
 * customType of the note context-fold appends when Pi itself made a forced compaction (threshold or
 * overflow): Pi's compaction entry does not record its reason, and the count must survive a restart.
 * A separate type, so an older release (which validates every `context-fold` entry) never sees it.
 */
export const COMPACTION_NOTE_TYPE = "context-fold-compaction";
/**
 * customType of the note context-fold appends when a provider refused (HTTP 400 or 422) a request
 * that carried folded tool-call inputs: `{v: 1, model: "<provider>/<model id>", error}`. From then
 * on that model gets its calls in full. A separate type, so an older release never sees it.
 */
export const INPUTS_REFUSED_TYPE = "context-fold-inputs-refused";

/** How a model is named in an inputs-refused note. */
export function modelKey(provider: unknown, model: unknown): string {
	return `${typeof provider === "string" ? provider : "?"}/${typeof model === "string" ? model : "?"}`;
}

/**
 * A failed response's error message that reads as the provider refusing the request itself (HTTP
 * 400 or 422, as the providers' SDKs put the status first), not as an outage, a limit or auth.
 */
export function isRequestRefusal(errorMessage: unknown): boolean {
	return typeof errorMessage === "string" && /^\s*(?:Error:\s*)?(?:HTTP\s+)?(?:400|422)\b/i.test(errorMessage);
}

/** Compaction reasons that the window forced (not a user's /compact). */
export function isForcedReason(reason: unknown): boolean {
	return reason === "threshold" || reason === "overflow";
}

export interface BranchStateOptions {
	/** Keep the context Pi would send next (ContextTracker): the CLI needs it, the extension gets it from Pi. */
	trackContext?: boolean;
}

export class BranchState {
	/** The context Pi would send next, when tracked (see BranchStateOptions). */
	readonly context: ContextTracker | null;
	private readonly telemetry = new FoldTelemetry();
	/** Timestamp of the newest response on the branch, any stop reason (the idle clock starts there). */
	lastResponseAt = 0;
	/** Time of the newest cache warm-up Pi recorded (1.6.0's `usage` entries); 0 without one. */
	lastWarmAt = 0;
	/** Fold records on the branch that failed validation (hand-edited, or from a newer version). */
	invalidRecords = 0;
	/**
	 * Successful responses whose usage report was missing, zero, negative, not a number or absurd
	 * (above MAX_REPORTED_TOKENS): ignored for the budget, which then rests on estimates.
	 */
	badUsage = 0;
	/** What the first bad report looked like, for the one notice that says so. */
	badUsageKind: string | undefined;
	/** Assistant messages seen: one request each. */
	responses = 0;
	/** `recall_folded code=` calls per code, from the tool calls on the branch. */
	readonly recallCalls = new Map<string, number>();
	/** Compactions the window forced: context-fold's answers to threshold/overflow, and Pi's own (noted). */
	forcedCompactions = 0;
	compactions = 0;
	/** context-fold's early compactions (policy/compact.ts) on the branch, and the newest one's decision. */
	earlyCompactions = 0;
	lastEarly: EarlyCompactionRecord | null = null;
	/** The newest assistant message: its api, provider and model say where the next request goes. */
	lastAssistant: PiMessage | null = null;
	/** Entry id of the newest assistant message. */
	lastAssistantId: string | null = null;
	/** Models (modelKey) whose provider refused a request carrying folded inputs: no input folds for them. */
	readonly inputsRefused = new Set<string>();
	private readonly byKey = new MessageIndex();
	private readonly forcedIds = new Set<string>();

	constructor(
		private readonly parseTime: ParseTime,
		options: BranchStateOptions = {},
	) {
		this.context = options.trackContext === true ? new ContextTracker(parseTime) : null;
	}

	consume(entry: PiEntry): void {
		this.context?.consume(entry);
		if (entry.type === "message" && entry.message !== undefined && entry.message !== null) {
			this.consumeMessage(entry.id, entry.message);
			return;
		}
		if (entry.type === "usage") {
			// Pi 0.86+ cache-warming refreshes: real provider traffic, never a user turn.
			const at = entryTime(entry, this.parseTime);
			if (Number.isFinite(at)) this.lastWarmAt = Math.max(this.lastWarmAt, at);
			this.telemetry.countUsage(entry.usage as Partial<Usage> | undefined, at, true);
			return;
		}
		if (entry.type === "compaction") {
			this.compactions++;
			const reason = (entry.details as { contextFold?: { reason?: unknown } } | undefined)?.contextFold?.reason;
			if (isForcedReason(reason)) this.countForced(entry.id);
			const early = parseEarlyRecord(entry.details);
			if (early !== null) {
				this.earlyCompactions++;
				this.lastEarly = early;
			}
			return;
		}
		if (entry.type !== "custom") return;
		if (entry.customType === INPUTS_REFUSED_TYPE) {
			const model = (entry.data as { model?: unknown } | undefined)?.model;
			if (typeof model === "string") this.inputsRefused.add(model);
			return;
		}
		if (entry.customType === COMPACTION_NOTE_TYPE) {
			const data = entry.data as { compactionId?: unknown; reason?: unknown } | undefined;
			if (isForcedReason(data?.reason))
				this.countForced(typeof data?.compactionId === "string" ? data.compactionId : entry.id);
			return;
		}
		if (entry.customType === FOLD_ENTRY_TYPE) {
			const record = parseFoldRecord(entry.data);
			if (record === null) this.invalidRecords++;
			else this.commit(record);
			// Input blocks that could not be read are dropped alone (the layer's other masks stay).
			this.invalidRecords += parseLayerInputs(entry.data).skipped;
		}
	}

	/** Apply a fold record (one this instance just committed, before the branch shows it). Idempotent. */
	commit(record: FoldRecord): boolean {
		return this.telemetry.commit(record);
	}

	/** The session entry an outgoing message came from, by role, timestamp and tool call id; null when ambiguous. */
	lookup(message: { role: string; timestamp?: number; toolCallId?: string }): string | null {
		return this.byKey.get(message);
	}

	/** Distinct message keys held (for the debug footprint). */
	get keyCount(): number {
		return this.byKey.size;
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

	private consumeMessage(id: string, m: PiMessage): void {
		this.byKey.add(m, id);
		if (m.role !== "assistant") return;
		this.responses++;
		this.lastAssistant = m;
		this.lastAssistantId = id;
		this.lastResponseAt = typeof m.timestamp === "number" ? m.timestamp : this.lastResponseAt;
		if (isSuccessfulResponse(m)) {
			const bad = usageProblem(m.usage);
			if (bad !== undefined) {
				this.badUsage++;
				this.badUsageKind ??= bad;
			}
			this.telemetry.countUsage(m.usage as Partial<Usage> | undefined, this.lastResponseAt, false);
		}
		this.countRecalls(m);
	}

	/** A compaction is counted once, whether its own details or a later note says it was forced. */
	private countForced(compactionId: string): void {
		if (this.forcedIds.has(compactionId)) return;
		this.forcedIds.add(compactionId);
		this.forcedCompactions++;
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

/** Why a successful response's usage cannot be used, or undefined when it can. */
export function usageProblem(usage: unknown): string | undefined {
	if (usage === undefined || usage === null || typeof usage !== "object") return "no usage";
	const u = usage as Partial<Record<keyof Usage, unknown>>;
	const fields = [u.input, u.output, u.cacheRead, u.cacheWrite];
	// null is what JSON makes of NaN and Infinity once Pi has written the report to the session file.
	if (fields.some((n) => n !== undefined && typeof n !== "number")) return "not a number";
	const nums = fields.filter((n): n is number => typeof n === "number");
	if (nums.some((n) => Number.isNaN(n))) return "not a number";
	if (nums.some((n) => n < 0)) return "negative";
	if (nums.some((n) => !Number.isFinite(n) || n > MAX_REPORTED_TOKENS)) return "absurdly large";
	const prompt = ((u.input as number) ?? 0) + ((u.cacheRead as number) ?? 0) + ((u.cacheWrite as number) ?? 0);
	if (prompt <= 0) return "no usage";
	return undefined;
}

/** A BranchState that also keeps the context Pi would send next: what the CLI replays a session file with. */
export class BranchReplay extends BranchState {
	declare readonly context: ContextTracker;

	constructor(parseTime: ParseTime) {
		super(parseTime, { trackContext: true });
	}
}
