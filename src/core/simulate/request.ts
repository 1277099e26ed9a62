/**
 * One recorded request replayed: the recorded context and the folded arm's context as views, the arm
 * planned with the extension's planFold (after a deterministic compaction when Pi's rule calls for
 * one), the usage the arm's provider would have reported (reported-usage.ts), and both requests
 * serialized for the biller.
 */

import { messageTokens, type ViewMessage } from "../blocks.ts";
import { cacheLifetimeMs, coldForRequest } from "../cache-life.ts";
import { earlyCompaction } from "../early-compaction.ts";
import { addRecord, type FrozenLayer, layerMasks, type MaskIndex } from "../layers.ts";
import { type FoldPlan, planFold } from "../plan.ts";
import type { PiCompactionFacts } from "../policy/horizon.ts";
import type { ColdReason } from "../policy/price.ts";
import { RECALL_TOOLS_TOKENS } from "../recall-tools.ts";
import { type BranchReplay, modelKey } from "../session/branch-state.ts";
import { buildView, type PiEntry, type PiMessage } from "../session/view.ts";
import type { ViewCache } from "../session/view-cache.ts";
import { thinkingPolicyFor } from "../thinking-policy.ts";
import type { Usage } from "../tokens.ts";
import { type BaselineArm, baselineContext } from "./baseline.ts";
import { PI_COMPACTION_DEFAULTS, type ReplayCompactor } from "./compaction.ts";
import type { ReplayedFold, ReplayedRequest, ReplayInput } from "./replay.ts";
import { armUsage, contentUsage, measuredUsage, recordedUsageOf } from "./reported-usage.ts";
import { type SerializationCache, serializeView } from "./serialize.ts";

export interface ReplayState {
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
	/**
	 * The recall tools in the folded arm, as the extension declares them: from the start under the
	 * fixed ladder; under the priced rule from the request after a plan wants them, and that request
	 * rewrites the whole prefix (the declaration rebuilds the system prompt: Pi 0.80.6, and 1.6.0 but
	 * for Anthropic models that take tool changes mid-conversation), so it is cold.
	 */
	tools: { declared: boolean; coldNext: boolean };
	/** System prompt and tools in the measure's tokens, once known (measures other than `content`). */
	overhead: number | null;
	/** The arm without folding when it re-decides Pi's compaction (baseline.ts); null: the recording. */
	baseline: BaselineArm | null;
}

/** A branch's view; `usage`: what its responses report instead of the recorded usage (default: the folded arm's, for it). */
function viewOf(
	c: ReplayState,
	branch: BranchReplay,
	cache: ViewCache,
	usage = branch === c.arm ? c.simulatedUsage : undefined,
): ViewMessage[] {
	const lookup = (x: PiMessage) => branch.lookup(x);
	const view = buildView(branch.context.messages, lookup, undefined, cache);
	if (usage !== undefined) {
		for (const v of view) {
			if (v.role !== "assistant" || v.entryId === null) continue;
			const u = usage.get(v.entryId);
			if (u !== undefined) v.usage = u;
		}
	}
	return view;
}

