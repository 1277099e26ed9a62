/**
 * Which rule decides fold events, and why, in the words every surface shares: the notice at session
 * start, the `/context-fold` menu and settings listing, and the `status` text and JSON.
 *
 * The priced rule (policy/price.ts) decides unless a fold point (foldAt, foldStep, coldFoldAt) was set
 * by hand, in the environment or the settings file: then 0.1.0's fixed ladder (policy/fixed.ts) does,
 * and the user is told once which setting did it and how to go back. The test seam
 * CONTEXTFOLD_TEST_FIXED_FOLDS=1 runs the fixed ladder too, at its default points, without a notice.
 */
import type { ResolvedSettings } from "./resolved-settings.ts";
import { describeValue, FIXED_FOLD_KNOBS, KNOBS } from "./settings.ts";

/** One fold point set by hand. */
export interface FoldPin {
	knob: "foldAt" | "foldStep" | "coldFoldAt";
	/** The environment variable, or the field in context-fold.json. */
	name: string;
	source: "env" | "file";
	value: number;
}

export type FoldRule =
	| { type: "priced" }
	| { type: "fixed"; pinnedBy: "hand"; pins: FoldPin[] }
	/** CONTEXTFOLD_TEST_FIXED_FOLDS=1: tests of fold mechanics, at the default points. */
	| { type: "fixed"; pinnedBy: "test-seam" };

export const TEST_FIXED_FOLDS_ENV = "CONTEXTFOLD_TEST_FIXED_FOLDS";

/** The rule resolved settings select (see Settings.fixedFolds). */
export function foldRuleOf(resolved: ResolvedSettings): FoldRule {
	const pins: FoldPin[] = [];
	for (const knob of KNOBS) {
		if (!FIXED_FOLD_KNOBS.includes(knob.key)) continue;
		const source = resolved.sources[knob.key];
		if (source === "default") continue;
		pins.push({
			knob: knob.key as FoldPin["knob"],
			name: source === "env" ? knob.env : knob.file,
			source,
			value: resolved.settings[knob.key] as number,
		});
	}
	if (pins.length > 0) return { type: "fixed", pinnedBy: "hand", pins };
	if (resolved.settings.fixedFolds) return { type: "fixed", pinnedBy: "test-seam" };
	return { type: "priced" };
}

/** `CONTEXTFOLD_FOLD_AT=0.4 (environment), foldStep 0.1 (context-fold.json)`. */
export function pinsWords(pins: readonly FoldPin[]): string {
	return pins
		.map((p) =>
			p.source === "env"
				? `${p.name}=${describeValue(p.value)} (environment)`
				: `${p.name} ${describeValue(p.value)} (context-fold.json)`,
		)
		.join(", ");
}

/**
 * The one-time notice when fold points are pinned by hand (null otherwise: the priced rule, or the
 * test seam, which tests set on purpose and nobody needs to hear about).
 */
export function pinnedNotice(rule: FoldRule): string | null {
	if (rule.type !== "fixed" || rule.pinnedBy !== "hand") return null;
	const them = rule.pins.length === 1 ? "it" : "them";
	return `fold points pinned by hand: ${pinsWords(rule.pins)}. The priced fold rule is off for this session: folds come at these fixed points, as in 0.1.0. Unset ${them} (or choose "default" in /context-fold Settings) to return to the priced rule.`;
}

/** The rule in a few words, for a menu row: `priced`, `fixed: set by hand (...)`, `fixed: test seam ...`. */
export function ruleLabel(rule: FoldRule): string {
	if (rule.type === "priced") return "priced";
	if (rule.pinnedBy === "test-seam") return `fixed: test seam ${TEST_FIXED_FOLDS_ENV}=1`;
	return `fixed: set by hand (${rule.pins.map((p) => (p.source === "env" ? p.name : `${p.name} in the file`)).join(", ")})`;
}

/** What a change of rule (a settings edit) means, or "" when the rule stayed the same kind. */
export function ruleChangeWords(before: FoldRule, after: FoldRule): string {
	if (before.type === after.type) return "";
	return after.type === "fixed"
		? " Fold points are pinned now: the priced fold rule is off until they are unset."
		: " No fold point is pinned now: the priced fold rule decides.";
}
