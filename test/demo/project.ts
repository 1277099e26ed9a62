/**
 * The sandbox project the demo agent works on: "ledgerline", a TypeScript billing service whose build
 * broke when decimal-kit went from 2.x to 3.0. Source modules are generated from templates with a
 * fixed seed, and every line tsc would reject is recorded as a BugSite, so the build logs point at
 * real lines of real files and the agent's edits match the files exactly.
 */
import type { Seeded } from "./seeded.ts";

export const DECIMAL_IMPORT = `import { Decimal } from "decimal-kit";`;

export interface BugSite {
	path: string;
	/** 1-based position, as tsc reports it. */
	line: number;
	col: number;
	/** Length of tsc's underline. */
	span: number;
	code: string;
	message: string;
	detail?: string;
	/** The rejected line, its fix, and the function signature above it (which makes an edit unique). */
	text: string;
	fixed: string;
	signature: string;
}

export interface SourceModule {
	path: string;
	text: string;
	sites: BugSite[];
	functions: string[];
}

type SiteKind = "from" | "round" | "sum";

export interface ModuleSpec {
	path: string;
	/** Type prefix, e.g. "Invoice". */
	entity: string;
	clean: number;
	sites: SiteKind[];
	/** Hand-written lines appended at the end (targets of later, non-tsc fixes). */
	tail?: string[];
}

const VERBS = ["compute", "apply", "resolve", "normalize", "validate", "build", "merge", "split", "collect", "settle"];
const NOUNS = ["Totals", "Lines", "Rules", "Tiers", "Adjustments", "Balance", "Schedule", "Window", "Ledger", "Batch"];
const FIELDS = ["amount", "subtotal", "balance", "unitPrice", "taxableAmount", "credit", "fee", "rate"];
const PLURALS = ["items", "lines", "entries", "adjustments", "charges"];
const FLAGS = ["billable", "active", "approved", "taxable", "settled"];
const OPTIONS = ["dryRun", "strict", "includeZero", "roundPerLine", "skipArchived"];
const DOCS = [
	"Computes the header totals from the line items",
	"Applies the configured rules in priority order",
	"Normalizes amounts to the currency's minor unit",
	"Validates the input before anything is persisted",
	"Merges adjustments into the open balance",
	"Splits a charge across the billing periods it covers",
];
const COMMENTS = [
	"Amounts stay in minor-unit precision until the final rounding step.",
	"Mixed currencies are rejected upstream; assert rather than convert here.",
	"Keep the original order: statements list lines as the customer entered them.",
	"Zero-value lines still appear on the invoice for audit purposes.",
	"The ledger is append-only, so corrections become new adjustment lines.",
	"Guard against float drift: never convert to number before formatting.",
];

function upper(entity: string): string {
	return entity.replace(/([a-z])([A-Z])/g, "$1_$2").toUpperCase();
}

function header(spec: ModuleSpec, r: Seeded): string[] {
	const t = spec.entity;
	const fields = FIELDS.slice(0, r.int(4, 7));
	return [
		DECIMAL_IMPORT,
		`import { BillingError } from "../errors";`,
		`import type { CurrencyCode } from "../money/currency";`,
		`import { log } from "../util/logger";`,
		"",
		`export interface ${t}Line {`,
		"\tid: string;",
		"\tcurrency: CurrencyCode;",
		...fields.map((f) => `\t${f}: Decimal;`),
		...FLAGS.slice(0, 3).map((f) => `\t${f}: boolean;`),
		"}",
		"",
		`export interface ${t}Input {`,
		"\tid: string;",
		"\tcurrency: CurrencyCode;",
		...fields.map((f) => `\t${f}: Decimal;`),
		...PLURALS.map((p) => `\t${p}: ${t}Line[];`),
		"}",
		"",
		`export interface ${t}Options {`,
		"\tscale: number;",
		...OPTIONS.map((o) => `\t${o}: boolean;`),
		"}",
		"",
		`export interface ${t}Result {`,
		"\tid: string;",
		"\tcount?: number;",
		"\tskipped?: boolean;",
		...fields.map((f) => `\t${f}?: Decimal;`),
		"}",
		"",
		`export const DEFAULT_${upper(t)}_OPTIONS: ${t}Options = {`,
		"\tscale: 2,",
		...OPTIONS.map((o, i) => `\t${o}: ${i % 2 === 0 ? "false" : "true"},`),
		"};",
	];
}

interface FirstLine {
	text: string;
	site?: Omit<BugSite, "path" | "line" | "signature">;
}

function firstLine(kind: SiteKind | null, v: string, r: Seeded): FirstLine {
	const field = r.pick(FIELDS.slice(0, 4));
	const plural = r.pick(PLURALS);
	if (kind === "from") {
		const text = `\tconst ${v}: Decimal = Decimal.from(input.${field}.toString());`;
		return {
			text,
			site: {
				col: text.indexOf(v) + 1,
				span: v.length,
				code: "TS2322",
				message: "Type 'Decimal | undefined' is not assignable to type 'Decimal'.",
				detail: "Type 'undefined' is not assignable to type 'Decimal'.",
				text,
				fixed: `\tconst ${v}: Decimal = toDecimal(input.${field}.toString());`,
			},
		};
	}
	if (kind === "round") {
		const text = `\tconst ${v} = input.${field}.round(options.scale);`;
		return {
			text,
			site: {
				col: text.indexOf(".round(") + 2,
				span: "round".length,
				code: "TS2339",
				message: "Property 'round' does not exist on type 'Decimal'.",
				text,
				fixed: `\tconst ${v} = input.${field}.toDecimalPlaces(options.scale, RoundingMode.HalfEven);`,
			},
		};
	}
	if (kind === "sum") {
		const text = `\tconst ${v} = Decimal.sum(input.${plural}.map((line) => line.${field}.toString()));`;
		return {
			text,
			site: {
				col: text.indexOf("input.") + 1,
				span: `input.${plural}.map((line) => line.${field}.toString())`.length,
				code: "TS2345",
				message: "Argument of type 'string[]' is not assignable to parameter of type 'readonly DecimalInput[]'.",
				detail: "Type 'string' is not assignable to type 'DecimalInput'.",
				text,
				fixed: `\tconst ${v} = Decimal.sum(input.${plural}.map((line) => toDecimal(line.${field}.toString())));`,
			},
		};
	}
	return { text: `\tconst ${v} = input.${field};` };
}

