/**
 * Replays a recorded branch through the fold ladder, offline: before every recorded response, the
 * context Pi would have sent is rebuilt, mapped to the core's view the way the extension maps it,
 * and planned with the real planFold against the layers this replay committed so far, exactly as
 * the extension does request by request. So the fold events of a replay are the extension's.
 *
 * What the recording cannot say is what the provider would have reported under different folds; the
 * usage the ladder reads is the recorded one, corrected by the difference between the tokens the
 * recorded folds removed and the tokens this replay's folds remove. Where the two agree (a session
 * recorded with context-fold and the same settings) the correction is zero and the replay is exact.
 */
import { promptOf } from "../accounting.ts";
import { serializeMessage } from "../billing.ts";
import { blockKey, type ViewMessage, type ViewUsage } from "../blocks.ts";
import type { Hash } from "../digest.ts";
import { addRecord, emptyIndex, type FrozenLayer, type MaskIndex, parseFoldRecord } from "../layers.ts";
import { type FoldPlan, planFold } from "../plan.ts";
import type { ParseTime } from "../session/entries.ts";
import { BranchReplay, FOLD_ENTRY_TYPE } from "../session/replay.ts";
import { buildView, messageKey, type PiEntry, type PiMessage, ViewCache } from "../session/view.ts";
import type { Settings } from "../settings.ts";
import { thinkingPolicyFor } from "../thinking-policy.ts";
import { estimateTokens } from "../tokens.ts";

export interface ReplayInput {
	/** The branch, root to leaf (see branchPath). */
	entries: readonly PiEntry[];
	settings: Settings;
	/** Context window of the model a request went to; undefined means unknown (the ladder then never folds). */
	windowFor(provider: string | undefined, model: string | undefined): number | undefined;
	hash: Hash;
	parseTime: ParseTime;
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
	/** The response carries usage, so the provider billed the request. */
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
	/** A compaction took effect since the previous request. */
	compacted: boolean;
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
}

export function replaySession(input: ReplayInput): Replay {
	const branch = new BranchReplay(input.parseTime);
	const index = emptyIndex();
	const simulatedUsage = new Map<string, ViewUsage>();
	const views = new ViewCache();
	const parts: SerializationCache = { base: new WeakMap(), folded: new WeakMap(), keys: new WeakMap() };
	const requests: ReplayedRequest[] = [];
	let compactionSeen: PiEntry | null = null;

	for (const entry of input.entries) {
		if (entry.type === "custom" && entry.customType === FOLD_ENTRY_TYPE) {
			// The model's unfold calls are part of the history: they pin the same codes in the replay.
			const record = parseFoldRecord(entry.data);
			if (record?.type === "unfold") addRecord(index, record);
		}
		const m = entry.type === "message" ? entry.message : undefined;
		if (m?.role === "assistant") {
			const compacted = branch.context.latestCompaction !== compactionSeen;
			compactionSeen = branch.context.latestCompaction;
			requests.push(
				replayRequest({ input, branch, index, simulatedUsage, views, parts, entry, m, compacted, n: requests.length }),
			);
		}
		branch.consume(entry);
	}
	return { requests, layers: index.layers, recordedLayers: branch.index.layers, invalidRecords: branch.invalidRecords };
}

interface RequestContext {
	input: ReplayInput;
	branch: BranchReplay;
	index: MaskIndex;
	simulatedUsage: Map<string, ViewUsage>;
	views: ViewCache;
	parts: SerializationCache;
	entry: PiEntry;
	m: PiMessage;
	compacted: boolean;
	n: number;
}

