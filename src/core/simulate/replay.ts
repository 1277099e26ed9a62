import type { PriceSchedule } from "../accounting.ts";
import type { Hash } from "../digest.ts";
import { addRecord, emptyIndex, type FrozenLayer, parseFoldRecord } from "../layers.ts";
import type { FoldPlan } from "../plan.ts";
import type { PiCompactionFacts } from "../policy/horizon.ts";
import { TOOLS_ENTRY_TYPE } from "../recall-tools.ts";
import { BranchReplay, FOLD_ENTRY_TYPE } from "../session/branch-state.ts";
import type { ParseTime } from "../session/entries.ts";
import type { PiEntry } from "../session/view.ts";
import { ViewCache } from "../session/view-cache.ts";
import type { Settings } from "../settings.ts";
import { NativeCompactor } from "./baseline.ts";
import { PI_COMPACTION_DEFAULTS, type PiCompactionSettings, ReplayCompactor } from "./compaction.ts";
import type { SummaryRequest } from "./native-summary.ts";
import { type ReplayState, replayRequest } from "./request.ts";
import type { PromptMeasure } from "./wire.ts";

export interface ReplayInput {
	/** The branch, root to leaf (see branchPath). */
	entries: readonly PiEntry[];
	settings: Settings;
	/** Context window of the model a request went to; undefined means unknown (the ladder then never folds). */
	windowFor(provider: string | undefined, model: string | undefined): number | undefined;
	hash: Hash;
	parseTime: ParseTime;
	/**
	 * Compaction in the folded arm: Pi's rule re-applied to the folded context (with Pi's default
	 * reserve and keep), or "recorded" to keep the session's own compactions. Default: the recorded
	 * ones for a session recorded with context-fold (they were decided on its folded context), Pi's
	 * rule otherwise.
	 */
	compaction?: PiCompactionSettings | "recorded";
	/**
	 * Pi's compaction settings as the user's Pi has them (the CLI reads its files), for the compaction
	 * ahead the fold rule weighs, as the extension weighs it; the replay's compaction settings (or Pi's
	 * defaults) when absent.
	 */
	piCompaction?: PiCompactionFacts;
	/** The session file, named in the deterministic compaction summary as the extension names it. */
	sessionFile?: string | null;
	/** The session's working directory (its header's), for the superseded rules' paths, as the extension passes it. */
	cwd?: string;
	/** The prices a request's model declares, as the extension would see them; null or absent: none (decided in tokens). */
	pricesFor?(provider: string | null, model: string | null): PriceSchedule | null;
	/** Prompt-cache lifetime in ms, for the cold-cache rule (default: Pi's short lifetime, 5 minutes). */
	cacheLifetimeMs?: number;
	/** How each request's messages are measured for the biller (wire.ts; default "content"). */
	measure?: PromptMeasure;
	/**
	 * Tokens of the system prompt and tools in the measure's units (`--overhead`); default: measured
	 * from the first response. Under a measure other than `content` the replayed responses report it.
	 */
	overhead?: number;
	/**
	 * Compaction in the arm without folding: the recorded ones, or Pi's rule re-applied and answered
	 * as native Pi answers it, with summary requests (baseline.ts). Default: recorded under the
	 * `content` measure; Pi's rule (Pi's default reserve and keep) under any other, whose reports the
	 * recorded compactions were not decided on.
	 */
	baseline?: PiCompactionSettings | "recorded";
}

export interface ReplayedFold {
	seq: number;
	reason: FrozenLayer["reason"];
	blocks: number;
	usageBefore: number;
	usageAfter: number;
	codes: string[];
}

export interface ReplayedRequest {
	/** 0-based position among the branch's requests. */
	index: number;
	/** The assistant entry that answered this request. */
	entryId: string;
	/** When it was sent (the response's timestamp), or null when the recording has none. */
	at: number | null;
	provider: string | null;
	model: string | null;
	stopReason: string | null;
	/**
	 * The response carries usage. Requests without (aborted or failed ones) were still sent, and a
	 * provider bills a prompt it processed: the biller bills every request, with no output for these.
	 */
	billed: boolean;
	/** Prompt tokens the provider reported (input + cache read + cache write); 0 without usage. */
	reported: number;
	output: number;
	/** Cost the recording states for this response, when it states one. */
	recordedCost: number | null;
	window: number | null;
	budget: number | null;
	/** The entry threshold in tokens that applied to this request. */
	threshold: number | null;
	state: FoldPlan["state"];
	/** Usage the ladder read, and where it came from. */
	usage: number;
	usageSource: FoldPlan["usage"]["source"];
	/** Blocks masked in this request and the tokens they save, this request's new layer included. */
	maskedBlocks: number;
	maskedTokens: number;
	fold: ReplayedFold | null;
	/** A compaction took effect since the previous request, in the recording. */
	compacted: boolean;
	/** The folded arm's request carried the recall tools (declared lazily under the priced rule). */
	toolsDeclared: boolean;
	/** The folded arm compacted (deterministically, by Pi's rule) just before this request. */
	armCompacted: boolean;
	/** The arm without folding compacted by Pi's rule just before this request (when it re-decides them). */
	baseCompacted: boolean;
	/**
	 * The summary requests native Pi sent for that compaction (native-summary.ts: the prompt by this
	 * replay's measure, the output assumed), billed apart from the request, with no prompt cache. Empty
	 * without a compaction, and when the arm keeps the recorded compactions.
	 */
	baseSummaries: SummaryRequest[];
	/** The request serialized per message, without folding and with this replay's folds. */
	baseParts: string[];
	foldedParts: string[];
}

