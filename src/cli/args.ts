/**
 * Command-line parsing on node:util's parseArgs (strict: unknown flags and missing values are usage
 * errors, never silently ignored), wrapped so that every failure is a usage error in our own words.
 *
 * One difference from parseArgs is kept on purpose: a value that starts with "-" after a flag that
 * takes one (`--grep -pPW`, `--overhead -5`) is that flag's value, as people type it; strict
 * parseArgs would call it ambiguous and ask for `--grep=-pPW`.
 */
import { type ParseArgsConfig, parseArgs as parseNodeArgs } from "node:util";
import { usageError } from "./errors.ts";

export interface FlagSpec {
	type: "string" | "boolean";
	short?: string;
	/** May be given more than once (values collected in order). */
	multiple?: boolean;
}

export type FlagSpecs = Record<string, FlagSpec>;

export interface ParsedArgs {
	positionals: string[];
	flags: Record<string, string | boolean | string[] | undefined>;
}

type Token = NonNullable<ReturnType<typeof parseNodeArgs>["tokens"]>[number];

export function parseArgs(argv: readonly string[], specs: FlagSpecs, usage?: string): ParsedArgs {
	const options = specs as ParseArgsConfig["options"];
	// A lenient pass reads every flag the way a person meant it; its tokens say where each value is.
	const { tokens } = parseNodeArgs({ args: [...argv], options, strict: false, allowPositionals: true, tokens: true });
	const args = [...argv];
	for (const t of [...tokens].reverse()) {
		if (t.kind !== "option" || specs[t.name]?.type !== "string" || t.inlineValue !== false) continue;
		// `--grep -pPW` becomes `--grep=-pPW`, which strict mode takes as it stands.
		args.splice(t.index, 2, `--${t.name}=${t.value}`);
	}
	try {
		const parsed = parseNodeArgs({ args, options, strict: true, allowPositionals: true });
		return { positionals: parsed.positionals, flags: { ...parsed.values } };
	} catch (error) {
		if (!(error as { code?: string }).code?.startsWith("ERR_PARSE_ARGS")) throw error;
		throw usageError(describeFailure(tokens, specs), usage);
	}
}

/** What strict mode refused, said in the CLI's words (parseArgs' own messages differ between runtimes). */
function describeFailure(tokens: readonly Token[], specs: FlagSpecs): string {
	for (const t of tokens) {
		if (t.kind !== "option") continue;
		const spec = specs[t.name];
		if (spec === undefined) return `unknown option ${t.rawName.startsWith("--") ? t.rawName : `-${t.name}`}`;
		if (spec.type === "string" && t.value === undefined) return `--${t.name} needs a value`;
		if (spec.type === "boolean" && t.value !== undefined) return `--${t.name} takes no value`;
	}
	return "the options could not be read";
}

export function stringFlag(args: ParsedArgs, name: string): string | undefined {
	const v = args.flags[name];
	return typeof v === "string" ? v : undefined;
}

export function boolFlag(args: ParsedArgs, name: string): boolean {
	return args.flags[name] === true;
}

/** A positive whole number from a flag, or undefined when absent. */
export function intFlag(args: ParsedArgs, name: string, usage?: string): number | undefined {
	const raw = stringFlag(args, name);
	if (raw === undefined) return undefined;
	const n = Number(raw.replace(/[_,]/g, ""));
	if (!Number.isInteger(n) || n <= 0) throw usageError(`--${name} needs a positive whole number, got "${raw}"`, usage);
	return n;
}

/** Flags that contradict each other (`--limit 1 --all`): giving more than one is a usage error. */
export function exclusiveFlags(args: ParsedArgs, names: readonly string[], usage?: string): void {
	const given = names.filter((n) => args.flags[n] !== undefined && args.flags[n] !== false);
	if (given.length > 1)
		throw usageError(`${given.map((n) => `--${n}`).join(" and ")} contradict each other; give one`, usage);
}
