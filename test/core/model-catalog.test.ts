// The per-model price table: generated from pi-ai's catalogs (merged, newest wins), committed, and
// looked up by provider and id with stated fallbacks.
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import {
	CATALOG_FILE,
	catalogLine,
	compareVersions,
	loadInstalledCatalogs,
	mergeCatalogs,
	renderCatalogModule,
	type SourceCatalog,
	type SourceModel,
} from "../../scripts/gen-model-catalog.ts";
import { ratesAt } from "../../src/core/accounting.ts";
import { CATALOG_SOURCES, lookupModel, modelCatalog, parseCatalog, unpriced } from "../../src/core/model-catalog.ts";

const installed = await loadInstalledCatalogs();

function model(
	provider: string,
	id: string,
	input: number,
	window = 100_000,
	extra: Partial<SourceModel> = {},
): SourceModel {
	return {
		provider,
		id,
		contextWindow: window,
		cost: { input, output: input * 5, cacheRead: input / 10, cacheWrite: input * 1.25 },
		...extra,
	};
}

/** The generator writes a negative price (pi-ai's mark for one that varies) as 0. */
function noNegative<T extends Record<string, number>>(r: T): T {
	return Object.fromEntries(Object.entries(r).map(([k, v]) => [k, Math.max(v, 0)])) as T;
}

describe("the generated catalog", () => {
	test("the committed file is what the installed pi-ai catalogs generate (run bun scripts/gen-model-catalog.ts)", () => {
		expect(installed.map((c) => c.version)).toEqual(["1.6.0", "0.80.6"]);
		expect(readFileSync(CATALOG_FILE, "utf8")).toBe(renderCatalogModule(installed));
		expect(CATALOG_SOURCES).toEqual(["@earendil-works/pi-ai@1.6.0", "@earendil-works/pi-ai@0.80.6"]);
	});

	test("every merged model reads back exactly: window, prices, tiers, cache lifetimes, compat flags", () => {
		const merged = mergeCatalogs(installed);
		const catalog = modelCatalog();
		expect(catalog.entries).toHaveLength(merged.length);
		for (const m of merged) {
			const hit = lookupModel(m.provider, m.id);
			expect(hit?.match).toBe("exact");
			const e = hit?.entry;
			expect(e?.contextWindow).toBe(m.contextWindow);
			const { tiers, ...base } = m.cost;
			expect(e?.prices).toEqual({
				...noNegative(base),
				...(tiers !== undefined && tiers.length > 0
					? {
							tiers: tiers
								.map(({ inputTokensAbove, ...r }) => ({ above: inputTokensAbove, ...noNegative(r) }))
								.sort((a, b) => a.above - b.above),
						}
					: {}),
			});
			expect(e?.promptCache).toEqual(
				m.promptCache === undefined ? null : { short: m.promptCache.short ?? null, long: m.promptCache.long ?? null },
			);
			expect(e?.midConvoToolChanges).toBe(m.compat?.supportsMidConvoToolChanges === true);
			expect(e?.longCacheRetention).toBe(m.compat?.supportsLongCacheRetention !== false);
		}
	});

	test("both versions contribute: an entry in both comes from 1.6.0, one only in 0.80.6 is kept", () => {
		const [newer, older] = installed as [SourceCatalog, SourceCatalog];
		const key = (m: SourceModel) => `${m.provider}/${m.id}`;
		const newKeys = new Set(newer.models.map(key));
		const onlyOld = older.models.filter((m) => !newKeys.has(key(m)));
		const differing = older.models.filter((m) => {
			const n = newer.models.find((x) => key(x) === key(m));
			return n !== undefined && catalogLine(n) !== catalogLine(m);
		});
		expect(onlyOld.length).toBeGreaterThan(0);
		expect(differing.length).toBeGreaterThan(0);
		for (const m of onlyOld) expect(lookupModel(m.provider, m.id)?.entry.contextWindow).toBe(m.contextWindow);
		for (const m of differing) {
			const n = newer.models.find((x) => key(x) === key(m)) as SourceModel;
			expect(lookupModel(m.provider, m.id)?.entry.contextWindow).toBe(n.contextWindow);
			expect(lookupModel(m.provider, m.id)?.entry.prices.input).toBe(n.cost.input);
		}
	});

	test("models with zero prices are kept", () => {
		const zero = modelCatalog().entries.filter((e) => unpriced(e.prices));
		expect(zero.length).toBeGreaterThan(0);
		expect(zero.length).toBe(
			mergeCatalogs(installed).filter(
				(m) => m.cost.input + m.cost.output === 0 && m.cost.cacheRead + m.cost.cacheWrite === 0,
			).length,
		);
	});

	test("the claude-opus session's model is priced at Opus rates, not Sonnet's", () => {
		const opus = installed[0]?.models.find((m) => m.provider === "anthropic" && m.id === "claude-opus-4-5");
		expect(opus).toBeDefined();
		const hit = lookupModel("anthropic", "claude-opus-4-5");
		expect(hit?.entry.prices).toEqual({
			input: opus?.cost.input,
			output: opus?.cost.output,
			cacheRead: opus?.cost.cacheRead,
			cacheWrite: opus?.cost.cacheWrite,
		} as never);
		expect(hit?.entry.prices.input).not.toBe(3);
	});
});

