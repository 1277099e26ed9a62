/**
 * The no-folding arm with Pi's compaction re-decided. By default the arm without folding is the
 * recording, its compactions included. Under a measure other than `content` (wire.ts) the responses
 * are taken to report that measure, so the recorded compactions, decided on the provider's own
 * counts, are not the ones Pi would have made: this arm drops them and applies Pi's rule to its own
 * context, reading the usage its responses report under the measure, and answers a compaction as
 * native Pi does (native-summary.ts): the summary request(s) it sends to the model, billed, and a
 * summary of the assumed size (NATIVE_SUMMARY_TOKENS) in the context from then on.
 */
import type { ViewMessage } from "../blocks.ts";
import { applyFrozenLayers } from "../frozen.ts";
import { emptyIndex } from "../layers.ts";
import type { BranchReplay } from "../session/branch-state.ts";
import type { PiEntry, PiMessage } from "../session/view.ts";
import type { ViewCache } from "../session/view-cache.ts";
import type { Usage } from "../tokens.ts";
import { readUsage } from "../usage.ts";
import { findCutIndex, type PiCompactionSettings, piCompactionDue } from "./compaction.ts";
import { nativeCompaction, type PreviousCompaction, type SummaryRequest } from "./native-summary.ts";
import type { PromptMeasure } from "./wire.ts";

export interface BaselineArm {
	branch: BranchReplay;
	views: ViewCache;
	compactor: NativeCompactor;
	/** Usage the arm's responses report, by entry id. */
	usage: Map<string, Usage>;
}

const NO_LAYERS = emptyIndex();

/** The usage Pi's compaction rule reads from a view: the newest report plus the estimate after it. */
export function usageOfView(view: readonly ViewMessage[]): number {
	const pass = applyFrozenLayers(view, NO_LAYERS, "unsigned-only");
	return readUsage(view, pass.tokensPerMessage, pass.latestCompaction).tokens;
}

/** Pi's own compaction, re-decided by its rule and answered as Pi answers it: with summary requests. */
export class NativeCompactor {
	count = 0;
	private previous: PreviousCompaction | null = null;

	constructor(
		readonly settings: PiCompactionSettings,
		private readonly measure: PromptMeasure,
	) {}

	due(contextTokens: number, window: number | undefined): boolean {
		return piCompactionDue(contextTokens, window, this.settings);
	}

	/**
	 * The compaction entry Pi would append and the summary requests it sent for it, or null when there
	 * is no cut point. `view[i]` is the view of `messages[i]` (entry ids included).
	 */
	compact(
		messages: readonly PiMessage[],
		view: readonly ViewMessage[],
		at: number,
		tokensBefore: number,
	): { entry: PiEntry; requests: SummaryRequest[] } | null {
		const cut = findCutIndex(
			messages,
			view.map((v) => v.entryId),
			this.settings.keepRecentTokens,
		);
		if (cut < 0) return null;
		const native = nativeCompaction(messages, cut, this.previous, this.measure);
		this.count++;
		this.previous = { summary: native.summary, ...native.files };
		const entry: PiEntry = {
			type: "compaction",
			id: `simulated-native-compaction-${this.count}`,
			parentId: null,
			// Milliseconds, not ISO: the core has no clock to format one. entryTime reads both.
			timestamp: at as unknown as string,
			summary: native.summary,
			firstKeptEntryId: (view[cut] as ViewMessage).entryId,
			tokensBefore,
			details: { ...native.files, simulated: true },
		};
		return { entry, requests: native.requests };
	}
}

/**
 * The arm's context for the next request, compacted first when Pi's rule says so, and the summary
 * requests that compaction sent. `viewOf` builds the arm's view with the usage its responses reported.
 */
export function baselineContext(
	arm: BaselineArm,
	window: number | undefined,
	viewOf: () => ViewMessage[],
): { view: ViewMessage[]; compacted: boolean; summaries: SummaryRequest[] } {
	let view = viewOf();
	const tokens = usageOfView(view);
	if (!arm.compactor.due(tokens, window)) return { view, compacted: false, summaries: [] };
	const compaction = arm.compactor.compact(arm.branch.context.messages, view, arm.branch.lastResponseAt + 1, tokens);
	if (compaction === null) return { view, compacted: false, summaries: [] };
	arm.branch.consume(compaction.entry);
	view = viewOf();
	return { view, compacted: true, summaries: compaction.requests };
}
