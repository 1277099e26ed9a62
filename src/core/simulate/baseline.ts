/**
 * The no-folding arm with Pi's compaction re-decided. By default the arm without folding is the
 * recording, its compactions included. Under a measure other than `content` (wire.ts) the responses
 * are taken to report that measure, so the recorded compactions, decided on the provider's own
 * counts, are not the ones Pi would have made: this arm drops them and applies Pi's rule to its own
 * context, reading the usage its responses report under the measure, and answers a compaction as the
 * folded arm does (deterministically, from the seed index, no model call).
 */
import type { ViewMessage } from "../blocks.ts";
import { applyFrozenLayers } from "../frozen.ts";
import { emptyIndex } from "../layers.ts";
import type { BranchReplay } from "../session/branch-state.ts";
import type { ViewCache } from "../session/view-cache.ts";
import type { Usage } from "../tokens.ts";
import { readUsage } from "../usage.ts";
import type { ReplayCompactor } from "./compaction.ts";

export interface BaselineArm {
	branch: BranchReplay;
	views: ViewCache;
	compactor: ReplayCompactor;
	/** Usage the arm's responses report, by entry id. */
	usage: Map<string, Usage>;
}

const NO_LAYERS = emptyIndex();

/** The usage Pi's compaction rule reads from a view: the newest report plus the estimate after it. */
export function usageOfView(view: readonly ViewMessage[]): number {
	const pass = applyFrozenLayers(view, NO_LAYERS, "unsigned-only");
	return readUsage(view, pass.tokensPerMessage, pass.latestCompaction).tokens;
}

/**
 * The arm's context for the next request, compacted first when Pi's rule says so. `viewOf` builds the
 * arm's view with the usage its responses reported.
 */
export function baselineContext(
	arm: BaselineArm,
	window: number | undefined,
	viewOf: () => ViewMessage[],
): { view: ViewMessage[]; compacted: boolean } {
	let view = viewOf();
	const tokens = usageOfView(view);
	if (!arm.compactor.due(tokens, window)) return { view, compacted: false };
	const compaction = arm.compactor.compact(
		arm.branch.context.messages,
		view,
		NO_LAYERS,
		arm.branch.lastResponseAt + 1,
		tokens,
	);
	if (compaction === null) return { view, compacted: false };
	arm.branch.consume(compaction);
	view = viewOf();
	return { view, compacted: true };
}