export function replayRequest(c: ReplayState, entry: PiEntry, m: PiMessage, n: number): ReplayedRequest {
	const compacted = c.recorded.context.latestCompaction !== c.compactionSeen;
	c.compactionSeen = c.recorded.context.latestCompaction;
	const recordedView = viewOf(c, c.recorded, c.views.recorded);
	const target = targetOf(c.input, m);
	const b = c.baseline;
	const base =
		b === null
			? { view: recordedView, compacted: false, summaries: [] }
			: baselineContext(b, target.window, () => viewOf(c, b.branch, b.views, b.usage));
	const toolsDeclared = c.tools.declared;
	const { plan: p, view: armView, armCompacted } = planArm(c, recordedView, target);
	c.tools.coldNext = false;
	if (!toolsDeclared && p.toolsWanted !== null) c.tools = { declared: true, coldNext: true };
	const recorded = recordedUsageOf(m);
	const measure = c.input.measure ?? "content";
	const baseParts = serializeView(c.parts, base.view, null, measure);
	const foldedParts = serializeView(c.parts, armView, p.substitutions, measure);
	if (recorded.prompt > 0) {
		const usage =
			measure === "content"
				? armUsage(c, recordedView, armView, p, recorded)
				: measuredUsage(c, recorded, baseParts, foldedParts, toolsDeclared ? RECALL_TOOLS_TOKENS : 0);
		c.simulatedUsage.set(entry.id, usage);
		if (b !== null) {
			const own =
				measure === "content"
					? { ...recorded.usage, input: contentUsage(recorded, recordedView, base.view) }
					: measuredUsage(c, recorded, baseParts, baseParts, 0);
			b.usage.set(entry.id, { ...own, cacheRead: 0, cacheWrite: 0 });
		}
	}
	const g = p.geometry;
	return {
		index: n,
		entryId: entry.id,
		at: target.at,
		provider: target.provider,
		model: target.model,
		stopReason: typeof m.stopReason === "string" ? m.stopReason : null,
		billed: recorded.prompt > 0,
		reported: recorded.prompt,
		output: recorded.usage.output,
		recordedCost: recorded.cost,
		window: target.window ?? null,
		budget: g?.budget ?? null,
		threshold: p.fixed?.threshold ?? null,
		state: p.state,
		usage: p.usage.tokens,
		usageSource: p.usage.source,
		maskedBlocks: p.maskedBlocks,
		maskedTokens: p.maskedTokens,
		fold: p.layer === null ? null : foldOf(p.layer),
		compacted,
		armCompacted,
		baseCompacted: base.compacted,
		baseSummaries: base.summaries,
		toolsDeclared,
		baseParts,
		foldedParts,
	};
}

/** Where a recorded request went: provider, model, its window, when it was sent, its API. */
interface Target {
	provider: string | null;
	model: string | null;
	window: number | undefined;
	at: number | null;
	api: string | undefined;
}

function targetOf(input: ReplayInput, m: PiMessage): Target {
	const provider = typeof m.provider === "string" ? m.provider : null;
	const model = typeof m.model === "string" ? m.model : null;
	return {
		provider,
		model,
		window: input.windowFor(provider ?? undefined, model ?? undefined),
		at: typeof m.timestamp === "number" ? m.timestamp : null,
		api: typeof m.api === "string" ? m.api : undefined,
	};
}

/**
 * The folded arm's request: planned with the extension's planFold against this replay's layers, after
 * a deterministic compaction when Pi's rule says one is due; a new layer is committed and indexed.
 */
function planArm(
	c: ReplayState,
	baseView: ViewMessage[],
	target: Target,
): { plan: FoldPlan; view: ViewMessage[]; armCompacted: boolean } {
	const { arm, index } = c;
	const plan = (view: readonly ViewMessage[]) =>
		planFold({
			messages: view,
			index,
			settings: c.input.settings,
			window: target.window,
			everCacheRead: c.recorded.everCacheRead,
			hash: c.input.hash,
			thinking: thinkingPolicyFor(target.api),
			// As the extension does: no input folds for a model whose provider refused them.
			inputs: !c.recorded.inputsRefused.has(modelKey(target.provider, target.model)),
			...(c.input.cwd !== undefined && { cwd: c.input.cwd }),
			prices: c.input.pricesFor?.(target.provider, target.model) ?? null,
			...compactionFacts(c),
			cold: c.tools.coldNext ? "tools" : coldOf(c, target),
			...(!c.tools.declared && {
				tools: { declared: false as const, rebuildsPrefix: true, tokens: RECALL_TOOLS_TOKENS },
			}),
		});
	let view = c.views.arm === null ? baseView : viewOf(c, arm, c.views.arm);
	let p = plan(view);
	let armCompacted = false;
	if (c.compactor !== null && c.views.arm !== null) {
		const due = c.compactor.due(p.usage.tokens - newInputTokens(view), target.window);
		// Pi compacts before this request; or context-fold did, between runs, by the priced rule.
		// Either way it answers with the seed index (no model call).
		const early = due ? null : earlyCut(c, view, target);
		if (due || early !== null) {
			const compaction = c.compactor.compact(
				early?.messages ?? arm.context.messages,
				early?.view ?? view,
				index,
				arm.lastResponseAt + 1,
				early?.tokens ?? p.usage.tokens,
				early === null ? "threshold" : "early",
			);
			if (compaction !== null) {
				arm.consume(compaction);
				view = viewOf(c, arm, c.views.arm);
				p = plan(view);
				armCompacted = true;
			}
		}
	}
	if (p.layer !== null) {
		addRecord(index, p.layer);
		c.compactor?.onFold(p.layer, index.layers.at(-2), target.at ?? arm.lastResponseAt, view);
	}
	return { plan: p, view, armCompacted };
}