export interface Replay {
	requests: ReplayedRequest[];
	/** Layers this replay committed, in order. */
	layers: FrozenLayer[];
	/** Layers recorded in the session (by the extension that ran), in order. */
	recordedLayers: FrozenLayer[];
	/** Recorded fold records that failed validation. */
	invalidRecords: number;
	/** Compactions the folded arm made by Pi's rule (0 when it keeps the recorded ones). */
	armCompactions: number;
	/** How the folded arm compacts. */
	compaction: PiCompactionSettings | "recorded";
	/** How the arm without folding compacts. */
	baseline: PiCompactionSettings | "recorded";
	/** The recording shows context-fold at work (its fold records, or calls to its tools). */
	recordedWithExtension: boolean;
	/** The recording declared the recall tools lazily (its TOOLS_ENTRY_TYPE note): its first requests went without them. */
	recordedToolsLazily: boolean;
	/** How the requests' parts were measured. */
	measure: PromptMeasure;
	/** The system prompt and tools as given (ReplayInput.overhead), if given. */
	overhead: number | undefined;
}

export function replaySession(input: ReplayInput): Replay {
	const recorded = new BranchReplay(input.parseTime);
	// A session recorded with context-fold already compacted on its folded context: keep those.
	const compaction = input.compaction ?? (madeWithContextFold(input.entries) ? "recorded" : PI_COMPACTION_DEFAULTS);
	// The folded arm's own context, unless it keeps the recorded compactions.
	const arm = compaction === "recorded" ? recorded : new BranchReplay(input.parseTime);
	const compactor =
		compaction === "recorded" ? null : new ReplayCompactor(compaction, input.hash, input.sessionFile ?? null);
	const index = emptyIndex();
	const measure = input.measure ?? "content";
	const baseline = input.baseline ?? (measure === "content" ? "recorded" : PI_COMPACTION_DEFAULTS);
	const c: ReplayState = {
		input,
		recorded,
		arm,
		compactor,
		index,
		simulatedUsage: new Map(),
		views: { recorded: new ViewCache(), arm: arm === recorded ? null : new ViewCache() },
		parts: { base: new WeakMap(), folded: new WeakMap(), calls: new WeakMap() },
		compactionSeen: null,
		tools: { declared: input.settings.fixedFolds, coldNext: false },
		overhead: null,
		baseline:
			baseline === "recorded"
				? null
				: {
						branch: new BranchReplay(input.parseTime),
						views: new ViewCache(),
						compactor: new NativeCompactor(baseline, measure),
						usage: new Map(),
					},
	};
	const requests: ReplayedRequest[] = [];

	for (const entry of input.entries) {
		if (entry.type === "custom" && entry.customType === FOLD_ENTRY_TYPE) {
			// The model's unfold calls are part of the history: they pin the same codes in the replay.
			const record = parseFoldRecord(entry.data);
			if (record?.type === "unfold") addRecord(index, record);
		}
		const m = entry.type === "message" ? entry.message : undefined;
		if (m?.role === "assistant") requests.push(replayRequest(c, entry, m, requests.length));
		recorded.consume(entry);
		if (arm !== recorded && entry.type !== "compaction") arm.consume(entry);
		if (c.baseline !== null && entry.type !== "compaction") c.baseline.branch.consume(entry);
	}
	return {
		requests,
		layers: index.layers,
		recordedLayers: recorded.index.layers,
		invalidRecords: recorded.invalidRecords,
		armCompactions: compactor?.count ?? 0,
		compaction,
		recordedWithExtension: madeWithContextFold(input.entries) || recorded.recallCalls.size > 0,
		recordedToolsLazily: input.entries.some((e) => e.type === "custom" && e.customType === TOOLS_ENTRY_TYPE),
		measure,
		overhead: input.overhead,
		baseline,
	};
}

/** The recording shows context-fold at work: its fold records, or a compaction it answered. */
export function madeWithContextFold(entries: readonly PiEntry[]): boolean {
	return entries.some(
		(e) =>
			(e.type === "custom" && e.customType === FOLD_ENTRY_TYPE) ||
			(e.type === "compaction" && (e.details as { contextFold?: unknown } | undefined)?.contextFold !== undefined),
	);
}
