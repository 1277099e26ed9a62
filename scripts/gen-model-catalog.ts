/**
 * Writes src/core/model-catalog.generated.ts: the prices, context windows and prompt-cache facts of
 * every built-in model of the pi-ai versions installed here (getBuiltinProviders/getBuiltinModels
 * from `@earendil-works/pi-ai/providers/all`, the same export in 1.6.0 and 0.80.6), so that the CLI
 * can price a session without Pi. Data generated from a peer package, never the package bundled.
 *
 * The catalogs differ between versions (models added, removed, repriced). They are merged by
 * provider and model id: an entry present in several is taken whole from the newest version, an
 * entry only in an older one is kept (sessions recorded with that Pi still name it).
 *
 * The output is sorted and depends only on the installed catalogs: `npm run build` runs this, and
 * test/core/model-catalog.test.ts fails when the committed file differs from what it would write.
 *
 *   bun scripts/gen-model-catalog.ts           write the file when it changed
 *   bun scripts/gen-model-catalog.ts --check   exit 1 when the committed file is out of date
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";

const ROOT = join(import.meta.dir, "..");
export const CATALOG_FILE = join(ROOT, "src/core/model-catalog.generated.ts");
const SPECIFIER = "@earendil-works/pi-ai/providers/all";
/** Where each pi-ai is installed: beside Pi 1.6.0, and inside the pi-legacy alias (Pi 0.80.6). */
const INSTALLS = [ROOT, join(ROOT, "node_modules/pi-legacy")];

/** The fields of a pi-ai model that the catalog keeps (both versions' `Model` have these shapes). */
export interface SourceModel {
	id: string;
	provider: string;
	contextWindow: number;
	cost: {
		input: number;
		output: number;
		cacheRead: number;
		cacheWrite: number;
		tiers?: Array<{ inputTokensAbove: number; input: number; output: number; cacheRead: number; cacheWrite: number }>;
	};
	promptCache?: { short?: number; long?: number };
	compat?: { supportsMidConvoToolChanges?: boolean; supportsLongCacheRetention?: boolean };
}

export interface SourceCatalog {
	/** The pi-ai version, e.g. "1.6.0". */
	version: string;
	models: SourceModel[];
}

/** The catalogs of every pi-ai installed here, newest first. */
export async function loadInstalledCatalogs(): Promise<SourceCatalog[]> {
	const out: SourceCatalog[] = [];
	for (const from of INSTALLS) {
		let entry: string;
		try {
			entry = Bun.resolveSync(SPECIFIER, from);
		} catch {
			throw new Error(`${SPECIFIER} is not installed under ${from} (run npm install)`);
		}
		const mod = (await import(entry)) as {
			getBuiltinProviders(): string[];
			getBuiltinModels(provider: string): SourceModel[];
		};
		const models = mod.getBuiltinProviders().flatMap((p) => mod.getBuiltinModels(p));
		out.push({ version: packageVersion(entry), models });
	}
	return newestFirst(out);
}

function packageVersion(file: string): string {
	for (let dir = dirname(file); dir !== dirname(dir); dir = dirname(dir)) {
		const pkg = join(dir, "package.json");
		if (!existsSync(pkg)) continue;
		const json = JSON.parse(readFileSync(pkg, "utf8")) as { name?: string; version?: string };
		if (json.name === "@earendil-works/pi-ai" && typeof json.version === "string") return json.version;
	}
	throw new Error(`no package.json of @earendil-works/pi-ai above ${file}`);
}

/** Numeric comparison of dotted versions (pre-release tags sort before the release). */
export function compareVersions(a: string, b: string): number {
	const parse = (v: string) => {
		const [core = "", pre] = v.split("-", 2);
		return { nums: core.split(".").map((n) => Number.parseInt(n, 10) || 0), pre };
	};
	const x = parse(a);
	const y = parse(b);
	for (let i = 0; i < Math.max(x.nums.length, y.nums.length); i++) {
		const d = (x.nums[i] ?? 0) - (y.nums[i] ?? 0);
		if (d !== 0) return d;
	}
	if (x.pre === y.pre) return 0;
	if (x.pre === undefined) return 1;
	if (y.pre === undefined) return -1;
	return x.pre < y.pre ? -1 : 1;
}

/** Merge catalogs: the newest catalog naming a provider/id pair gives its entry. */
export function mergeCatalogs(catalogs: readonly SourceCatalog[]): SourceModel[] {
	const byKey = new Map<string, SourceModel>();
	for (const c of newestFirst(catalogs)) {
		for (const m of c.models) {
			const key = `${m.provider}\u0000${m.id}`;
			if (!byKey.has(key)) byKey.set(key, m);
		}
	}
	return [...byKey.values()].sort((a, b) => order(a.provider, b.provider) || order(a.id, b.id));
}