function replayRequest(c: RequestContext): ReplayedRequest {
	const { input, branch, index, m } = c;
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
	const view = buildView(branch.context.messages, lookup, undefined, c.views);
	for (const v of view) {
		if (v.role !== "assistant" || v.entryId === null) continue;
		const u = c.simulatedUsage.get(v.entryId);
		if (u !== undefined) v.usage = u;
	}
	const provider = typeof m.provider === "string" ? m.provider : null;
	const model = typeof m.model === "string" ? m.model : null;
	const window = input.windowFor(provider ?? undefined, model ?? undefined);
	const plan = planFold({
		messages: view,
		index,
		settings: input.settings,
		window,
		everCacheRead: branch.everCacheRead,
		hash: input.hash,
		thinking: thinkingPolicyFor(typeof m.api === "string" ? m.api : undefined),
	});
	if (plan.layer !== null) addRecord(index, plan.layer);

	const ok = m.stopReason !== "error" && m.stopReason !== "aborted";
	const usage = m.usage ?? {};
	const recorded = {
		input: num(usage.input),
		output: num(usage.output),
		cacheRead: num(usage.cacheRead),
		cacheWrite: num(usage.cacheWrite),
	};
	const reported = ok ? promptOf(recorded) : 0;
	if (reported > 0) {
		// What the provider would have reported under this replay's folds instead of the recorded ones.
		const corrected = reported + frozenSavings(view, branch.index) - plan.maskedTokens;
		c.simulatedUsage.set(c.entry.id, {
			input: Math.max(0, corrected),
			output: recorded.output,
			cacheRead: 0,
			cacheWrite: 0,
		});
	}

	const replaced = new Map<number, Map<number, string>>();
	for (const s of plan.substitutions) {
		const blocks = replaced.get(s.messageIndex) ?? new Map<number, string>();
		blocks.set(s.blockIndex, s.text);
		replaced.set(s.messageIndex, blocks);
	}
	const baseParts: string[] = new Array(view.length);
	const foldedParts: string[] = new Array(view.length);
	for (let i = 0; i < view.length; i++) {
		const v = view[i] as ViewMessage;
		// Views of unchanged messages are the same objects from request to request (ViewCache), so
		// their serializations are cached by identity and compare by reference in the biller.
		let base = c.parts.base.get(v);
		if (base === undefined) {
			base = serializeMessage(v);
			c.parts.base.set(v, base);
		}
		baseParts[i] = base;
		const blocks = replaced.get(i);
		if (blocks === undefined) {
			foldedParts[i] = base;
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
		foldedParts[i] = folded;
	}

	const at = typeof m.timestamp === "number" ? m.timestamp : null;
	const cost = (usage as { cost?: { total?: unknown } }).cost?.total;
	const g = plan.geometry;
	return {
		index: c.n,
		entryId: c.entry.id,
		at,
		provider,
		model,
		stopReason: typeof m.stopReason === "string" ? m.stopReason : null,
		billed: reported > 0,
		reported,
		output: recorded.output,
		recordedCost: typeof cost === "number" && Number.isFinite(cost) ? cost : null,
		window: window ?? null,
		budget: g?.budget ?? null,
		threshold: g?.threshold ?? null,
		state: plan.state,
		usage: plan.usage.tokens,
		usageSource: plan.usage.source,
		maskedBlocks: plan.maskedBlocks,
		maskedTokens: plan.maskedTokens,
		fold:
			plan.layer === null
				? null
				: {
						seq: plan.layer.seq,
						reason: plan.layer.reason,
						blocks: plan.layer.blocks.length,
						usageBefore: plan.layer.usageBefore,
						usageAfter: plan.layer.usageAfter,
						codes: plan.layer.blocks.map((b) => b.code),
					},
		compacted: c.compacted,
		baseParts,
		foldedParts,
	};
}

/** Tokens the masks of `index` take out of this view: the same arithmetic planFold applies to frozen layers. */
export function frozenSavings(view: readonly ViewMessage[], index: MaskIndex): number {
	if (index.byKey.size === 0) return 0;
	let saved = 0;
	for (const m of view) {
		if (m.entryId === null) continue;
		for (let j = 0; j < m.blocks.length; j++) {
			const b = m.blocks[j];
			if (b === undefined || (b.kind !== "text" && b.kind !== "thinking")) continue;
			const masked = index.byKey.get(blockKey(m.entryId, j));
			if (masked === undefined || masked.chars !== b.text.length) continue;
			const fits =
				masked.kind === "toolResult"
					? m.role === "toolResult" && b.kind === "text"
					: m.role === "assistant" && b.kind === "thinking";
			if (fits) saved += Math.max(0, masked.tokens - estimateTokens(masked.digest.length));
		}
	}
	return saved;
}

interface SerializationCache {
	base: WeakMap<ViewMessage, string>;
	/** Per view, its serializations with substitutions, by which blocks were replaced with what. */
	folded: WeakMap<ViewMessage, Map<string, string>>;
	keys: WeakMap<PiMessage, string>;
}

function num(v: unknown): number {
	return typeof v === "number" && Number.isFinite(v) && v > 0 ? v : 0;
}
