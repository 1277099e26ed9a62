/**
 * `context-fold simulate` against this harness: the CLI's offline replay (the core's replaySession
 * and billReplay, the code the command runs) on the same trace, under the headline billing
 * (Anthropic, 5 minutes, chars/4, the session's window, context-fold's defaults), counting prompts the
 * way this harness does: `--measure openai-json` (chars/4 of the JSON body Pi sends, which the
 * replayed responses report back as usage) with the harness's system prompt and tools as
 * `--overhead`. Under that measure both arms re-decide Pi's compaction, each on its own context (the
 * recording's were decided on the provider's counts). They are compared with the harness's `native`
 * and `cf-default` arms.
 */
import { readFileSync } from "node:fs";
import { billingModel } from "../../../src/core/billing.ts";
import { branchPath, parseSessionText } from "../../../src/core/session/entries.ts";
import type { PiEntry } from "../../../src/core/session/view.ts";
import { DEFAULT_SETTINGS } from "../../../src/core/settings.ts";
import { replaySession } from "../../../src/core/simulate/replay.ts";
import { billReplay } from "../../../src/core/simulate/summary.ts";
import type { PromptMeasure } from "../../../src/core/simulate/wire.ts";
import { sha256 } from "../../../src/store/hash.ts";
import { parseIsoTime } from "../../../src/store/session-file.ts";
import { WINDOW } from "./arms.ts";
import type { Trace } from "./trace-read.ts";

/** How this harness counts a prompt: chars/4 of the JSON body its fake model receives. */
export const MEASURE: PromptMeasure = "openai-json";

export interface SimulatedArm {
	prompt: number;
	cost: number;
	compactions: number;
}

/** Native Pi's compaction-summary requests the arm without folding billed (part of its prompt and cost). */
export interface SimulatedSummaries {
	requests: number;
	prompt: number;
	cost: number;
}

export interface SimulateAgreement {
	/** The --overhead given (tokens), or null when simulate measured it itself. */
	overhead: number | null;
	baseline: SimulatedArm & { summaries: SimulatedSummaries };
	folded: SimulatedArm & { foldEvents: number };
	/** Milliseconds the replay and billing took. */
	ms: number;
}

/**
 * `overhead` is the system prompt and tools in the harness's own units (chars/4 of what Pi sent),
 * given to simulate as `--overhead` would be: by default simulate measures it from the recording's
 * first reported prompt, in the provider's tokens, which is not what the harness bills.
 */
export function simulateTrace(t: Trace, overhead: number | undefined, window = WINDOW): SimulateAgreement {
	const started = performance.now();
	// A file on disk is read the way the CLI reads it; a generated or cut session is already in memory.
	const entries: PiEntry[] = t.fromFile
		? branchPath(parseSessionText(readFileSync(t.path, "utf8")).entries)
		: (t.entries as unknown as PiEntry[]);
	const replay = replaySession({
		entries,
		settings: DEFAULT_SETTINGS,
		windowFor: () => window,
		hash: sha256,
		parseTime: parseIsoTime,
		sessionFile: t.path,
		measure: MEASURE,
		...(overhead !== undefined && { overhead }),
	});
	const sim = billReplay(replay, billingModel("anthropic", "5m"));
	const s = sim.summary;
	return {
		overhead: overhead ?? null,
		baseline: {
			prompt: s.baseline.prompt,
			cost: s.baseline.cost,
			compactions: s.compactions.baseline,
			summaries: {
				requests: s.baseline.summaries.requests,
				prompt: s.baseline.summaries.prompt,
				cost: s.baseline.summaries.cost,
			},
		},
		folded: {
			prompt: s.folded.prompt,
			cost: s.folded.cost,
			compactions: s.compactions.folded,
			foldEvents: s.foldEvents,
		},
		ms: performance.now() - started,
	};
}

/** Relative difference of simulate from the harness. */
export function deviation(simulated: number, harness: number): number {
	return harness === 0 ? 0 : (simulated - harness) / harness;
}
