/**
 * Replays a recorded branch through the fold ladder, offline: before every recorded response, the
 * context Pi would have sent is rebuilt, mapped to the core's view the way the extension maps it,
 * and planned with the real planFold against the layers this replay committed so far, exactly as
 * the extension does request by request. So the fold events of a replay are the extension's.
 *
 * What the recording cannot say is what the provider would have reported under different folds; the
 * usage the ladder reads is the recorded one, corrected by the difference between the tokens the
 * recording sent and the tokens this replay sends. Where the two agree (a session recorded with
 * context-fold and the same settings) the correction is zero and the replay is exact.
 *
 * Two contexts are kept. The baseline is the recorded one, compactions included. The folded arm
 * re-decides compaction by Pi's own rule (see compaction.ts): folding keeps the context smaller, so a
 * recorded compaction may never have happened with context-fold, and one may come later instead.
 * With `compaction: "recorded"` the folded arm keeps the recorded compactions (one shared context).
 */
import { promptOf } from "../accounting.ts";
import { serializeMessage } from "../billing.ts";
import { isSuccessfulResponse, type ViewMessage, viewTokens } from "../blocks.ts";
import type { Hash } from "../digest.ts";
import { addRecord, emptyIndex, type FrozenLayer, type MaskIndex, parseFoldRecord } from "../layers.ts";
import { applyFrozenLayers, type FoldPlan, planFold } from "../plan.ts";
import { BranchReplay, FOLD_ENTRY_TYPE } from "../session/branch-state.ts";
import type { ParseTime } from "../session/entries.ts";
import { buildView, messageKey, type PiEntry, type PiMessage, ViewCache } from "../session/view.ts";
import type { Settings } from "../settings.ts";
import { thinkingPolicyFor } from "../thinking-policy.ts";
import type { Usage } from "../tokens.ts";
import { nonNegativeOr0 } from "../values.ts";
import { PI_COMPACTION_DEFAULTS, type PiCompactionSettings, ReplayCompactor } from "./compaction.ts";

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
	/** The session file, named in the deterministic compaction summary as the extension names it. */
	sessionFile?: string | null;
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
	/** The folded arm compacted (deterministically, by Pi's rule) just before this request. */
	armCompacted: boolean;
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
	/** The recording shows context-fold at work (its fold records, or calls to its tools). */
	recordedWithExtension: boolean;
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
	const c: ReplayState = {
		input,
		recorded,
		arm,
		compactor,
		index,
		simulatedUsage: new Map(),
		views: { recorded: new ViewCache(), arm: arm === recorded ? null : new ViewCache() },
		parts: { base: new WeakMap(), folded: new WeakMap(), keys: new WeakMap() },
		compactionSeen: null,
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
	}
	return {
		requests,
		layers: index.layers,
		recordedLayers: recorded.index.layers,
		invalidRecords: recorded.invalidRecords,
		armCompactions: compactor?.count ?? 0,
		compaction,
		recordedWithExtension: madeWithContextFold(input.entries) || recorded.recallCalls.size > 0,
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

interface ReplayState {
	input: ReplayInput;
	/** The context as recorded (the baseline). */
	recorded: BranchReplay;
	/** The folded arm's context: the recorded one, or its own with re-decided compactions. */
	arm: BranchReplay;
	compactor: ReplayCompactor | null;
	index: MaskIndex;
	/** Usage the folded arm's responses would have reported, by entry id. */
	simulatedUsage: Map<string, Usage>;
	views: { recorded: ViewCache; arm: ViewCache | null };
	parts: SerializationCache;
	compactionSeen: PiEntry | null;
}

function viewOf(c: ReplayState, branch: BranchReplay, cache: ViewCache): ViewMessage[] {
	const keys = c.parts.keys;
	const lookup = (x: PiMessage) => {
		// Messages persist across requests: build each one's lookup key once.
		let key = keys.get(x);
		if (key === undefined) {
			key = messageKey(x);
			keys.set(x, key);
		}
		return branch.lookupKey(key);
	};
	const view = buildView(branch.context.messages, lookup, undefined, cache);
	if (branch === c.arm) {
		for (const v of view) {
			if (v.role !== "assistant" || v.entryId === null) continue;
			const u = c.simulatedUsage.get(v.entryId);
			if (u !== undefined) v.usage = u;
		}
	}
	return view;
}

function replayRequest(c: ReplayState, entry: PiEntry, m: PiMessage, n: number): ReplayedRequest {
	const { input, recorded, arm, index } = c;
	const compacted = recorded.context.latestCompaction !== c.compactionSeen;
	c.compactionSeen = recorded.context.latestCompaction;
	const baseView = viewOf(c, recorded, c.views.recorded);
	let armView = c.views.arm === null ? baseView : viewOf(c, arm, c.views.arm);

	const provider = typeof m.provider === "string" ? m.provider : null;
	const model = typeof m.model === "string" ? m.model : null;
	const window = input.windowFor(provider ?? undefined, model ?? undefined);
	const at = typeof m.timestamp === "number" ? m.timestamp : null;
	const plan = (view: readonly ViewMessage[]) =>
		planFold({
			messages: view,
			index,
			settings: input.settings,
			window,
			everCacheRead: recorded.everCacheRead,
			hash: input.hash,
			thinking: thinkingPolicyFor(typeof m.api === "string" ? m.api : undefined),
		});
	let p = plan(armView);
	let armCompacted = false;
	if (c.compactor !== null && c.views.arm !== null && c.compactor.due(p.usage.tokens, window)) {
		// Pi compacts before this request; context-fold answers with the seed index (no model call).
		const last = arm.lastResponseAt;
		const compaction = c.compactor.compact(arm.context.messages, armView, index, last + 1, p.usage.tokens);
		if (compaction !== null) {
			arm.consume(compaction);
			armView = viewOf(c, arm, c.views.arm);
			p = plan(armView);
			armCompacted = true;
		}
	}
	if (p.layer !== null) {
		addRecord(index, p.layer);
		c.compactor?.onFold(p.layer, index.layers.at(-2), at ?? arm.lastResponseAt, armView, arm.context.messages);
	}

	const ok = isSuccessfulResponse(m);
	const usage = m.usage ?? {};
	const recordedUsage = {
		input: nonNegativeOr0(usage.input),
		output: nonNegativeOr0(usage.output),
		cacheRead: nonNegativeOr0(usage.cacheRead),
		cacheWrite: nonNegativeOr0(usage.cacheWrite),
	};
	const reported = ok ? promptOf(recordedUsage) : 0;
	if (reported > 0) {
		// What the provider would have reported for the folded arm's request instead of the recorded one:
		// the recorded report, moved by the difference between what each sent.
		const contexts = armView === baseView ? 0 : viewTokens(armView) - viewTokens(baseView);
		const recordedMasks =
			recorded.index.byKey.size === 0 ? 0 : applyFrozenLayers(baseView, recorded.index, "unsigned-only").maskedTokens;
		const masks = recordedMasks - p.maskedTokens;
		c.simulatedUsage.set(entry.id, {
			input: Math.max(0, reported + contexts + masks),
			output: recordedUsage.output,
			cacheRead: 0,
			cacheWrite: 0,
		});
	}

	const baseParts = serializeView(c, baseView, null);
	const foldedParts = serializeView(c, armView, p.substitutions);
	const cost = (usage as { cost?: { total?: unknown } }).cost?.total;
	const g = p.geometry;
	return {
		index: n,
		entryId: entry.id,
		at,
		provider,
		model,
		stopReason: typeof m.stopReason === "string" ? m.stopReason : null,
		billed: reported > 0,
		reported,
		output: recordedUsage.output,
		recordedCost: typeof cost === "number" && Number.isFinite(cost) ? cost : null,
		window: window ?? null,
		budget: g?.budget ?? null,
		threshold: g?.threshold ?? null,
		state: p.state,
		usage: p.usage.tokens,
		usageSource: p.usage.source,
		maskedBlocks: p.maskedBlocks,
		maskedTokens: p.maskedTokens,
		fold:
			p.layer === null
				? null
				: {
						seq: p.layer.seq,
						reason: p.layer.reason,
						blocks: p.layer.blocks.length,
						usageBefore: p.layer.usageBefore,
						usageAfter: p.layer.usageAfter,
						codes: p.layer.blocks.map((b) => b.code),
					},
		compacted,
		armCompacted,
		baseParts,
		foldedParts,
	};
}

/** The request serialized per message, with the plan's substitutions when given. */
function serializeView(
	c: ReplayState,
	view: readonly ViewMessage[],
	substitutions: FoldPlan["substitutions"] | null,
): string[] {
	const replaced = new Map<number, Map<number, string>>();
	for (const s of substitutions ?? []) {
		const blocks = replaced.get(s.messageIndex) ?? new Map<number, string>();
		blocks.set(s.blockIndex, s.text);
		replaced.set(s.messageIndex, blocks);
	}
	const parts: string[] = new Array(view.length);
	for (let i = 0; i < view.length; i++) {
		const v = view[i] as ViewMessage;
		// Views of unchanged messages are the same objects from request to request (ViewCache), so
		// their serializations are cached by identity and compare by reference in the biller.
		let base = c.parts.base.get(v);
		if (base === undefined) {
			base = serializeMessage(v);
			c.parts.base.set(v, base);
		}
		const blocks = replaced.get(i);
		if (blocks === undefined) {
			parts[i] = base;
			continue;
		}
		const variant = [...blocks].map(([j, text]) => `${j}:${text.length}:${text.slice(0, 16)}`).join("|");
		let variants = c.parts.folded.get(v);
		if (variants === undefined) {
			variants = new Map();
			c.parts.folded.set(v, variants);
		}
		let folded = variants.get(variant);
		if (folded === undefined) {
			folded = serializeMessage(v, blocks);
			variants.set(variant, folded);
		}
		parts[i] = folded;
	}
	return parts;
}

interface SerializationCache {
	base: WeakMap<ViewMessage, string>;
	/** Per view, its serializations with substitutions, by which blocks were replaced with what. */
	folded: WeakMap<ViewMessage, Map<string, string>>;
	keys: WeakMap<PiMessage, string>;
}
