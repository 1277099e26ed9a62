/**
 * The seed index in Pi: one record per fold event (written just after the request goes out, by
 * seed-writer.ts) and per compaction, the deterministic compaction answer (CONTEXTFOLD_COMPACT=det),
 * and /fold-handoff. None of it ever calls a model.
 */
import type { ExtensionAPI, ExtensionCommandContext, ExtensionContext } from "@earendil-works/pi-coding-agent";
import { compactionSummaryOf, handoffFromIndex, renderCompactionSummary } from "../../core/handoff.ts";
import type { EarlyCompactionRecord } from "../../core/policy/compact.ts";
import { extractSeedRecord } from "../../core/seed/extract.ts";
import { toolCallsOf, withoutFolded } from "../../core/seed/pick.ts";
import { redactSecrets } from "../../core/seed/redact.ts";
import type { SeedRecord } from "../../core/seed/schema.ts";
import { COMPACTION_NOTE_TYPE, isForcedReason } from "../../core/session/branch-state.ts";
import { buildView, type PiMessage } from "../../core/session/view.ts";
import { sha256 } from "../../store/hash.ts";
import { appendSeedRecord, readSeedIndex, seedIndexPath, writeHandoff } from "../../store/seed-index.ts";
import type { Runtime } from "./runtime.ts";
import type { SeedWriter } from "./seed-writer.ts";

interface CompactDetails {
	contextFold?: { v: number; reason?: string; records?: number; early?: EarlyCompactionRecord };
}

export function registerSeed(rt: Runtime, writer: SeedWriter): void {
	const pi: ExtensionAPI = rt.pi;

	pi.on("session_start", (_event, ctx) => adviseForced(rt, ctx));
	pi.on("session_shutdown", () => writer.flush());

	pi.on("session_compact", (event, ctx) => {
		const e = event as { fromExtension?: boolean; reason?: string; compactionEntry?: { id?: unknown } };
		// Our own answers carry their reason in their details; Pi's own compaction entries do not, so a
		// forced one is noted on the branch, where the count survives a restart.
		if (!e.fromExtension && isForcedReason(e.reason) && typeof e.compactionEntry?.id === "string") {
			try {
				pi.appendEntry(COMPACTION_NOTE_TYPE, { v: 1, reason: e.reason, compactionId: e.compactionEntry.id });
			} catch {
				// Advisory only: without the note this compaction is not counted.
			}
		}
		adviseForced(rt, ctx);
	});

	pi.on("session_before_compact", (event, ctx) => {
		if (rt.settings.compact !== "det") return undefined;
		return deterministicCompaction(rt, writer, event as unknown as CompactEvent, ctx);
	});

	pi.registerCommand("fold-handoff", {
		description: "Write a seed for a fresh session (goal + deterministic index) and offer to start it",
		handler: async (args, ctx) => {
			await handoff(rt, writer, args, ctx);
		},
	});
}

/** After a second compaction the window forced on this branch: suggest a handoff, once. */
function adviseForced(rt: Runtime, ctx: ExtensionContext): void {
	try {
		if (!rt.sync(ctx) || rt.state.branch.forcedCompactions < 2) return;
		rt.notices.once(
			ctx,
			"forced-compaction",
			"a second forced compaction happened in this session. Consider /fold-handoff at your next finish line: a fresh session seeded from the index costs less than carrying this one on.",
			"warning",
		);
		rt.showFooter(ctx);
	} catch {
		// Advisory only.
	}
}

interface CompactEvent {
	reason?: string;
	customInstructions?: string;
	preparation: {
		firstKeptEntryId: string;
		tokensBefore: number;
		messagesToSummarize?: PiMessage[];
		turnPrefixMessages?: PiMessage[];
	};
}

type CompactAnswer = {
	compaction: { summary: string; firstKeptEntryId: string; tokensBefore: number; details: CompactDetails };
};

/**
 * CONTEXTFOLD_COMPACT=det: answer Pi's compaction with a summary rendered from the seed index (every
 * earlier record plus one for what this compaction removes), never a model call. A failure still
 * answers deterministically, with a minimal summary that says so.
 */
