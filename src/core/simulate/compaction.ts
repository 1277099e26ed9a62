/**
 * Pi's automatic compaction, re-decided for the folded arm of an offline replay. Folding changes how
 * full the context is, so the compactions a session recorded (decided on its unfolded context) are
 * not the ones it would have had with context-fold: the folded arm drops them and applies Pi's own
 * rule instead, answered the way context-fold answers by default (CONTEXTFOLD_COMPACT=det: a summary
 * rendered from the seed index, no model call).
 *
 * The rule, from Pi's compaction reference (docs/compaction.md): before an assistant request, compact
 * when the context estimate exceeds `window - reserveTokens`; keep the newest messages worth at least
 * `keepRecentTokens` of Pi's own estimate, cut at a message that can start the kept range (never a
 * tool result). Pi's estimate is its chars/4 heuristic over raw messages, reproduced here.
 */

import type { ViewMessage } from "../blocks.ts";
import type { Hash } from "../digest.ts";
import { compactionSummaryOf } from "../handoff.ts";
import type { FrozenLayer, MaskIndex } from "../layers.ts";
import { PI_KEEP_RECENT_TOKENS, PI_RESERVE_TOKENS } from "../policy/horizon.ts";
import { extractSeedRecord } from "../seed/extract.ts";
import { foldSeedRecord, pickFoldMessages, toolCallsOf, withoutFolded } from "../seed/pick.ts";
import type { SeedRecord } from "../seed/schema.ts";
import type { PiContent, PiEntry, PiMessage } from "../session/view.ts";
import { isRecord } from "../values.ts";

export interface PiCompactionSettings {
	reserveTokens: number;
	keepRecentTokens: number;
}

/** Pi's defaults (DEFAULT_COMPACTION_SETTINGS in Pi 0.80 to 1.6). */
export const PI_COMPACTION_DEFAULTS: Readonly<PiCompactionSettings> = {
	reserveTokens: PI_RESERVE_TOKENS,
	keepRecentTokens: PI_KEEP_RECENT_TOKENS,
};

/**
 * Pi's compaction settings for one model, from its settings as Pi merges them (global, then the
 * project's): `compaction.enabled`, `reserveTokens` and `keepRecentTokens`, a per-model entry in
 * `compaction.modelOverrides["provider/id"]` first (Pi 1.6.0), Pi's defaults for anything absent or
 * not a non-negative whole number (where Pi itself would refuse to compact at all).
 */
/** Pi's compaction settings for one model, and whether it compacts at all. */
export type PiCompaction = PiCompactionSettings & { enabled: boolean };

export function piCompactionOf(settings: unknown, model: string | undefined): PiCompaction {
	const compaction = isRecord(settings) && isRecord(settings.compaction) ? settings.compaction : {};
	const overrides = isRecord(compaction.modelOverrides) ? compaction.modelOverrides : {};
	const own = model !== undefined && isRecord(overrides[model]) ? overrides[model] : {};
	const tokens = (field: keyof PiCompactionSettings): number => {
		for (const v of [own[field], compaction[field]])
			if (typeof v === "number" && Number.isSafeInteger(v) && v >= 0) return v;
		return PI_COMPACTION_DEFAULTS[field];
	};
	return {
		enabled: compaction.enabled !== false,
		reserveTokens: tokens("reserveTokens"),
		keepRecentTokens: tokens("keepRecentTokens"),
	};
}

/** Pi's rule: compact before the next request when the context estimate is past `window - reserve`. */
export function piCompactionDue(
	contextTokens: number,
	window: number | undefined,
	settings: Readonly<PiCompactionSettings>,
): boolean {
	return window !== undefined && window > 0 && contextTokens > window - settings.reserveTokens;
}

/** Characters Pi counts for an image in its estimate. */
const PI_IMAGE_CHARS = 4800;

function contentChars(content: PiMessage["content"]): number {
	if (typeof content === "string") return content.length;
	if (!Array.isArray(content)) return 0;
	let chars = 0;
	for (const block of content as PiContent[]) {
		if (block?.type === "text" && typeof block.text === "string") chars += block.text.length;
		else if (block?.type === "image") chars += PI_IMAGE_CHARS;
	}
	return chars;
}

