/**
 * Per-session fold state, rebuilt from the active branch. Fold records live in the session file as
 * custom entries, so state follows the branch: a layer committed on one branch never masks messages
 * on another, and a resumed session rebuilds exactly the state it had.
 */
import type { AccountingReport } from "../../core/accounting.ts";
import type { DigestFacts } from "../../core/digest.ts";
import { FoldTelemetry } from "../../core/fold-telemetry.ts";
import { type FoldRecord, type MaskIndex, parseFoldRecord } from "../../core/layers.ts";
import { MAX_REPORTED_TOKENS } from "../../core/tokens.ts";
import { messageKey, type PiContent, type PiEntry, type PiMessage, ViewCache } from "./view.ts";

/** customType of every entry context-fold appends. */
export const CUSTOM_TYPE = "context-fold";

/** What BranchState reads from Pi's session manager (the leaf lookups are optional). */
export interface BranchSource {
	getBranch(): readonly PiEntry[];
	getLeafId?(): string | null;
	getEntry?(id: string): PiEntry | undefined;
}

/** Past this many new entries since the last sync, reading the whole branch is as cheap. */
const MAX_INCREMENTAL_WALK = 10_000;

type UsageLike = { input?: number; output?: number; cacheRead?: number; cacheWrite?: number };

export class BranchState {
	/** Folded blocks and the accounting of the active branch (the same code the CLI replays with). */
	private telemetry = new FoldTelemetry();
	/** Timestamp of the newest response on the branch (the idle clock starts there). */
	lastResponseAt = 0;
	/** Records on the branch that failed validation (hand-edited or from a newer version). */
	invalidRecords = 0;
	/**
	 * Successful responses whose usage report was missing, zero, negative, not a number or absurd
	 * (above MAX_REPORTED_TOKENS): ignored for the budget, which then rests on estimates.
	 */
	badUsage = 0;
	/** What the first bad report looked like, for the one notice that says so. */
	badUsageKind: string | undefined;
	private readonly byKey = new Map<string, string | null>();
	/** Pi's own message objects by entry id (references, never copies), to spot foreign rewrites. */
	private readonly raw = new Map<string, PiMessage>();
	/** Blocks whose outgoing text was verified equal to the session's, by key, with that length. */
	readonly verified = new Map<string, number>();
	/**
	 * Digest facts of foldable blocks, computed once when each block is first seen, so a fold event
	 * does not rescan everything it masks. Dropped once a block is masked (its layer holds the digest).
	 */
	readonly facts = new Map<string, DigestFacts>();
	/** Views of the messages in the latest request (see ViewCache). */
	readonly views: ViewCache = new ExactViewCache();
	private lastId: string | undefined;
	private length = 0;

	/**
	 * Bring state up to date from Pi's session manager without walking the whole branch: when the
	 * leaf is unchanged there is nothing to do, and when the branch only grew, the new entries are
	 * found by walking back from the leaf to the last entry seen. (Pi's getBranch() walks every entry
	 * from the leaf to the root, so calling it per request made the hook slower as the session grew;
	 * found by the soak test.) Anything else (another branch, a first sync) reads the whole branch.
	 */
	syncWith(session: BranchSource): void {
		const leaf = session.getLeafId?.();
		if (leaf !== undefined && session.getEntry !== undefined && this.length > 0 && this.lastId !== undefined) {
			if (leaf === this.lastId) return;
			const fresh: PiEntry[] = [];
			let id: string | null | undefined = leaf;
			while (id !== null && id !== undefined && id !== this.lastId && fresh.length <= MAX_INCREMENTAL_WALK) {
				const entry: PiEntry | undefined = session.getEntry(id);
				if (entry === undefined) break;
				fresh.push(entry);
				id = entry.parentId;
			}
			if (id === this.lastId) {
				for (let i = fresh.length - 1; i >= 0; i--) this.consume(fresh[i] as PiEntry);
				this.length += fresh.length;
				this.lastId = leaf ?? undefined;
				return;
			}
		}
		this.sync(session.getBranch());
	}

	/** Bring state up to date with the active branch; append-only growth is processed incrementally. */
	sync(branch: readonly PiEntry[]): void {
		const incremental = this.length > 0 && branch.length >= this.length && branch[this.length - 1]?.id === this.lastId;
		if (!incremental) this.reset();
		for (let i = this.length; i < branch.length; i++) this.consume(branch[i] as PiEntry);
		this.length = branch.length;
		this.lastId = branch[branch.length - 1]?.id;
	}

	get index(): MaskIndex {
		return this.telemetry.index;
	}

	get everCacheRead(): boolean {
		return this.telemetry.everCacheRead;
	}

	/** The accounting over the active branch (computed when asked, cached until the next event). */
	accounting(): AccountingReport {
		return this.telemetry.accounting();
	}

	/** Record a fold record this instance just committed, before the branch shows it. Idempotent. */
	commit(record: FoldRecord): void {
		if (!this.telemetry.commit(record) || record.type !== "layer") return;
		// Masked now: the layer holds the digest, the facts are no longer needed.
		for (const b of record.blocks) this.facts.delete(`${b.entryId}:${b.blockIndex}`);
	}

	lookup(message: { role: string; timestamp?: number; toolCallId?: string }): string | null {
		return this.byKey.get(messageKey(message)) ?? null;
	}