/**
 * The early compaction the extension decides between runs (at Pi's agent_settled), asked the same
 * way (core/early-compaction.ts): at the first request of a run, on the context as it stood when the
 * previous run ended (every message after its last response is the new run's input), planned as the
 * extension previews it, judged cold or warm at that moment. The compaction it makes keeps that
 * context's recent messages; the new input follows them. Null: no early compaction.
 */
function earlyCut(
	c: ReplayState,
	view: readonly ViewMessage[],
	target: Target,
): { messages: PiMessage[]; view: ViewMessage[]; tokens: number } | null {
	const settings = c.input.settings;
	if (settings.compact !== "det" || settings.earlyCompact !== "priced" || settings.fixedFolds) return null;
	const messages = c.arm.context.messages;
	let last = messages.length - 1;
	while (last >= 0 && (messages[last] as PiMessage).role !== "assistant") last--;
	// Mid-run (a tool result follows the last response), or no run before: nothing to decide.
	if (last < 0 || last === messages.length - 1) return null;
	// A run the user aborted: Pi 1.6.0 says so at agent_settled, and the extension decides nothing then.
	if ((messages[last] as PiMessage).stopReason === "aborted") return null;
	for (let i = last + 1; i < messages.length; i++) if ((messages[i] as PiMessage).role === "toolResult") return null;
	const settled = { messages: messages.slice(0, last + 1), view: view.slice(0, last + 1) };
	const inputs = !c.recorded.inputsRefused.has(modelKey(target.provider, target.model));
	const thinking = thinkingPolicyFor(target.api);
	const preview = planFold({
		messages: settled.view,
		index: c.index,
		settings,
		window: target.window,
		everCacheRead: c.recorded.everCacheRead,
		hash: c.input.hash,
		thinking,
		inputs,
		...(c.input.cwd !== undefined && { cwd: c.input.cwd }),
		prices: c.input.pricesFor?.(target.provider, target.model) ?? null,
		...compactionFacts(c),
		cold: coldForRequest({
			messages: settled.messages,
			warmAt: c.arm.lastWarmAt,
			now: c.arm.lastResponseAt,
			lifetimeMs: c.input.cacheLifetimeMs ?? cacheLifetimeMs(undefined, null),
			provider: target.provider,
			model: target.model,
		}),
	});
	const early = earlyCompaction({
		plan: preview,
		messages: settled.messages,
		view: settled.view,
		index: c.index,
		thinking,
		inputs,
		pi: c.compactor?.settings ?? PI_COMPACTION_DEFAULTS,
	});
	return early?.decision.fire === true ? { ...settled, tokens: preview.usage.tokens } : null;
}

/** The cold-cache rule on the arm's own context, judged at the recorded request time (core/cache-life.ts). */
function coldOf(c: ReplayState, target: Target): ColdReason | null {
	return coldForRequest({
		messages: c.arm.context.messages,
		warmAt: c.arm.lastWarmAt,
		now: target.at,
		lifetimeMs: c.input.cacheLifetimeMs ?? cacheLifetimeMs(undefined, null),
		provider: target.provider,
		model: target.model,
	});
}

function foldOf(layer: FrozenLayer): ReplayedFold {
	const masks = layerMasks(layer);
	return {
		seq: layer.seq,
		reason: layer.reason,
		blocks: masks.length,
		usageBefore: layer.usageBefore,
		usageAfter: layer.usageAfter,
		codes: masks.map((b) => b.code),
	};
}

/** Pi's compaction settings the fold rule weighs, as the extension had them (see ReplayInput.piCompaction). */
function compactionFacts(c: ReplayState): { compaction?: PiCompactionFacts } {
	if (c.input.piCompaction !== undefined) return { compaction: c.input.piCompaction };
	return c.compactor === null ? {} : { compaction: { enabled: true, ...c.compactor.settings } };
}

/**
 * The input a run starts with (the messages after the newest response, when none is a tool result):
 * Pi checks its threshold before a new prompt on the context as the last run left it, without it.
 */
function newInputTokens(view: readonly ViewMessage[]): number {
	let tokens = 0;
	for (let i = view.length - 1; i >= 0; i--) {
		const m = view[i] as ViewMessage;
		if (m.role === "assistant") return tokens;
		if (m.role === "toolResult") return 0;
		tokens += messageTokens(m);
	}
	return 0;
}