/** Pi's token estimate of one context message (chars/4, rounded up). */
export function piMessageTokens(m: PiMessage): number {
	let chars = 0;
	switch (m.role) {
		case "user":
		case "custom":
		case "toolResult":
			chars = contentChars(m.content);
			break;
		case "assistant":
			if (Array.isArray(m.content)) {
				for (const b of m.content as PiContent[]) {
					if (b?.type === "text" && typeof b.text === "string") chars += b.text.length;
					else if (b?.type === "thinking" && typeof b.thinking === "string") chars += b.thinking.length;
					else if (b?.type === "toolCall")
						chars += String(b.name ?? "").length + (JSON.stringify(b.arguments ?? null)?.length ?? 0);
				}
			}
			break;
		case "bashExecution":
			chars = String(m.command ?? "").length + String(m.output ?? "").length;
			break;
		case "branchSummary":
		case "compactionSummary":
			chars = typeof m.summary === "string" ? m.summary.length : 0;
			break;
		default:
			return 0;
	}
	return Math.ceil(chars / 4);
}

const CUT_POINT_ROLES = new Set(["user", "assistant", "bashExecution", "custom", "branchSummary"]);

/**
 * Index of the first kept message: walking back from the newest, the first message at which at least
 * `keep` tokens are kept, moved forward to the nearest message that can start the kept range and has
 * an entry id. -1 when there is nothing to cut (everything fits, or no cut point exists).
 */
export function findCutIndex(
	messages: readonly PiMessage[],
	entryIds: readonly (string | null)[],
	keep: number,
): number {
	const valid = (i: number) => CUT_POINT_ROLES.has((messages[i] as PiMessage).role) && entryIds[i] != null;
	let acc = 0;
	let reached = -1;
	for (let i = messages.length - 1; i >= 0; i--) {
		acc += piMessageTokens(messages[i] as PiMessage);
		if (acc >= keep) {
			reached = i;
			break;
		}
	}
	if (reached < 0) return -1;
	for (let i = reached; i < messages.length; i++) if (valid(i)) return i > 0 ? i : -1;
	return -1;
}

/** Seed records of the folded arm, and the deterministic compaction built from them. */
export class ReplayCompactor {
	readonly records: SeedRecord[] = [];
	count = 0;

	constructor(
		readonly settings: PiCompactionSettings,
		private readonly hash: Hash,
		private readonly sessionFile: string | null,
	) {}

	/** Pi's rule: compact before the next request when the estimate is past `window - reserve`. */
	due(contextTokens: number, window: number | undefined): boolean {
		return piCompactionDue(contextTokens, window, this.settings);
	}

	/** Index the fold the way the extension's SeedWriter does, so a later summary renders the same records. */
	onFold(layer: FrozenLayer, previous: FrozenLayer | undefined, at: number, view: readonly ViewMessage[]): void {
		this.records.push(foldSeedRecord(pickFoldMessages(layer, previous, view), layer.seq, at, this.hash));
	}

	/**
	 * The compaction entry Pi would append, answered deterministically, or null when there is no cut
	 * point. `view[i]` is the view of `messages[i]` (entry ids included).
	 */
	compact(
		messages: readonly PiMessage[],
		view: readonly ViewMessage[],
		index: MaskIndex,
		at: number,
		tokensBefore: number,
		reason: "threshold" | "early" = "threshold",
	): PiEntry | null {
		const cut = findCutIndex(
			messages,
			view.map((v) => v.entryId),
			this.settings.keepRecentTokens,
		);
		if (cut < 0) return null;
		const removed = messages.slice(0, cut).filter((m) => m.role !== "compactionSummary");
		const removedView = view
			.slice(0, cut)
			.filter((v) => v.role !== "compactionSummary")
			.map((v) => withoutFolded(v, index));
		this.count++;
		this.records.push(
			extractSeedRecord({
				kind: "compaction",
				seq: this.records.length + 1,
				at,
				messages: removedView,
				calls: toolCallsOf(removed),
				hash: this.hash,
			}),
		);
		const summary = compactionSummaryOf(this.records, {
			invalid: 0,
			truncatedTail: false,
			parentFile: this.sessionFile,
			hash: this.hash,
		});
		return {
			type: "compaction",
			id: `simulated-compaction-${this.count}`,
			parentId: null,
			// Milliseconds, not ISO: the core has no clock to format one. entryTime reads both.
			timestamp: at as unknown as string,
			summary,
			firstKeptEntryId: (view[cut] as ViewMessage).entryId,
			tokensBefore,
			details: { contextFold: { v: 1, reason, simulated: true } },
		};
	}
}