describe("merging and writing", () => {
	const older: SourceCatalog = {
		version: "0.80.6",
		models: [model("p", "kept-old", 1), model("p", "both", 1, 1_000_000)],
	};
	const newer: SourceCatalog = {
		version: "1.6.0",
		models: [model("p", "both", 2, 200_000), model("a", "new-only", 3)],
	};

	test("newest wins whole, older-only entries stay, the order given does not matter", () => {
		const expected = [model("a", "new-only", 3), model("p", "both", 2, 200_000), model("p", "kept-old", 1)];
		expect(mergeCatalogs([older, newer])).toEqual(expected);
		expect(mergeCatalogs([newer, older])).toEqual(expected);
		expect(renderCatalogModule([older, newer])).toBe(renderCatalogModule([newer, older]));
	});

	test("versions compare numerically, pre-releases before releases", () => {
		expect(compareVersions("1.6.0", "0.80.6")).toBeGreaterThan(0);
		expect(compareVersions("0.80.10", "0.80.9")).toBeGreaterThan(0);
		expect(compareVersions("1.0.0-beta", "1.0.0")).toBeLessThan(0);
		expect(compareVersions("1.0.0", "1.0.0")).toBe(0);
	});

	test("one line per model, optional fields only when given", () => {
		expect(catalogLine(model("p", "m", 3))).toBe("m 100000 3/15/0.3/3.75");
		expect(
			catalogLine(
				model("p", "m", 1, 1_000_000, {
					cost: {
						input: 1,
						output: 2,
						cacheRead: 0.1,
						cacheWrite: 0,
						tiers: [
							{ inputTokensAbove: 272_000, input: 4, output: 5, cacheRead: 0.4, cacheWrite: 0 },
							{ inputTokensAbove: 128_000, input: 2, output: 3, cacheRead: 0.2, cacheWrite: 0 },
						],
					},
					promptCache: { short: 300 },
					compat: { supportsMidConvoToolChanges: true, supportsLongCacheRetention: false },
				}),
			),
		).toBe("m 1000000 1/2/0.1/0 >128000:2/3/0.2/0 >272000:4/5/0.4/0 cache:300/- mid nolong");
		expect(() => catalogLine(model("p", "a b", 1))).toThrow("cannot be written on one line");
		// 0.80.6 gives openrouter/auto, whose price varies, as -1000000: no price.
		expect(catalogLine(model("p", "m", -1_000_000))).toBe("m 100000 0/0/0/0");
	});

	test("what is written parses back", () => {
		const text = renderCatalogModule([older, newer]);
		const blocks: Record<string, string> = {};
		for (const m of text.matchAll(/\n\t"?([\w-]+)"?: `\n([^`]*)`/g)) blocks[m[1] as string] = m[2] as string;
		const c = parseCatalog(blocks);
		expect(c.entries.map((e) => `${e.provider}/${e.id} ${e.contextWindow} ${e.prices.input}`)).toEqual([
			"a/new-only 100000 3",
			"p/both 200000 2",
			"p/kept-old 100000 1",
		]);
	});
});

describe("lookup", () => {
	const catalog = parseCatalog({
		anthropic: "claude-x-4 200000 5/25/0.5/6.25 cache:300/3600\nclaude-x-4-1 200000 15/75/1.5/18.75",
		copilot: "claude-x-4 128000 0/0/0/0\ngpt-y 400000 0/0/0/0",
		gateway: "claude-x-4 200000 5/25/0.5/6.25\ngpt-y 400000 1.25/10/0.125/0",
		zproxy: "claude-x-4 200000 6/30/0.6/7.5",
		openai: "gpt-y 400000 1.25/10/0.125/0 >272000:2.5/20/0.25/0",
	});

	test.each([
		["exact provider and id", "copilot", "claude-x-4", "exact", "copilot/claude-x-4"],
		[
			"id alone: the price most priced entries agree on, then the provider name",
			"mine",
			"claude-x-4",
			"id",
			"anthropic/claude-x-4",
		],
		["id alone ignores case", "mine", "Claude-X-4", "id", "anthropic/claude-x-4"],
		["id alone with no provider", null, "gpt-y", "id", "gateway/gpt-y"],
		[
			"family: a dated id finds the longest listed prefix",
			"anthropic",
			"claude-x-4-1-20260101",
			"family",
			"anthropic/claude-x-4-1",
		],
		["family: stops at a separator", "anthropic", "claude-x-4@latest", "family", "anthropic/claude-x-4"],
		[
			"family keeps the session's provider when it lists the family",
			"copilot",
			"claude-x-4-20260101",
			"family",
			"copilot/claude-x-4",
		],
	] as const)("%s", (_, provider, id, match, found) => {
		const hit = lookupModel(provider, id, catalog);
		expect(hit?.match).toBe(match);
		expect(`${hit?.entry.provider}/${hit?.entry.id}`).toBe(found);
	});

	test("no fit: not a separator boundary, unknown, or no id", () => {
		expect(lookupModel("anthropic", "claude-x-40", catalog)).toBeNull();
		expect(lookupModel("anthropic", "nothing-like-it", catalog)).toBeNull();
		expect(lookupModel("anthropic", null, catalog)).toBeNull();
		expect(lookupModel("anthropic", "", catalog)).toBeNull();
	});

	test("tiers: the highest threshold the prompt is above applies to the whole request", () => {
		const gpt = lookupModel("openai", "gpt-y", catalog)?.entry.prices;
		expect(gpt).toBeDefined();
		if (gpt === undefined) return;
		expect(ratesAt(gpt, 272_000)).toEqual({ input: 1.25, output: 10, cacheRead: 0.125, cacheWrite: 0 });
		expect(ratesAt(gpt, 272_001)).toEqual({ input: 2.5, output: 20, cacheRead: 0.25, cacheWrite: 0 });
		const two = {
			input: 1,
			output: 1,
			cacheRead: 1,
			cacheWrite: 1,
			tiers: [
				{ above: 10, input: 2, output: 2, cacheRead: 2, cacheWrite: 2 },
				{ above: 20, input: 3, output: 3, cacheRead: 3, cacheWrite: 3 },
			],
		};
		expect([5, 15, 25].map((n) => ratesAt(two, n).input)).toEqual([1, 2, 3]);
	});

	test("a malformed line is an error naming it", () => {
		expect(() => parseCatalog({ p: "m 0 1/2/3/4" })).toThrow('model catalog, p: no id or window in "m 0 1/2/3/4"');
		expect(() => parseCatalog({ p: "m 10 1/2/3" })).toThrow("bad prices 1/2/3");
		expect(() => parseCatalog({ p: "m 10 1/2/3/4 >x:1/2/3/4" })).toThrow("bad tier");
		expect(() => parseCatalog({ p: "m 10 1/2/3/4 cache:a/-" })).toThrow("bad cache lifetime a");
		expect(() => parseCatalog({ p: "m 10 1/2/3/4 shiny" })).toThrow("unknown field shiny");
	});
});
