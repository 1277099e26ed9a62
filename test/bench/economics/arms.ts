/**
 * The arms of the benchmark: what is loaded and configured for each replay. Every arm replays the
 * same trajectory; only what Pi sends differs. `floor` is computed, not replayed (floor.ts).
 */

/** Pi's defaults, stated explicitly so a change of Pi's defaults cannot move the headline silently. */
export const PI_COMPACTION = { reserveTokens: 16_384, keepRecentTokens: 20_000 } as const;
export const WINDOW = 200_000;

export interface ArmSpec {
	id: string;
	label: string;
	/** Load context-fold's bundle. */
	contextFold: boolean;
	/** CONTEXTFOLD_* variables for this arm (nothing = context-fold's own defaults). */
	env: Record<string, string>;
	/** Pi's own compaction. */
	compaction: boolean;
	kind: "reference" | "headline" | "sweep";
}

export const RAW: ArmSpec = {
	id: "raw",
	label: "no extension, no compaction (reference; the floor's input)",
	contextFold: false,
	env: {},
	compaction: false,
	kind: "reference",
};
export const NATIVE: ArmSpec = {
	id: "native",
	label: "Pi native: no extension, Pi's LLM compaction",
	contextFold: false,
	env: {},
	compaction: true,
	kind: "headline",
};
export const DEFAULTS: ArmSpec = {
	id: "cf-default",
	label: "context-fold, defaults",
	contextFold: true,
	env: {},
	compaction: true,
	kind: "headline",
};
/** The defaults without folding tool-call inputs: what input folding adds, measured. */
export const NO_INPUTS: ArmSpec = {
	id: "cf-no-inputs",
	label: "context-fold, defaults, tool-call inputs never folded (CONTEXTFOLD_TEST_NO_INPUTS=1)",
	contextFold: true,
	env: { CONTEXTFOLD_TEST_NO_INPUTS: "1" },
	compaction: true,
	kind: "reference",
};
/** The defaults with the recall tools declared from the first request (as before they were declared lazily). */
export const EAGER_TOOLS: ArmSpec = {
	id: "cf-eager-tools",
	label: "context-fold, defaults, recall tools declared from the first request (CONTEXTFOLD_TEST_EAGER_TOOLS=1)",
	contextFold: true,
	env: { CONTEXTFOLD_TEST_EAGER_TOOLS: "1" },
	compaction: true,
	kind: "reference",
};
export const COMPACT_NATIVE: ArmSpec = {
	id: "cf-compact-native",
	label: "context-fold, CONTEXTFOLD_COMPACT=native",
	contextFold: true,
	env: { CONTEXTFOLD_COMPACT: "native" },
	compaction: true,
	kind: "headline",
};

/**
 * The defaults without early compaction (CONTEXTFOLD_EARLY_COMPACT=off): what compacting between runs,
 * by price, adds when the context is over the budget with nothing left to fold. The defaults arm has
 * it on whenever the default is `priced`; this arm always has it off.
 */
export const EARLY_OFF: ArmSpec = {
	id: "cf-early-off",
	label: "context-fold, defaults, no early compaction (CONTEXTFOLD_EARLY_COMPACT=off)",
	contextFold: true,
	env: { CONTEXTFOLD_EARLY_COMPACT: "off" },
	compaction: true,
	kind: "reference",
};

/** The fold points 0.1.0 shipped with, pinned by hand: the fixed ladder the priced rule replaced. */
export const FIXED_010: ArmSpec = {
	id: "cf-fixed-0.1.0",
	label: "context-fold, fold points pinned at 0.1.0's FOLD_AT=0.3 FOLD_STEP=0.06 (fixed ladder)",
	contextFold: true,
	env: { CONTEXTFOLD_FOLD_AT: "0.3", CONTEXTFOLD_FOLD_STEP: "0.06" },
	compaction: true,
	kind: "reference",
};

export const SWEEP_FOLD_AT = [0.2, 0.3, 0.45, 0.6] as const;
export const SWEEP_FOLD_STEP = [0.03, 0.06, 0.12, 0.2] as const;

/** The grid of fold-at × fold-step (fixed ladder), without 0.1.0's own point (that is the cf-fixed-0.1.0 arm). */
export function sweepArms(): ArmSpec[] {
	const arms: ArmSpec[] = [];
	for (const at of SWEEP_FOLD_AT) {
		for (const step of SWEEP_FOLD_STEP) {
			if (at === 0.3 && step === 0.06) continue;
			arms.push({
				id: `sweep-at${at}-step${step}`,
				label: `context-fold, FOLD_AT=${at} FOLD_STEP=${step}`,
				contextFold: true,
				env: { CONTEXTFOLD_FOLD_AT: String(at), CONTEXTFOLD_FOLD_STEP: String(step) },
				compaction: true,
				kind: "sweep",
			});
		}
	}
	return arms;
}

export function allArms(quick: boolean): ArmSpec[] {
	return quick
		? [RAW, NATIVE, DEFAULTS, NO_INPUTS, EAGER_TOOLS, FIXED_010]
		: [RAW, NATIVE, DEFAULTS, EARLY_OFF, NO_INPUTS, EAGER_TOOLS, FIXED_010, COMPACT_NATIVE, ...sweepArms()];
}

/**
 * Which sessions the fold-at × fold-step sweep (fold points pinned by hand) replays: every one; the
 * default, the whole recorded traces only (since the rule is priced, the grid is a comparison, not
 * the default's tuning, and it would triple the benchmark's time); or none.
 */
export type SweepScope = "all" | "default" | "none";

export function armsFor(
	kind: "recorded" | "cut" | "generated" | "window",
	quick: boolean,
	sweep: SweepScope,
): ArmSpec[] {
	if (quick) return allArms(true);
	// A smaller window is there for early compaction: the defaults with it and without it.
	if (kind === "window") return [RAW, NATIVE, DEFAULTS, EARLY_OFF];
	const swept = sweep === "all" || (sweep === "default" && kind === "recorded");
	const base = [
		RAW,
		NATIVE,
		DEFAULTS,
		EARLY_OFF,
		...(kind === "cut" ? [] : [NO_INPUTS, EAGER_TOOLS]),
		FIXED_010,
		COMPACT_NATIVE,
	];
	return swept ? [...base, ...sweepArms()] : base;
}
