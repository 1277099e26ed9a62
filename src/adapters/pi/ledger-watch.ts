/**
 * The session file under a running session: the ledger recall reads (or in-memory originals for a
 * session without a file), brought up to date at most once per request, and the user told once,
 * clearly, when the file vanished, was cut short, rewritten or cannot be read, or when another
 * process appends to it. Part of the Runtime (runtime.ts), which hands it the fold index to check.
 */

import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import type { MaskIndex } from "../../core/layers.ts";
import { Ledger, LedgerError } from "../../store/ledger.ts";
import { MemoryOriginals } from "../../store/originals.ts";
import type { Notices } from "./notices.ts";

export class LedgerWatch {
	/** The session's ledger, or null for an ephemeral session (then originals live in memory). */
	ledger: Ledger | null = null;
	memory: MemoryOriginals | undefined;
	/** Ledger entries already checked for a foreign writer (see checkForeignWriter). */
	private foreignCursor = 0;
	/** The session file was read successfully at least once (see check). */
	private ledgerSeen = false;
	private ledgerRebuilds = 0;
	private ledgerCheckedAt = -1;
	private ledgerOk = true;

	constructor(private readonly notices: Notices) {}

	/** Bind to a session file: its ledger, or in-memory originals without a file. */
	bind(file: string | undefined): void {
		if (file) {
			if (this.ledger?.path !== file) {
				this.ledger = new Ledger(file);
				this.foreignCursor = 0;
				this.ledgerSeen = false;
				this.ledgerRebuilds = 0;
				this.ledgerCheckedAt = -1;
			}
			this.memory = undefined;
		} else {
			this.ledger = null;
			this.memory ??= new MemoryOriginals();
		}
	}

	/**
	 * Whether the session file holds an entry, for a fold event about to commit. The file is re-read
	 * (incrementally) at most once per request; when it cannot be read, nothing new is folded.
	 */
	has(ctx: ExtensionContext, entryId: string, request: number, index: MaskIndex): boolean {
		const ledger = this.ledger;
		if (ledger === null) return true;
		if (this.ledgerCheckedAt !== request) {
			this.ledgerCheckedAt = request;
			this.ledgerOk = this.check(ctx, index);
		}
		return this.ledgerOk && ledger.has(entryId);
	}

	/**
	 * Bring the ledger up to date and say once, clearly, when the session file vanished, was cut short,
	 * rewritten or cannot be read: recall refuses what it no longer holds (never other bytes), nothing
	 * new is folded from it, and the session goes on. Returns false when the file cannot be read.
	 */
	check(ctx: ExtensionContext, index: MaskIndex): boolean {
		const ledger = this.ledger;
		if (ledger === null) return true;
		try {
			ledger.refresh();
		} catch (error) {
			if (!(error instanceof LedgerError)) throw error;
			// Pi writes the file lazily; a file never seen yet is not a fault.
			if (error.code === "missing" && !this.ledgerSeen) return false;
			this.notices.once(
				ctx,
				"ledger",
				`${error.message}. Folded blocks cannot be recalled from it until it is back (recall says so, it never serves other bytes), and nothing new is folded meanwhile; the session goes on.`,
				"warning",
			);
			return false;
		}
		this.ledgerSeen = true;
		// Recall refreshes the ledger too, so compare with the rebuilds this check last saw.
		if (ledger.stats.rebuilds > this.ledgerRebuilds) {
			this.ledgerRebuilds = ledger.stats.rebuilds;
			this.foreignCursor = 0;
			let gone = 0;
			for (const b of index.byCode.values()) if (!ledger.has(b.entryId)) gone++;
			this.notices.once(
				ctx,
				"ledger",
				`the session file ${ledger.path} was cut short or replaced under Pi: ${
					gone > 0
						? `${gone} folded block(s) are no longer in it, so recall refuses them (it never serves other bytes)`
						: "every folded block is still in it, but earlier entries may be gone"
				}. Nothing missing from the file is folded; the session goes on.`,
				"warning",
			);
		}
		this.checkForeignWriter(ctx, ledger);
		return true;
	}

	/**
	 * Entries in the file that this Pi never wrote: another process (a second Pi on the same session)
	 * is appending to it. Nothing breaks (recall verifies every byte, the ledger indexes both), but the
	 * two histories interleave in one file, so the user hears it once.
	 */
	private checkForeignWriter(ctx: ExtensionContext, ledger: Ledger): void {
		const session = ctx.sessionManager as unknown as { getEntry?(id: string): unknown };
		const ids = ledger.ids();
		if (typeof session.getEntry !== "function") {
			this.foreignCursor = ids.length;
			return;
		}
		let foreign = 0;
		for (let i = this.foreignCursor; i < ids.length; i++) {
			const id = ids[i] as string;
			// The header carries the session id; v1 files have no ids (and are never appended to as v1).
			if (id === ledger.stats.sessionId || id.startsWith("line:")) continue;
			if (session.getEntry(id) === undefined) foreign++;
		}
		this.foreignCursor = ids.length;
		if (foreign === 0) return;
		this.notices.once(
			ctx,
			"foreign-writer",
			`another process is appending to the session file ${ledger.path} (${foreign} entr${foreign === 1 ? "y" : "ies"} this Pi did not write; a second Pi on the same session?). Both go on and recall still verifies every byte, but their histories interleave in one file: run one Pi per session.`,
			"warning",
		);
	}
}