function body(fn: string, entity: string, v: string, r: Seeded): string[] {
	const plural = r.pick(PLURALS);
	const field = r.pick(FIELDS.slice(0, 4));
	const out: string[] = [];
	if (r.chance(0.5)) out.push(`\t// ${r.pick(COMMENTS)}`);
	if (r.chance(0.6)) {
		out.push(
			`\tif (${v}.isNegative()) {`,
			`\t\tthrow new BillingError("${upper(entity)}_NEGATIVE", \`${entity.toLowerCase()} \${input.id}: negative ${field}\`);`,
			"\t}",
		);
	}
	if (r.chance(0.7)) {
		const flag = r.pick(FLAGS.slice(0, 3));
		out.push(
			`\tconst selected = input.${plural}.filter((line) => line.${flag} && line.currency === input.currency);`,
			"\tfor (const line of selected) {",
			`\t\tlog.debug("${fn}", { id: line.id, ${field}: line.${field}.toString() });`,
			"\t}",
		);
	}
	if (r.chance(0.5)) {
		out.push(`\tconst total = input.${plural}.reduce((acc, line) => acc.plus(line.${field}), Decimal.zero());`);
		out.push(`\tif (total.greaterThan(${v}) && options.strict) {`);
		out.push(`\t\tlog.warn("${fn}: lines exceed header", { id: input.id, total: total.toString() });`);
		out.push("\t}");
	}
	if (r.chance(0.4)) {
		const opt = r.pick(OPTIONS);
		out.push(`\tif (options.${opt}) {`, `\t\treturn { id: input.id, ${field}: ${v}, skipped: true };`, "\t}");
	}
	out.push(`\treturn { id: input.id, ${field}: ${v}, count: input.${plural}.length };`);
	return out;
}

/** One generated module; sites are placed on the first body line of randomly chosen functions. */
export function generateModule(spec: ModuleSpec, r: Seeded): SourceModule {
	const t = spec.entity;
	const lines = header(spec, r);
	const kinds: Array<SiteKind | null> = [...spec.sites, ...new Array<null>(spec.clean).fill(null)];
	for (let i = kinds.length - 1; i > 0; i--) {
		const j = r.int(0, i);
		[kinds[i], kinds[j]] = [kinds[j] ?? null, kinds[i] ?? null];
	}
	const used = new Set<string>();
	const sites: BugSite[] = [];
	const functions: string[] = [];
	for (const kind of kinds) {
		let fn = "";
		do fn = `${r.pick(VERBS)}${t}${r.pick(NOUNS)}`;
		while (used.has(fn));
		used.add(fn);
		functions.push(fn);
		const v = `${r.pick(["net", "gross", "base", "due", "open"])}${r.pick(["Amount", "Value", "Total"])}`;
		const signature = `export function ${fn}(input: ${t}Input, options: ${t}Options = DEFAULT_${upper(t)}_OPTIONS): ${t}Result {`;
		lines.push("", `/** ${r.pick(DOCS)} (${t.toLowerCase()}). */`);
		lines.push(signature);
		const first = firstLine(kind, v, r);
		lines.push(first.text);
		if (first.site) sites.push({ ...first.site, path: spec.path, line: lines.length, signature });
		lines.push(...body(fn, t, v, r), "}");
	}
	if (spec.tail) lines.push("", ...spec.tail);
	lines.push("");
	return { path: spec.path, text: lines.join("\n"), sites, functions };
}

export interface Edit {
	oldText: string;
	newText: string;
}

/** The edits[] of one `edit` call fixing `sites` of a module (and its import, when asked). */
export function siteEdits(sites: readonly BugSite[], withImport: boolean): Edit[] {
	const edits: Edit[] = [];
	if (withImport) {
		edits.push({
			oldText: DECIMAL_IMPORT,
			newText: `import { Decimal, RoundingMode } from "decimal-kit";\nimport { toDecimal } from "../money/decimal";`,
		});
	}
	for (const s of sites) {
		edits.push({ oldText: `${s.signature}\n${s.text}`, newText: `${s.signature}\n${s.fixed}` });
	}
	return edits;
}

/** Applies edits the way Pi's edit tool requires them: each oldText exactly once in the file. */
export function applyEdits(path: string, text: string, edits: readonly Edit[]): string {
	let out = text;
	for (const e of edits) {
		const at = out.indexOf(e.oldText);
		if (at < 0 || out.indexOf(e.oldText, at + 1) >= 0) {
			throw new Error(`demo session: edit of ${path} does not match exactly once: ${e.oldText.slice(0, 80)}`);
		}
		out = out.slice(0, at) + e.newText + out.slice(at + e.oldText.length);
	}
	return out;
}