function newestFirst(catalogs: readonly SourceCatalog[]): SourceCatalog[] {
	return [...catalogs].sort((a, b) => compareVersions(b.version, a.version));
}

function order(a: string, b: string): number {
	return a < b ? -1 : a > b ? 1 : 0;
}

/** One model as one line of the generated file (format in its header, parsed by core/model-catalog.ts). */
export function catalogLine(m: SourceModel): string {
	if (/\s|`|\$\{|\\/.test(m.id)) throw new Error(`model id ${JSON.stringify(m.id)} cannot be written on one line`);
	const c = m.cost;
	const fields = [m.id, String(m.contextWindow), rates(c)];
	for (const t of [...(c.tiers ?? [])].sort((a, b) => a.inputTokensAbove - b.inputTokensAbove))
		fields.push(`>${t.inputTokensAbove}:${rates(t)}`);
	const pc = m.promptCache;
	if (pc !== undefined && (pc.short !== undefined || pc.long !== undefined))
		fields.push(`cache:${pc.short ?? "-"}/${pc.long ?? "-"}`);
	if (m.compat?.supportsMidConvoToolChanges === true) fields.push("mid");
	if (m.compat?.supportsLongCacheRetention === false) fields.push("nolong");
	return fields.join(" ");
}

function rates(r: { input: number; output: number; cacheRead: number; cacheWrite: number }): string {
	return [r.input, r.output, r.cacheRead, r.cacheWrite].map(price).join("/");
}

/** A negative price (0.80.6 marks openrouter/auto, whose price varies, with -1000000) is no price: 0. */
function price(n: number): string {
	return Number.isFinite(n) && n > 0 ? String(n) : "0";
}

/** The whole generated module, byte for byte. */
export function renderCatalogModule(given: readonly SourceCatalog[]): string {
	const catalogs = newestFirst(given);
	const merged = mergeCatalogs(catalogs);
	const byProvider = new Map<string, string[]>();
	for (const m of merged) {
		const lines = byProvider.get(m.provider) ?? [];
		lines.push(catalogLine(m));
		byProvider.set(m.provider, lines);
	}
	const sources = catalogs.map((c) => `"@earendil-works/pi-ai@${c.version}"`).join(", ");
	const body = [...byProvider]
		.map(([provider, lines]) => `\t${propertyKey(provider)}: \`\n${lines.join("\n")}\n\`,`)
		.join("\n");
	return `// Generated by scripts/gen-model-catalog.ts from the built-in model catalogs of
// ${catalogs.map((c) => `@earendil-works/pi-ai ${c.version}`).join(" and ")} (getBuiltinModels), merged by provider and id:
// an entry in several catalogs is taken from the newest. Do not edit: \`npm run build\` rewrites it.
// Over 300 lines on purpose: it is data, one model per line.
//
// One model per line, fields separated by spaces:
//   id contextWindow input/output/cacheRead/cacheWrite   (US dollars per million tokens)
// then, when the catalog gives them:
//   >N:input/output/cacheRead/cacheWrite   prices for a request of more than N input tokens
//   cache:short/long                       prompt cache lifetimes in seconds (- when unknown)
//   mid                                    compat.supportsMidConvoToolChanges
//   nolong                                 compat.supportsLongCacheRetention is false
// A price the catalog gives as negative (a price that varies) is written as 0, like an unknown one.

/** The pi-ai versions the catalog was generated from, newest first. */
export const CATALOG_SOURCES: readonly string[] = [${sources}];

/** Model lines by provider (${merged.length} models, ${byProvider.size} providers). */
export const CATALOG_TEXT: Readonly<Record<string, string>> = {
${body}
};
`;
}

function propertyKey(name: string): string {
	return /^[A-Za-z_$][\w$]*$/.test(name) ? name : JSON.stringify(name);
}

/** Bring the committed file up to date; with `check`, only say whether it is. Returns false when it was stale. */
export async function updateCatalogFile(check = false): Promise<boolean> {
	const text = renderCatalogModule(await loadInstalledCatalogs());
	const current = existsSync(CATALOG_FILE) ? readFileSync(CATALOG_FILE, "utf8") : null;
	if (current === text) {
		console.log("model catalog: up to date");
		return true;
	}
	if (check) {
		console.error(`model catalog: ${CATALOG_FILE} is out of date (run bun scripts/gen-model-catalog.ts)`);
		return false;
	}
	writeFileSync(CATALOG_FILE, text);
	console.log(`model catalog: wrote ${CATALOG_FILE}`);
	return false;
}

if (import.meta.main) {
	const check = process.argv.includes("--check");
	if (!(await updateCatalogFile(check)) && check) process.exit(1);
}
