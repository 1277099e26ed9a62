/**
 * The handoff seed: what a fresh session starts from. A stated goal, where the raw detail lives, and
 * a bounded deterministic rendering of the seed index. Pure: paths and text in, markdown out.
 */
import type { Hash } from "./digest.ts";
import { redactSecrets } from "./seed/redact.ts";
import { DEFAULT_SEED_MAX_CHARS, renderSeed, type SeedIndexRead } from "./seed/render.ts";
import type { SeedRecord } from "./seed/schema.ts";
import { plural } from "./wording.ts";

export interface HandoffInput {
	goal: string;
	/** The parent session file, or null for a session without one (--no-session). */
	parentFile: string | null;
	sessionId: string;
	/**
	 * Where the complete index lives, or null when none was written (nothing folded or compacted) and
	 * the index below was extracted from the session itself.
	 */
	indexPath: string | null;
	/** Valid records in the index. */
	records: number;
	/** The bounded rendering of the index (renderSeed), or "" when it is empty. */
	rendered: string;
}

export function renderHandoff(input: HandoffInput): string {
	const goal = input.goal.trim();
	const lines = [
		"# Continuing from an earlier Pi session",
		"",
		"## Goal",
		"",
		goal.length > 0 ? goal : "(No goal was stated. Say what to do next before starting.)",
		"",
		"## Where the detail lives",
		"",
	];
	if (input.parentFile !== null) {
		lines.push(
			`- The earlier session's file keeps every message and tool output byte for byte: \`${input.parentFile}\`.`,
			"  Each line is one JSON entry; tool outputs are the `text` blocks of entries whose `message.role` is `toolResult`.",
			`  To use its folds, resume it: \`pi --session ${input.parentFile}\`.`,
		);
	} else {
		lines.push(
			"- The earlier session had no session file (`--no-session`): its raw history is gone; only the index below remains.",
		);
	}
	const fromSession = input.indexPath === null;
	lines.push(
		fromSession
			? "- No seed index had been written (nothing was folded or compacted), so the index below was extracted from the session's messages when this seed was written."
			: `- The complete seed index (${plural(input.records, "record")}): \`${input.indexPath}\`.`,
		`- Fold codes such as {#a1b2c3} from session ${input.sessionId} do not resolve here: recall_folded and unfold only know folds made in the current session.`,
		"",
		"## Index of the earlier session",
		"",
		fromSession
			? "Extracted by plain code from the session's messages (files, commands, error lines, identifiers, first lines of user messages); no model wrote it."
			: "Extracted by plain code from what was folded or compacted (files, commands, error lines, identifiers, first lines of user messages); no model wrote it. Work done after the last fold or compaction may be missing.",
		"",
		input.records === 0 || input.rendered.trim() === ""
			? "(The index is empty: nothing had been folded or compacted yet.)"
			: input.rendered.trimEnd(),
		"",
	);
	return lines.join("\n");
}

/**
 * The handoff seed for a session's index as read from disk: /fold-handoff and `context-fold handoff`.
 * The goal is redacted like the index: the seed is a file and the next session's first message.
 */
export function handoffFromIndex(input: {
	goal: string;
	parentFile: string | null;
	sessionId: string;
	/** The index as read from disk; `path` null for records extracted from the session (no index written). */
	index: Pick<SeedIndexRead, "records" | "invalid" | "truncatedTail"> & { path: string | null };
	hash: Hash;
}): string {
	const { index } = input;
	return renderHandoff({
		goal: redactSecrets(input.goal, input.hash),
		parentFile: input.parentFile,
		sessionId: input.sessionId,
		indexPath: index.path,
		records: index.records.length,
		rendered: renderSeed(index.records, {
			maxChars: DEFAULT_SEED_MAX_CHARS,
			invalid: index.invalid,
			truncatedTail: index.truncatedTail,
			hash: input.hash,
		}),
	});
}

export interface CompactionSummaryInput {
	/** Instructions given with a manual /compact, kept verbatim at the top. */
	instructions?: string | undefined;
	rendered: string;
	records: number;
	/** Unreadable lines in the index, said out loud. */
	invalid: number;
	parentFile: string | null;
}

/** The compaction summary is bounded: Pi puts it at the head of every later request. */
export const COMPACTION_SUMMARY_MAX_CHARS = 12_000;

/** The text handed to Pi as the compaction summary: bounded, verbatim from the index. */
export function renderCompactionSummary(input: CompactionSummaryInput): string {
	const lines: string[] = [];
	const instructions = input.instructions?.trim();
	if (instructions) lines.push("Instructions given with /compact (verbatim):", instructions, "");
	lines.push(
		"Earlier history was compacted by context-fold: this summary is a deterministic index of it, not a paraphrase, and no model wrote it.",
		input.parentFile !== null
			? `The original messages remain byte for byte in the session file ${input.parentFile}; folded blocks ({#code FOLDED}) still resolve through recall_folded, and recall_folded search=<text> searches them.`
			: "This session has no session file; folded originals are held in memory for recall_folded while the process runs.",
		input.invalid > 0 ? `(${input.invalid} unreadable line(s) in the index were skipped.)` : "",
		"",
		input.records === 0 || input.rendered.trim() === "" ? "(The index is empty.)" : input.rendered.trimEnd(),
	);
	return lines.filter((l, i, a) => !(l === "" && a[i - 1] === "")).join("\n");
}

/**
 * The deterministic compaction summary from seed records, bounded by COMPACTION_SUMMARY_MAX_CHARS:
 * what the extension answers Pi with, and what `context-fold simulate` compacts to.
 */
export function compactionSummaryOf(
	records: readonly SeedRecord[],
	input: Omit<CompactionSummaryInput, "rendered" | "records"> & { truncatedTail: boolean; hash: Hash },
): string {
	return renderCompactionSummary({
		instructions: input.instructions,
		rendered: renderSeed(records, {
			maxChars: COMPACTION_SUMMARY_MAX_CHARS,
			invalid: input.invalid,
			truncatedTail: input.truncatedTail,
			hash: input.hash,
		}),
		records: records.length,
		invalid: input.invalid,
		parentFile: input.parentFile,
	});
}
