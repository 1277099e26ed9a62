/**
 * The messages Pi hands the `context` hook at a point of a branch, rebuilt from the session entries
 * the way Pi builds them (buildContextEntries + buildSessionProjection in Pi's session manager):
 * the latest compaction's summary, then the kept entries from its firstKeptEntryId, then everything
 * after it; custom messages and branch summaries as their own roles; the latest context edit per
 * target applied; system messages left out (the hook never sees them).
 *
 * Incremental: entries are consumed in branch order and the list is only appended to, except at a
 * compaction or a context edit, which rebuild it. A replay of a 500-request session therefore does
 * linear work per request at most.
 */
import { entryTime, type ParseTime } from "./entries.ts";
import type { PiEntry, PiMessage } from "./view.ts";

export class ContextTracker {
	/** The current context, in order. Read it between consume() calls; it is mutated in place. */
	readonly messages: PiMessage[] = [];
	/** Every entry of the branch consumed so far, in order. */
	private readonly path: PiEntry[] = [];
	/** Start of the retained range in `path` and the compaction that set it, or null with no compaction yet. */
	private compaction: { entry: PiEntry; keptFrom: number; at: number } | null = null;
	private readonly edits = new Map<string, PiEntry>();

	constructor(private readonly parseTime: ParseTime) {}

	consume(entry: PiEntry): void {
		this.path.push(entry);
		if (entry.type === "compaction") {
			const at = this.path.length - 1;
			const kept = this.path.findIndex((e, i) => i < at && e.id === entry.firstKeptEntryId);
			// A missing firstKeptEntryId keeps nothing, as in Pi (the summary replaces everything before).
			this.compaction = { entry, keptFrom: kept < 0 ? at : kept, at };
			this.rebuild();
			return;
		}
		if (entry.type === "context_edit") {
			if (typeof entry.targetId === "string") this.edits.set(entry.targetId, entry);
			this.rebuild();
			return;
		}
		this.append(entry);
	}

	/** The compaction entry whose summary heads the context, if any. */
	get latestCompaction(): PiEntry | null {
		return this.compaction?.entry ?? null;
	}

	private rebuild(): void {
		this.messages.length = 0;
		if (this.compaction === null) {
			for (const e of this.path) this.append(e);
			return;
		}
		const { entry, keptFrom, at } = this.compaction;
		this.messages.push(compactionSummary(entry, this.parseTime));
		for (let i = keptFrom; i < at; i++) {
			const e = this.path[i] as PiEntry;
			// An older compaction inside the kept range contributes nothing; only the newest one heads the context.
			if (e.type !== "compaction") this.append(e);
		}
		for (let i = at + 1; i < this.path.length; i++) this.append(this.path[i] as PiEntry);
	}

	private append(entry: PiEntry): void {
		const message = project(entry, this.parseTime);
		if (message === null) return;
		const edit = this.edits.get(entry.id);
		if (edit === undefined) {
			this.messages.push(message);
			return;
		}
		const replacement = edit.replacement as { content?: unknown } | null | undefined;
		if (replacement === null) return;
		if (!["user", "assistant", "toolResult", "custom"].includes(message.role) || replacement === undefined) {
			this.messages.push(message);
			return;
		}
		const content =
			(message.role === "assistant" || message.role === "toolResult") && typeof replacement.content === "string"
				? [{ type: "text", text: replacement.content }]
				: replacement.content;
		this.messages.push({ ...message, content: content as PiMessage["content"] });
	}
}

/** One entry as the context message Pi would build from it, or null when it adds none. */
function project(entry: PiEntry, parseTime: ParseTime): PiMessage | null {
	switch (entry.type) {
		case "message": {
			const m = entry.message;
			if (m === undefined || m === null || typeof m !== "object" || m.role === "system") return null;
			if ((m.role === "user" || m.role === "assistant" || m.role === "toolResult") && m.content == null)
				return { ...m, content: [] };
			return m;
		}
		case "custom_message":
			return {
				role: "custom",
				customType: entry.customType,
				content: (entry.content ?? []) as PiMessage["content"],
				display: entry.display,
				details: entry.details,
				timestamp: entryTime(entry, parseTime),
			};
		case "branch_summary":
			if (typeof entry.summary !== "string" || entry.summary === "") return null;
			return {
				role: "branchSummary",
				summary: entry.summary,
				fromId: entry.fromId,
				timestamp: entryTime(entry, parseTime),
			};
		default:
			return null;
	}
}

function compactionSummary(entry: PiEntry, parseTime: ParseTime): PiMessage {
	return {
		role: "compactionSummary",
		summary: typeof entry.summary === "string" ? entry.summary : "",
		tokensBefore: entry.tokensBefore,
		timestamp: entryTime(entry, parseTime),
	};
}
