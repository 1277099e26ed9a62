/**
 * The fold the next request would make, planned but not committed: the context Pi would send now
 * (without the next prompt) mapped to the core's view and planned against the branch's layers. The
 * extension's status and advisories and the CLI's `status` ask this one question the same way.
 */

import type { PriceSchedule } from "../accounting.ts";
import type { Hash } from "../digest.ts";
import { type FoldPlan, planFold } from "../plan.ts";
import type { PiCompactionFacts } from "../policy/horizon.ts";
import type { ColdReason } from "../policy/price.ts";
import type { Settings } from "../settings.ts";
import { thinkingPolicyFor } from "../thinking-policy.ts";
import type { BranchState } from "./branch-state.ts";
import { ContextTracker } from "./context.ts";
import type { ParseTime } from "./entries.ts";
import { buildView, type PiEntry, type PiMessage } from "./view.ts";

export interface PreviewInput {
	/** The context Pi would send now, in order. */
	messages: readonly PiMessage[];
	branch: BranchState;
	settings: Settings;
	window: number | undefined;
	/** The provider API the next request goes to (decides how thinking may fold). */
	api: string | undefined;
	/** The model the next request goes to (modelKey): no input folds once its provider refused them. */
	model?: string;
	/** The session's working directory, for the superseded rules' paths. */
	cwd?: string | null;
	/** The model's prices ($/Mtok, with tiers); null or absent: none declared (decided in tokens). */
	prices?: PriceSchedule | null;
	/** Why the cache is cold for the next request, or null. */
	cold?: ColdReason | null;
	/** Pi's compaction settings for the model; Pi's defaults when absent. */
	compaction?: PiCompactionFacts;
	hash: Hash;
}

export function previewPlan(input: PreviewInput): FoldPlan {
	const { branch } = input;
	return planFold({
		messages: buildView(input.messages, (m) => branch.lookup(m)),
		index: branch.index,
		settings: input.settings,
		window: input.window,
		everCacheRead: branch.everCacheRead,
		hash: input.hash,
		thinking: thinkingPolicyFor(input.api),
		inputs: input.model === undefined || !branch.inputsRefused.has(input.model),
		...(typeof input.cwd === "string" && { cwd: input.cwd }),
		prices: input.prices ?? null,
		cold: input.cold ?? null,
		...(input.compaction !== undefined && { compaction: input.compaction }),
	});
}

/** The context Pi would send at the end of a branch (root to leaf). */
export function contextOf(branch: readonly PiEntry[], parseTime: ParseTime): PiMessage[] {
	const tracker = new ContextTracker(parseTime);
	for (const e of branch) tracker.consume(e);
	return tracker.messages;
}
