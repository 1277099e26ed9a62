// Which prices a replayed request is billed at: --price, then models.json, then pi-ai's catalog,
// then a preset for the provider; each answer says where it came from.
import { describe, expect, test } from "bun:test";
import { PRICE_PRESETS } from "../../../src/core/accounting.ts";
import { lookupModel } from "../../../src/core/model-catalog.ts";
import { resolveModelPrices } from "../../../src/core/simulate/pricing.ts";

const own = { input: 1, output: 2, cacheRead: 0.1, cacheWrite: 1.25 };

describe("resolveModelPrices", () => {
	test("an explicit preset wins over everything", () => {
		expect(
			resolveModelPrices({
				provider: "anthropic",
				model: "claude-opus-4-5",
				explicit: "gemini",
				own,
				fallback: "anthropic",
			}),
		).toEqual({
			provider: "anthropic",
			model: "claude-opus-4-5",
			prices: { ...PRICE_PRESETS.gemini },
			source: { type: "preset", preset: "gemini", why: "--price" },
		});
	});

	test("models.json prices come before the catalog, unless they are all zero", () => {
		expect(
			resolveModelPrices({ provider: "anthropic", model: "claude-opus-4-5", own, fallback: "anthropic" }).source,
		).toEqual({
			type: "models.json",
		});
		const zero = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 };
		const r = resolveModelPrices({ provider: "anthropic", model: "claude-opus-4-5", own: zero, fallback: "anthropic" });
		expect(r.source).toEqual({ type: "catalog", match: "exact", entry: "anthropic/claude-opus-4-5" });
		expect(r.prices).toEqual(lookupModel("anthropic", "claude-opus-4-5")?.entry.prices as never);
	});

	test("the catalog says how it matched; an unknown model gets the fallback preset", () => {
		expect(resolveModelPrices({ provider: "proxy", model: "claude-opus-4-5", fallback: "anthropic" }).source).toEqual({
			type: "catalog",
			match: "id",
			entry: "anthropic/claude-opus-4-5",
		});
		expect(resolveModelPrices({ provider: "proxy", model: "no-such-model", fallback: "openai" })).toEqual({
			provider: "proxy",
			model: "no-such-model",
			prices: { ...PRICE_PRESETS.openai },
			source: { type: "preset", preset: "openai", why: "unknown-model" },
		});
		expect(resolveModelPrices({ provider: null, model: null, fallback: "anthropic" }).source).toEqual({
			type: "preset",
			preset: "anthropic",
			why: "unknown-model",
		});
	});
});