	/** The session's own copy of a message, to compare against what arrives in the hook. */
	rawMessage(entryId: string): PiMessage | undefined {
		return this.raw.get(entryId);
	}

	/** Full check that a block's text is byte-identical to the session's (run at fold commit). */
	matchesSession(entryId: string, blockIndex: number, text: string): boolean {
		const content = this.raw.get(entryId)?.content;
		const part = Array.isArray(content) ? (content[blockIndex] as PiContent | undefined) : undefined;
		const raw = part?.type === "thinking" ? part.thinking : part?.text;
		return raw === text;
	}

	cacheAvg(): number | null {
		return this.accounting().sessionRatio;
	}

	private reset(): void {
		this.telemetry = new FoldTelemetry();
		this.lastResponseAt = 0;
		this.invalidRecords = 0;
		this.badUsage = 0;
		this.badUsageKind = undefined;
		this.byKey.clear();
		this.raw.clear();
		this.verified.clear();
		this.facts.clear();
		this.length = 0;
		this.lastId = undefined;
	}

	private consume(entry: PiEntry): void {
		if (entry.type === "message" && entry.message !== undefined) {
			const key = messageKey(entry.message);
			this.byKey.set(key, this.byKey.has(key) ? null : entry.id);
			this.raw.set(entry.id, entry.message);
			if (entry.message.role === "assistant") {
				const m = entry.message;
				this.lastResponseAt = typeof m.timestamp === "number" ? m.timestamp : this.lastResponseAt;
				if (m.stopReason !== "error" && m.stopReason !== "aborted") {
					const bad = usageProblem(m.usage);
					if (bad !== undefined) {
						this.badUsage++;
						this.badUsageKind ??= bad;
					}
					this.telemetry.countUsage(m.usage, this.lastResponseAt, false);
				}
			}
			return;
		}
		if (entry.type === "usage") {
			// Pi 0.86+ cache-warming refreshes: real provider traffic, never a user turn.
			this.telemetry.countUsage(entry.usage as UsageLike | undefined, Date.parse(String(entry.timestamp)) || 0, true);
			return;
		}
		if (entry.type === "custom" && entry.customType === CUSTOM_TYPE) {
			const record = parseFoldRecord(entry.data);
			if (record === null) {
				this.invalidRecords++;
				return;
			}
			this.commit(record);
		}
	}

	/**
	 * What this state holds, for CONTEXTFOLD_DEBUG and the soak test: its own bytes (digests and digest
	 * facts, as UTF-16 characters) and the sizes of its maps. Pi's message objects are only referenced
	 * (`rawRefs`), never copied; the view cache holds the current request's views only.
	 */
	footprint(): {
		foldedBlocks: number;
		digestChars: number;
		facts: number;
		factChars: number;
		verified: number;
		keys: number;
		rawRefs: number;
		views: number;
		events: number;
	} {
		let digestChars = 0;
		for (const b of this.index.byCode.values()) digestChars += b.digest.length + b.sha256.length + b.entryId.length;
		let factChars = 0;
		for (const f of this.facts.values()) {
			factChars += f.first?.length ?? 0;
			for (const r of f.risk) factChars += r.length;
		}
		return {
			foldedBlocks: this.index.byCode.size,
			digestChars,
			facts: this.facts.size,
			factChars,
			verified: this.verified.size,
			keys: this.byKey.size,
			rawRefs: this.raw.size,
			views: this.views.size,
			events: this.telemetry.accounting().responses + this.telemetry.accounting().changes.length,
		};
	}
}

/**
 * ViewCache's shape check lets a cached view have one block more than the message's content, for the
 * text of bash executions and summaries. A view made when another extension had added a block to
 * the message also has one more block, and reusing it miscounts the message (found by the fuzz
 * suite: a block inside the protected tail was folded). Reuse such a view only when its last block
 * really is that text. (The shape check itself lives in view.ts.)
 */
class ExactViewCache extends ViewCache {
	override take(entryId: string, m: PiMessage): ReturnType<ViewCache["take"]> {
		const hit = super.take(entryId, m);
		if (hit === undefined || !Array.isArray(m.content) || hit.view.blocks.length === m.content.length) return hit;
		const extra = ["command", "output", "summary"]
			.map((f) => m[f])
			.filter((v): v is string => typeof v === "string")
			.join("\n");
		const last = hit.view.blocks.at(-1);
		return last?.kind === "other" && extra.length > 0 && last.text === extra ? hit : undefined;
	}
}

/** Why a successful response's usage cannot be used, or undefined when it can. */
function usageProblem(usage: UsageLike | undefined): string | undefined {
	if (usage === undefined || usage === null || typeof usage !== "object") return "no usage";
	const fields = [usage.input, usage.output, usage.cacheRead, usage.cacheWrite];
	// null is what JSON makes of NaN and Infinity once Pi has written the report to the session file.
	if (fields.some((n) => n !== undefined && typeof n !== "number")) return "not a number";
	const nums = fields.filter((n): n is number => typeof n === "number");
	if (nums.some((n) => Number.isNaN(n))) return "not a number";
	if (nums.some((n) => n < 0)) return "negative";
	if (nums.some((n) => !Number.isFinite(n) || n > MAX_REPORTED_TOKENS)) return "absurdly large";
	if ((usage.input ?? 0) + (usage.cacheRead ?? 0) + (usage.cacheWrite ?? 0) <= 0) return "no usage";
	return undefined;
}
