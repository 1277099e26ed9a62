/**
 * Which prices a session's money figures use, and the fold net at those prices: one rule for
 * `status` and `sessions`, so the two never disagree on whether (or how much) folding saved.
 */
import {
	type AccountingReport,
	foldValue,
	PRICE_PRESETS,
	type PricePreset,
	type PriceSchedule,
	type Prices,
} from "../core/accounting.ts";
import { lookupModel, unpriced } from "../core/model-catalog.ts";
import type { ModelFacts } from "../store/models-file.ts";

export type SourcedPrices = PriceSchedule & { source: string };

/**
 * An explicit preset, the model's own prices (models.json), pi-ai's catalog as built into
 * context-fold, or the provider's preset; null when none applies.
 */
export function pricesFor(
	provider: string | null,
	facts: ModelFacts | undefined,
	explicit?: PricePreset,
	model?: string | null,
): SourcedPrices | null {
	if (explicit !== undefined) return { ...PRICE_PRESETS[explicit], source: `--price ${explicit}` };
	const own = facts?.prices;
	if (own !== undefined && own.input + own.output > 0) return { ...own, source: "models.json" };
	const hit = model === undefined ? null : lookupModel(provider, model);
	if (hit !== null && !unpriced(hit.entry.prices))
		return { ...hit.entry.prices, source: `catalog ${hit.entry.provider}/${hit.entry.id}` };
	const preset = presetForProvider(provider);
	return preset === null ? null : { ...PRICE_PRESETS[preset], source: `${preset} preset` };
}

export function presetForProvider(provider: string | null): PricePreset | null {
	if (provider === null) return null;
	if (/anthropic|bedrock|claude/i.test(provider)) return "anthropic";
	if (/openai|codex|azure/i.test(provider)) return "openai";
	if (/google|gemini|vertex/i.test(provider)) return "gemini";
	return null;
}

/**
 * What folding saved so far, net of the re-writes it caused, in dollars: 0 when nothing was folded,
 * null without prices or when the provider does not report cache writes (their cost is unknown, and
 * status says so instead of a net).
 */
export function foldNet(a: AccountingReport, prices: Prices | null): number | null {
	if (prices === null) return null;
	if (a.changes.length === 0 && a.maskedSent === 0) return 0;
	return a.writesReported ? foldValue(a, prices).net : null;
}