function deterministicCompaction(
	rt: Runtime,
	writer: SeedWriter,
	e: CompactEvent,
	ctx: ExtensionContext,
): CompactAnswer {
	const prep = e.preparation;
	const parentFile = ctx.sessionManager.getSessionFile() ?? null;
	// Our own early compaction (early-compact.ts) reaches Pi as a manual one: its entry says what it was, and why.
	const early = e.reason === "manual" ? rt.early.pending : null;
	const reason = early !== null ? "early" : e.reason;
	const details: CompactDetails = {
		contextFold: { v: 1, ...(reason !== undefined && { reason }), ...(early !== null && { early }) },
	};
	const answer = (summary: string): CompactAnswer => ({
		compaction: { summary, firstKeptEntryId: prep.firstKeptEntryId, tokensBefore: prep.tokensBefore, details },
	});
	try {
		writer.flush();
		rt.sync(ctx);
		const dir = writer.dir(ctx);
		const index = readIndexOrEmpty(rt, ctx, dir);
		const record = compactionRecord(
			rt,
			[...(prep.messagesToSummarize ?? []), ...(prep.turnPrefixMessages ?? [])],
			index,
		);
		try {
			appendSeedRecord(dir, record);
		} catch (error) {
			rt.notices.once(
				ctx,
				"seed-write",
				`the seed index was not updated (${(error as Error).message}); the compaction summary still covers it.`,
				"warning",
			);
		}
		if (index.invalid > 0) {
			rt.notices.once(
				ctx,
				"seed-invalid",
				`${index.invalid} line(s) of ${index.path} could not be read; the summary is rendered from the valid records.`,
				"warning",
			);
		}
		const records: SeedRecord[] = [...index.records, record];
		if (details.contextFold) details.contextFold.records = records.length;
		return answer(
			compactionSummaryOf(records, {
				instructions: e.customInstructions,
				invalid: index.invalid,
				truncatedTail: index.truncatedTail,
				parentFile,
				hash: sha256,
			}),
		);
	} catch (error) {
		rt.notices.once(
			ctx,
			"compact-fail",
			`the deterministic compaction summary failed (${(error as Error).message}); a minimal one was used.`,
			"warning",
		);
		return answer(
			renderCompactionSummary({ instructions: e.customInstructions, rendered: "", records: 0, invalid: 0, parentFile }),
		);
	}
}

/** The seed index so far; unreadable, it is reported and the summary covers this compaction alone. */
function readIndexOrEmpty(rt: Runtime, ctx: ExtensionContext, dir: string): ReturnType<typeof readSeedIndex> {
	try {
		return readSeedIndex(dir);
	} catch (error) {
		rt.notices.once(
			ctx,
			"seed-read",
			`the seed index could not be read (${(error as Error).message}); summarizing from this compaction alone.`,
			"warning",
		);
		return { path: seedIndexPath(dir), missing: true, records: [], invalid: 0, truncatedTail: false, problems: [] };
	}
}

/** The seed record of what a compaction removes (blocks already folded are covered by their fold records). */
function compactionRecord(rt: Runtime, removed: PiMessage[], index: ReturnType<typeof readSeedIndex>): SeedRecord {
	const view = buildView(removed, (m) => rt.state.lookup(m)).map((m) => withoutFolded(m, rt.state.index));
	return extractSeedRecord({
		kind: "compaction",
		seq: index.records.length + 1,
		at: Date.now(),
		messages: view,
		calls: toolCallsOf(removed),
		hash: sha256,
	});
}

async function handoff(rt: Runtime, writer: SeedWriter, args: string, ctx: ExtensionCommandContext): Promise<void> {
	writer.flush();
	let goal = args.trim();
	if (goal === "" && ctx.hasUI)
		goal = ((await ctx.ui.input("Goal for the fresh session", "what should happen next?")) ?? "").trim();
	// The seed is a file on disk and the next session's first message: a secret in the goal is redacted
	// like everything else the index holds.
	goal = redactSecrets(goal, sha256);
	const dir = writer.dir(ctx);
	const parentFile = ctx.sessionManager.getSessionFile() ?? null;
	let text: string;
	let path: string;
	try {
		const index = readSeedIndex(dir);
		text = handoffFromIndex({ goal, parentFile, sessionId: ctx.sessionManager.getSessionId(), index, hash: sha256 });
		if (index.invalid > 0)
			rt.notices.say(
				ctx,
				`${index.invalid} line(s) of ${index.path} could not be read; the seed was rendered from the valid records.`,
				"warning",
			);
		path = writeHandoff(dir, text, Date.now());
	} catch (error) {
		rt.notices.say(
			ctx,
			`handoff failed: ${(error as Error).message}. Nothing was written; the session goes on.`,
			"error",
		);
		return;
	}
	const manual = `Seed written: ${path}\nTo use it: review the file, run /new, then paste it (or ask the new session to read that path).`;
	if (!ctx.hasUI) {
		rt.notices.say(ctx, manual, "info");
		return;
	}
	const go = await ctx.ui.confirm(
		"Start a fresh session from this seed?",
		`${path}\nThe seed becomes its first message; nothing is sent until you type.`,
	);
	if (!go) {
		rt.notices.say(ctx, manual, "info");
		return;
	}
	const seed = text;
	const result = await ctx.newSession({
		...(parentFile !== null && { parentSession: parentFile }),
		setup: async (sm: { appendMessage(m: unknown): unknown }) => {
			sm.appendMessage({ role: "user", content: [{ type: "text", text: seed }], timestamp: Date.now() });
		},
	} as never);
	if ((result as { cancelled?: boolean } | undefined)?.cancelled)
		rt.notices.say(ctx, `the switch was cancelled. ${manual}`, "info");
}
