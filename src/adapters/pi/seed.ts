/**
 * The seed index in Pi: one record per fold event (written just after the request goes out) and per
 * compaction, the deterministic compaction answer (CONTEXTFOLD_COMPACT=det), and /fold-handoff.
 * None of it ever calls a model.
 */
import type { ExtensionAPI, ExtensionCommandContext, ExtensionContext } from "@earendil-works/pi-coding-agent";
import type { ViewMessage } from "../../core/blocks.ts";
import { compactionSummaryOf, handoffFromIndex, renderCompactionSummary } from "../../core/handoff.ts";
import type { FrozenLayer } from "../../core/layers.ts";
import { extractSeedRecord } from "../../core/seed/extract.ts";
import { pickFoldMessages, toolCallsOf, withoutFolded } from "../../core/seed/pick.ts";
import { redactSecrets } from "../../core/seed/redact.ts";
import type { SeedRecord } from "../../core/seed/schema.ts";
import { appendSeedRecord, readSeedIndex, seedIndexPath, writeHandoff } from "../../store/seed-index.ts";
import { sha256 } from "./hash.ts";
import { sessionDataDir } from "./paths.ts";
import type { Runtime } from "./runtime.ts";
import { buildView, type PiEntry, type PiMessage } from "./view.ts";

const FORCED_FLAG = "forced-compaction";

interface CompactDetails {
	contextFold?: { v: number; reason?: string; records?: number };
}

export class SeedWriter {
	private pending: Array<() => void> = [];
	private timer: ReturnType<typeof setTimeout> | undefined;

	constructor(private readonly rt: Runtime) {}

	dir(ctx: ExtensionContext): string {
		return sessionDataDir(ctx.sessionManager.getSessionId(), this.rt.env);
	}

	/**
	 * Record a fold event. Extraction runs after the request has gone out (a zero-delay timer), so it
	 * never adds to the request's latency; pending work is flushed on shutdown.
	 */
	onFold(
		ctx: ExtensionContext,
		layer: FrozenLayer,
		since: number,
		view: readonly ViewMessage[],
		messages: readonly PiMessage[],
	): void {
		const dir = this.dir(ctx);
		this.pending.push(() => {
			try {
				const picked = pickFoldMessages(layer, since, view, messages);
				const record = extractSeedRecord({
					kind: "fold",
					seq: layer.seq,
					at: Date.now(),
					messages: picked.view,
					masked: layer.blocks,
					calls: picked.calls,
					hash: sha256,
				});
				appendSeedRecord(dir, record);
			} catch (error) {
				this.rt.notices.once(
					ctx,
					"seed-write",
					`the seed index was not updated (${(error as Error).message}); folding and the session go on.`,
					"warning",
				);
			}
		});
		if (this.timer === undefined) {
			this.timer = setTimeout(() => this.flush(), 0);
			this.timer.unref?.();
		}
	}

	flush(): void {
		this.timer = undefined;
		const work = this.pending;
		this.pending = [];
		for (const task of work) task();
	}
}

