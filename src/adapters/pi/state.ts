/**
 * The extension's live view of the active branch: the core's BranchState (what the branch adds up
 * to, the same code the CLI replays sessions with), kept in step with Pi's session manager, plus the
 * per-request caches only a live hook needs. Fold records live in the session file as custom
 * entries, so state follows the branch: a layer committed on one branch never masks messages on
 * another, and a resumed session rebuilds exactly the state it had.
 */
import type { AccountingReport } from "../../core/accounting.ts";
import type { DigestFacts } from "../../core/digest.ts";
import { type ArgPath, valueAt } from "../../core/inputs.ts";
import type { FoldRecord, MaskIndex } from "../../core/layers.ts";
import { BranchState } from "../../core/session/branch-state.ts";
import type { PiContent, PiEntry, PiMessage } from "../../core/session/view.ts";
import { ViewCache } from "../../core/session/view-cache.ts";

/** What LiveBranch reads from Pi's session manager (the leaf lookups are optional). */
export interface BranchSource {
	getBranch(): readonly PiEntry[];
	getLeafId?(): string | null;
	getEntry?(id: string): PiEntry | undefined;
}

/** Pi's entries typed as the core reads them (Pi's own types are wider than the core needs). */
export function branchOf(session: { getBranch(): unknown }): PiEntry[] {
	return session.getBranch() as PiEntry[];
}

/** Past this many new entries since the last sync, reading the whole branch is as cheap. */
const MAX_INCREMENTAL_WALK = 10_000;

const parseTime = (iso: string) => Date.parse(iso);

export class LiveBranch {
	/** What the branch adds up to: fold index, accounting, lookups, counts (shared with the CLI). */
	branch = new BranchState(parseTime);
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
	readonly views = new ViewCache();
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
		return this.branch.index;
	}

	get everCacheRead(): boolean {
		return this.branch.everCacheRead;
	}

	/** The accounting over the active branch (computed when asked, cached until the next event). */
	accounting(): AccountingReport {
		return this.branch.accounting();
	}

	/** Record a fold record this instance just committed, before the branch shows it. Idempotent. */
	commit(record: FoldRecord): void {
		if (!this.branch.commit(record) || record.type !== "layer") return;
		// Masked now: the layer holds the digest, the facts are no longer needed.
		for (const b of record.blocks) this.facts.delete(`${b.entryId}:${b.blockIndex}`);
	}

	lookup(message: { role: string; timestamp?: number; toolCallId?: string }): string | null {
		return this.branch.lookup(message);
	}

	/** The session's own copy of a message, to compare against what arrives in the hook. */
	rawMessage(entryId: string): PiMessage | undefined {
		return this.raw.get(entryId);
	}

	/**
	 * Full check that a block's text is byte-identical to the session's (run at fold commit); for an
	 * input, the value at `path` of the session's tool call (whatever form Pi gives `edits`).
	 */
	matchesSession(entryId: string, blockIndex: number, text: string, path?: ArgPath): boolean {
		const content = this.raw.get(entryId)?.content;
		const part = Array.isArray(content) ? (content[blockIndex] as PiContent | undefined) : undefined;
		if (path !== undefined) return part?.type === "toolCall" && valueAt(part.arguments, path) === text;
		const raw = part?.type === "thinking" ? part.thinking : part?.text;
		return raw === text;
	}

	cacheAvg(): number | null {
		return this.accounting().sessionRatio;
	}

	private reset(): void {
		this.branch = new BranchState(parseTime);
		this.raw.clear();
		this.verified.clear();
		this.facts.clear();
		this.length = 0;
		this.lastId = undefined;
	}

	private consume(entry: PiEntry): void {
		if (entry.type === "message" && entry.message !== undefined && entry.message !== null) {
			this.raw.set(entry.id, entry.message);
		}
		this.branch.consume(entry);
		if (entry.type === "custom") {
			// A layer committed on the branch masks its blocks: their facts are no longer needed.
			for (const b of this.index.layers.at(-1)?.blocks ?? []) this.facts.delete(`${b.entryId}:${b.blockIndex}`);
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
		const a = this.accounting();
		return {
			foldedBlocks: this.index.byCode.size,
			digestChars,
			facts: this.facts.size,
			factChars,
			verified: this.verified.size,
			keys: this.branch.keyCount,
			rawRefs: this.raw.size,
			views: this.views.size,
			events: a.responses + a.changes.length,
		};
	}
}
