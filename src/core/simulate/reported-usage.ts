/**
 * What a replayed request reports: the usage the recording holds, and what each arm's provider would
 * have reported instead (the recorded report moved by what the arm sent differently, or, under a
 * measure other than `content`, the measure itself).
 */
import { promptOf } from "../accounting.ts";
import { isSuccessfulResponse, type ViewMessage, viewTokens } from "../blocks.ts";
import { applyFrozenLayers } from "../frozen.ts";
import type { MaskIndex } from "../layers.ts";
import type { FoldPlan } from "../plan.ts";
import type { PiMessage } from "../session/view.ts";
import type { Usage } from "../tokens.ts";
import { nonNegativeOr0 } from "../values.ts";
import { overheadFrom, partsTokens } from "./wire.ts";

export interface RecordedUsage {
	usage: Usage;
	/** The prompt the provider reported (0 for a failed or aborted response, or one without usage). */
	prompt: number;
	/** Cost the recording states for this response, when it states one. */
	cost: number | null;
}

export function recordedUsageOf(m: PiMessage): RecordedUsage {
	const raw = m.usage ?? {};
	const usage = {
		input: nonNegativeOr0(raw.input),
		output: nonNegativeOr0(raw.output),
		cacheRead: nonNegativeOr0(raw.cacheRead),
		cacheWrite: nonNegativeOr0(raw.cacheWrite),
	};
	const cost = (raw as { cost?: { total?: unknown } }).cost?.total;
	return {
		usage,
		prompt: isSuccessfulResponse(m) ? promptOf(usage) : 0,
		cost: typeof cost === "number" && Number.isFinite(cost) ? cost : null,
	};
}

/**
 * What the provider would have reported for the folded arm's request instead of the recorded one: the
 * recorded report, moved by the difference between what each sent (their contexts, and their masks).
 * Of the replay's state (`c`, request.ts) only the recorded branch's fold index is read.
 */
export function armUsage(
	c: { recorded: { index: MaskIndex } },
	baseView: readonly ViewMessage[],
	armView: readonly ViewMessage[],
	p: FoldPlan,
	recorded: RecordedUsage,
): Usage {
	const contexts = armView === baseView ? 0 : viewTokens(armView) - viewTokens(baseView);
	const recordedIndex = c.recorded.index;
	const recordedMasks =
		recordedIndex.byKey.size === 0 ? 0 : applyFrozenLayers(baseView, recordedIndex, "unsigned-only").maskedTokens;
	return {
		input: Math.max(0, recorded.prompt + contexts + recordedMasks - p.maskedTokens),
		output: recorded.usage.output,
		cacheRead: 0,
		cacheWrite: 0,
	};
}

/**
 * Under a measure other than `content`, the provider is taken to report the measure itself, as the
 * economics benchmark's fake model reports chars/4 of what Pi sent: an arm's request (`parts`) by that
 * measure, with the system prompt and tools (given, else measured from the first response) and
 * `extension` (the recall tools, once the folded arm declares them). The ladder and Pi's compaction
 * rule then read what the harness's Pi reads. The overhead is kept on the replay's state (`c`, request.ts).
 */
export function measuredUsage(
	c: { overhead: number | null; input: { overhead?: number } },
	recorded: RecordedUsage,
	baseParts: readonly string[],
	parts: readonly string[],
	extension: number,
): Usage {
	c.overhead ??= c.input.overhead ?? overheadFrom(recorded.prompt, baseParts);
	return {
		input: c.overhead + extension + partsTokens(parts),
		output: recorded.usage.output,
		cacheRead: 0,
		cacheWrite: 0,
	};
}

/** The recorded prompt moved by what the no-folding arm's own compactions changed (provider tokens). */
export function contentUsage(
	recorded: RecordedUsage,
	recordedView: readonly ViewMessage[],
	baseView: readonly ViewMessage[],
): number {
	return Math.max(0, recorded.prompt + viewTokens(baseView) - viewTokens(recordedView));
}
