/**
 * Early compaction in Pi (policy/compact.ts decides, core/early-compaction.ts reads the branch): when
 * a run has ended with the context over the budget and nothing left to fold, and the rent paid since
 * covers the rewrite, compact now, from the seed index, instead of waiting for Pi's threshold.
 *
 * Asked at `agent_settled`, not `agent_end`: after `agent_end` Pi may still retry, compact at its
 * threshold, or run queued follow-ups, and `ctx.compact()` aborts the agent first, which would cancel
 * them. At `agent_settled` Pi does nothing more on its own, so no turn is interrupted. Only with
 * CONTEXTFOLD_COMPACT=det, where our `session_before_compact` answer makes it a deterministic
 * compaction (never a model call), and never while Pi's own compaction is disabled in its settings.
 * Fails open: an error costs this decision only.
 */
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import { earlyCompaction } from "../../core/early-compaction.ts";
import { earlyRecord } from "../../core/policy/compact.ts";
import { modelKey } from "../../core/session/branch-state.ts";
import { contextOf, previewPlan } from "../../core/session/preview.ts";
import { buildView } from "../../core/session/view.ts";
import { thinkingPolicyFor } from "../../core/thinking-policy.ts";
import { formatTokens } from "../../core/tokens.ts";
import { sha256 } from "../../store/hash.ts";
import { type Runtime, sessionCwd } from "./runtime.ts";
import { branchOf } from "./state.ts";

export function registerEarlyCompaction(rt: Runtime): void {
	rt.pi.on("agent_settled", (event, ctx) => {
		// Read Pi's settings again from here on: the user may edit them before the next run.
		rt.piCompaction.forget();
		if ((event as { aborted?: boolean }).aborted === true) return;
		try {
			compactIfPriced(rt, ctx);
		} catch (error) {
			rt.early.pending = null;
			rt.notices.once(
				ctx,
				`early-compact:${(error as Error).message}`,
				`the early-compaction check failed (${(error as Error).message}); nothing was compacted, and Pi's own compaction still applies.`,
				"warning",
			);
		}
	});
}

function compactIfPriced(rt: Runtime, ctx: ExtensionContext): void {
	const s = rt.settings;
	if (s.compact !== "det" || s.earlyCompact !== "priced" || s.fixedFolds || rt.early.pending !== null) return;
	// Cheap gate first: a context within the budget (Pi's own measure: the newest response's prompt
	// and output, plus what came after) needs no walk over the branch.
	const budget = rt.lastOutcome?.plan.geometry?.budget;
	const tokens = ctx.getContextUsage()?.tokens;
	if (budget === undefined || (typeof tokens === "number" && tokens <= budget)) {
		rt.early.last = null;
		return;
	}
	const model = ctx.model;
	const pi = rt.piCompaction.of(ctx);
	if (!pi.enabled || !rt.sync(ctx)) return;
	const messages = contextOf(branchOf(ctx.sessionManager), (iso) => Date.parse(iso));
	const branch = rt.state.branch;
	const view = buildView(messages, (m) => branch.lookup(m));
	const inputs = !branch.inputsRefused.has(modelKey(model?.provider, model?.id));
	const plan = previewPlan({
		messages,
		branch,
		settings: s,
		window: model?.contextWindow,
		api: model?.api,
		model: modelKey(model?.provider, model?.id),
		cwd: sessionCwd(ctx),
		prices: rt.pricesOf(ctx),
		cold: rt.coldFor(ctx, messages),
		compaction: pi,
		hash: sha256,
	});
	const early = earlyCompaction({
		plan,
		messages,
		view,
		index: rt.state.index,
		thinking: thinkingPolicyFor(model?.api),
		inputs,
		pi,
	});
	const decision = early?.decision ?? null;
	rt.early.last = decision;
	if (decision === null || !decision.fire) return;
	const record = earlyRecord(decision, plan.pricing.cold, plan.pricing.rates.basis);
	rt.early.pending = record;
	const why =
		decision.reason === "cold"
			? "the cache is cold, so the rewrite costs nothing extra"
			: `the rent paid since (~${formatTokens(decision.rent)} tok) covers the rewrite (~${formatTokens(decision.rewrite)})`;
	ctx.compact({
		onComplete: () => {
			rt.early.pending = null;
			rt.early.last = null;
			rt.notices.say(
				ctx,
				`compacted early, from the seed index with no model call: the context was over the budget with no fold due (~${formatTokens(decision.context)} → ~${formatTokens(decision.kept)} tok), and ${why}. Older messages are summarized by the index; recall_folded still returns every folded block and searches the originals.`,
				"info",
			);
			rt.showFooter(ctx);
		},
		onError: (error: Error) => {
			rt.early.pending = null;
			rt.notices.once(
				ctx,
				`early-compact-failed:${error.message}`,
				`an early compaction did not happen (${error.message}); nothing was lost, and Pi's own compaction still applies.`,
				"warning",
			);
		},
	});
}