export function registerSeed(rt: Runtime, writer: SeedWriter): void {
	const pi: ExtensionAPI = rt.pi;
	let liveForced = 0;

	const forcedOnBranch = (ctx: ExtensionContext): number => {
		let n = 0;
		for (const e of ctx.sessionManager.getBranch() as unknown as PiEntry[]) {
			if (e.type !== "compaction") continue;
			const reason = (e.details as CompactDetails | undefined)?.contextFold?.reason;
			if (reason === "threshold" || reason === "overflow") n++;
		}
		return n;
	};

	const checkForced = (ctx: ExtensionContext) => {
		const n = forcedOnBranch(ctx) + liveForced;
		if (n < 2) return;
		rt.footerFlags.set(FORCED_FLAG, "⚠ 2nd forced compaction");
		rt.notices.once(
			ctx,
			FORCED_FLAG,
			"a second forced compaction happened in this session. Consider /fold-handoff at your next finish line: a fresh session seeded from the index costs less than carrying this one on.",
			"warning",
		);
		rt.showFooter(ctx);
	};

	pi.on("session_start", (_event, ctx) => {
		liveForced = 0;
		try {
			checkForced(ctx);
		} catch {
			// Advisory only.
		}
	});

	pi.on("session_shutdown", () => writer.flush());

	pi.on("session_compact", (event, ctx) => {
		const e = event as { fromExtension?: boolean; reason?: string };
		// Our own compactions carry their reason in details; count Pi's (native) forced ones here.
		if (!e.fromExtension && (e.reason === "threshold" || e.reason === "overflow")) liveForced++;
		try {
			checkForced(ctx);
		} catch {
			// Advisory only.
		}
	});

	pi.on("session_before_compact", (event, ctx) => {
		if (rt.settings.compact !== "det") return undefined;
		const e = event as unknown as {
			reason?: string;
			customInstructions?: string;
			preparation: {
				firstKeptEntryId: string;
				tokensBefore: number;
				messagesToSummarize?: PiMessage[];
				turnPrefixMessages?: PiMessage[];
			};
		};
		const prep = e.preparation;
		const parentFile = ctx.sessionManager.getSessionFile() ?? null;
		const details: CompactDetails = { contextFold: { v: 1, ...(e.reason !== undefined && { reason: e.reason }) } };
		try {
			writer.flush();
			rt.sync(ctx);
			const dir = writer.dir(ctx);
			const removed = [...(prep.messagesToSummarize ?? []), ...(prep.turnPrefixMessages ?? [])];
			const view = buildView(removed, (m) => rt.state.lookup(m)).map((m) => withoutFolded(m, rt.state.index));
			const calls = toolCallsOf(removed);
			let index: ReturnType<typeof readSeedIndex>;
			try {
				index = readSeedIndex(dir);
			} catch (error) {
				rt.notices.once(
					ctx,
					"seed-read",
					`the seed index could not be read (${(error as Error).message}); summarizing from this compaction alone.`,
					"warning",
				);
				index = {
					path: seedIndexPath(dir),
					missing: true,
					records: [],
					invalid: 0,
					truncatedTail: false,
					problems: [],
				};
			}
			const record = extractSeedRecord({
				kind: "compaction",
				seq: index.records.length + 1,
				at: Date.now(),
				messages: view,
				calls,
				hash: sha256,
			});
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
			const records: SeedRecord[] = [...index.records, record];
			if (index.invalid > 0) {
				rt.notices.once(
					ctx,
					"seed-invalid",
					`${index.invalid} line(s) of ${index.path} could not be read; the summary is rendered from the valid records.`,
					"warning",
				);
			}
			const summary = compactionSummaryOf(records, {
				instructions: e.customInstructions,
				invalid: index.invalid,
				truncatedTail: index.truncatedTail,
				parentFile,
				hash: sha256,
			});
			if (details.contextFold) details.contextFold.records = records.length;
			return {
				compaction: { summary, firstKeptEntryId: prep.firstKeptEntryId, tokensBefore: prep.tokensBefore, details },
			};
		} catch (error) {
			// Still deterministic and still no model: a short summary that says what went wrong.
			rt.notices.once(
				ctx,
				"compact-fail",
				`the deterministic compaction summary failed (${(error as Error).message}); a minimal one was used.`,
				"warning",
			);
			const summary = renderCompactionSummary({
				instructions: e.customInstructions,
				rendered: "",
				records: 0,
				invalid: 0,
				parentFile,
			});
			return {
				compaction: { summary, firstKeptEntryId: prep.firstKeptEntryId, tokensBefore: prep.tokensBefore, details },
			};
		}
	});

	pi.registerCommand("fold-handoff", {
		description: "Write a seed for a fresh session (goal + deterministic index) and offer to start it",
		handler: async (args, ctx) => {
			await handoff(rt, writer, args, ctx);
		},
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
