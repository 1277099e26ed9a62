/**
 * Which prices a replayed request is billed at, and how the estimate compares with the costs the
 * session states. By default each request is priced as the model its response names: the user's
 * models.json first (Pi's own place for custom and overridden models), then pi-ai's catalog built
 * into context-fold, then a preset for the provider. `--price` overrides all of it with one preset.
 */
import { costOf, PRICE_PRESETS, type PricePreset, type PriceSchedule, type Prices, promptOf } from "../accounting.ts";
import { type BillingModel, requestPricing } from "../billing.ts";
import { type CatalogMatch, lookupModel, unpriced } from "../model-catalog.ts";
import type { PiEntry } from "../session/view.ts";
import type { Usage } from "../tokens.ts";
import type { SimulatedRow } from "./summary.ts";

export type PriceSource =
	/** Given on the command line. */
	| { type: "preset"; preset: PricePreset; why: "--price" }
	/** The model is not in the catalog, or the catalog gives it no price. */
	| { type: "preset"; preset: PricePreset; why: "unknown-model" | "unpriced"; catalogEntry?: string }
	| { type: "models.json" }
	/** `entry` is the catalog's provider/id that matched (see lookupModel). */
	| { type: "catalog"; match: CatalogMatch; entry: string };

export interface ModelPrices {
	provider: string | null;
	model: string | null;
	prices: PriceSchedule;
	source: PriceSource;
}

export interface ResolvePricesInput {
	provider: string | null;
	model: string | null;
	/** A preset given explicitly: used for every model. */
	explicit?: PricePreset;
	/** The model's prices in the user's models.json, when it lists them. */
	own?: Prices;
	/** The preset for a model the catalog does not price. */
	fallback: PricePreset;
}

export function resolveModelPrices(input: ResolvePricesInput): ModelPrices {
	const { provider, model } = input;
	const preset = (p: PricePreset) => ({ ...PRICE_PRESETS[p] });
	if (input.explicit !== undefined)
		return {
			provider,
			model,
			prices: preset(input.explicit),
			source: { type: "preset", preset: input.explicit, why: "--price" },
		};
	if (input.own !== undefined && !unpriced(input.own))
		return { provider, model, prices: { ...input.own }, source: { type: "models.json" } };
	const hit = lookupModel(provider, model);
	if (hit === null)
		return {
			provider,
			model,
			prices: preset(input.fallback),
			source: { type: "preset", preset: input.fallback, why: "unknown-model" },
		};
	const entry = `${hit.entry.provider}/${hit.entry.id}`;
	if (unpriced(hit.entry.prices))
		return {
			provider,
			model,
			prices: preset(input.fallback),
			source: { type: "preset", preset: input.fallback, why: "unpriced", catalogEntry: entry },
		};
	return { provider, model, prices: hit.entry.prices, source: { type: "catalog", match: hit.match, entry } };
}

export interface CostCheck {
	/** Billed responses whose usage states a cost (usage.cost.total). */
	responses: number;
	/** What they state, in US dollars. */
	stated: number;
	/** Their recorded token counts at the prices the simulation used: checks the prices. */
	recordedAtPrices: number;
	/** The no-folding estimate of the same requests: checks the simulation. */
	estimate: number;
}

/**
 * Compare the no-folding estimate with the costs the session states, over the responses that state
 * one. Null when none does. `pricesFor` gives each request's prices, as the biller had them.
 */
export function checkCosts(
	rows: readonly SimulatedRow[],
	entries: readonly PiEntry[],
	model: BillingModel,
	pricesFor: (row: SimulatedRow) => PriceSchedule | undefined,
): CostCheck | null {
	const usage = new Map<string, Usage>();
	for (const e of entries) {
		const u = e.type === "message" && e.message?.role === "assistant" ? e.message.usage : undefined;
		if (u !== undefined && u !== null)
			usage.set(e.id, {
				input: num(u.input),
				output: num(u.output),
				cacheRead: num(u.cacheRead),
				cacheWrite: num(u.cacheWrite),
			});
	}
	const check: CostCheck = { responses: 0, stated: 0, recordedAtPrices: 0, estimate: 0 };
	for (const row of rows) {
		const r = row.request;
		const recorded = usage.get(r.entryId);
		if (!r.billed || r.recordedCost === null || recorded === undefined || row.baseline === null) continue;
		check.responses++;
		check.stated += r.recordedCost;
		check.recordedAtPrices += costOf(recorded, requestPricing(model, pricesFor(row), promptOf(recorded)).rates);
		check.estimate += row.baseline.cost;
	}
	return check.responses === 0 ? null : check;
}

function num(v: unknown): number {
	return typeof v === "number" && Number.isFinite(v) && v > 0 ? v : 0;
}
