/**
 * Prices and context windows of Pi's built-in models, for pricing a session outside Pi (inside Pi,
 * `ctx.model` says it). The data is generated at build time from pi-ai's own catalogs
 * (model-catalog.generated.ts, written by scripts/gen-model-catalog.ts); this file parses it once and
 * looks models up. Pure: the same provider and id always find the same entry.
 *
 * Lookup, in order, returning which rule matched:
 * - `exact`: the provider and the model id both match;
 * - `id`: the id alone (a custom provider serving a built-in model), ignoring case;
 * - `family`: the longest catalog id that starts the model id at a separator (`-`, `.`, `:`, `@`,
 *   `/`, `_`), e.g. a dated `claude-opus-4-5-20260101` finds `claude-opus-4-5`.
 * Among several candidates of one rule: the session's provider first, then entries with a price,
 * then the price most of them agree on, then the provider name (code-unit order).
 */
import type { PriceSchedule, Prices, PriceTier } from "./accounting.ts";
import { CATALOG_SOURCES, CATALOG_TEXT } from "./model-catalog.generated.ts";

export { CATALOG_SOURCES };

export interface CatalogEntry {
	provider: string;
	id: string;
	contextWindow: number;
	prices: PriceSchedule;
	/** Prompt cache lifetimes in seconds (short and long retention), when the catalog knows them. */
	promptCache: { short: number | null; long: number | null } | null;
	/** compat.supportsMidConvoToolChanges: declaring a tool mid-session does not rewrite the prefix. */
	midConvoToolChanges: boolean;
	/** False when the catalog says the model has no long cache retention. */
	longCacheRetention: boolean;
}

export type CatalogMatch = "exact" | "id" | "family";

export interface CatalogHit {
	entry: CatalogEntry;
	match: CatalogMatch;
}

export interface Catalog {
	entries: readonly CatalogEntry[];
	byKey: ReadonlyMap<string, CatalogEntry>;
	/** Entries by lower-cased id. */
	byId: ReadonlyMap<string, readonly CatalogEntry[]>;
}

const SEPARATORS = new Set(["-", ".", ":", "@", "/", "_"]);

/** Parse catalog text (the generated module's format) into a lookup structure. Throws on a malformed line. */
export function parseCatalog(text: Readonly<Record<string, string>>): Catalog {
	const entries: CatalogEntry[] = [];
	for (const [provider, block] of Object.entries(text)) {
		for (const line of block.split("\n")) {
			if (line.trim() !== "") entries.push(parseLine(provider, line));
		}
	}
	const byKey = new Map<string, CatalogEntry>();
	const byId = new Map<string, CatalogEntry[]>();
	for (const e of entries) {
		byKey.set(keyOf(e.provider, e.id), e);
		const id = e.id.toLowerCase();
		const list = byId.get(id) ?? [];
		list.push(e);
		byId.set(id, list);
	}
	return { entries, byKey, byId };
}

function parseLine(provider: string, line: string): CatalogEntry {
	const [id, window, base, ...rest] = line.split(" ");
	const bad = (why: string) => new Error(`model catalog, ${provider}: ${why} in "${line}"`);
	const contextWindow = Number(window);
	if (id === undefined || id === "" || !Number.isInteger(contextWindow) || contextWindow <= 0)
		throw bad("no id or window");
	const prices: PriceSchedule = parseRates(base, bad);
	const tiers: PriceTier[] = [];
	const entry: CatalogEntry = {
		provider,
		id,
		contextWindow,
		prices,
		promptCache: null,
		midConvoToolChanges: false,
		longCacheRetention: true,
	};
	for (const field of rest) {
		if (field.startsWith(">")) {
			const colon = field.indexOf(":");
			const above = Number(field.slice(1, colon));
			if (colon < 0 || !Number.isFinite(above) || above < 0) throw bad(`bad tier ${field}`);
			tiers.push({ above, ...parseRates(field.slice(colon + 1), bad) });
		} else if (field.startsWith("cache:")) {
			const [short, long] = field.slice(6).split("/");
			entry.promptCache = { short: lifetime(short, bad), long: lifetime(long, bad) };
		} else if (field === "mid") entry.midConvoToolChanges = true;
		else if (field === "nolong") entry.longCacheRetention = false;
		else throw bad(`unknown field ${field}`);
	}
	if (tiers.length > 0) prices.tiers = tiers.sort((a, b) => a.above - b.above);
	return entry;
}

function parseRates(field: string | undefined, bad: (why: string) => Error): Prices {
	const n = (field ?? "").split("/").map(Number);
	if (n.length !== 4 || n.some((v) => !Number.isFinite(v) || v < 0)) throw bad(`bad prices ${field}`);
	const [input, output, cacheRead, cacheWrite] = n as [number, number, number, number];
	return { input, output, cacheRead, cacheWrite };
}

function lifetime(v: string | undefined, bad: (why: string) => Error): number | null {
	if (v === undefined || v === "-") return null;
	const n = Number(v);
	if (!Number.isFinite(n) || n < 0) throw bad(`bad cache lifetime ${v}`);
	return n;
}

function keyOf(provider: string, id: string): string {
	return `${provider}\u0000${id}`;
}

let builtin: Catalog | null = null;

/** The catalog built into this build (parsed on first use). */
export function modelCatalog(): Catalog {
	builtin ??= parseCatalog(CATALOG_TEXT);
	return builtin;
}

/** Find a model's entry: exact, by id alone, or by family (see the file header). Null when none fits. */
export function lookupModel(
	provider: string | null | undefined,
	id: string | null | undefined,
	catalog: Catalog = modelCatalog(),
): CatalogHit | null {
	if (id === null || id === undefined || id === "") return null;
	if (provider !== null && provider !== undefined) {
		const exact = catalog.byKey.get(keyOf(provider, id));
		if (exact !== undefined) return { entry: exact, match: "exact" };
	}
	const lower = id.toLowerCase();
	const same = catalog.byId.get(lower);
	if (same !== undefined) return { entry: pick(same, provider), match: "id" };
	for (let end = lower.length - 1; end > 0; end--) {
		if (!SEPARATORS.has(lower[end] as string)) continue;
		const family = catalog.byId.get(lower.slice(0, end));
		if (family !== undefined) return { entry: pick(family, provider), match: "family" };
	}
	return null;
}

function pick(candidates: readonly CatalogEntry[], provider: string | null | undefined): CatalogEntry {
	const own = candidates.find((e) => e.provider === provider);
	if (own !== undefined) return own;
	const priced = candidates.filter((e) => e.prices.input + e.prices.output > 0);
	const pool = priced.length > 0 ? priced : candidates;
	const votes = new Map<string, number>();
	for (const e of pool) votes.set(ratesKey(e.prices), (votes.get(ratesKey(e.prices)) ?? 0) + 1);
	return [...pool].sort(
		(a, b) =>
			(votes.get(ratesKey(b.prices)) ?? 0) - (votes.get(ratesKey(a.prices)) ?? 0) ||
			(a.provider < b.provider ? -1 : a.provider > b.provider ? 1 : 0),
	)[0] as CatalogEntry;
}

function ratesKey(p: PriceSchedule): string {
	return JSON.stringify([p.input, p.output, p.cacheRead, p.cacheWrite, p.tiers ?? []]);
}

/** The catalog lists no price: a free model, or one nobody priced. */
export function unpriced(p: Prices): boolean {
	return p.input === 0 && p.output === 0 && p.cacheRead === 0 && p.cacheWrite === 0;
}
