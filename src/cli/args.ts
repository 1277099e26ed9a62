/**
 * A small, strict argument parser: long flags (`--name value`, `--name=value`), a few short
 * aliases, booleans, and positionals. Unknown flags and missing values are usage errors, never
 * silently ignored.
 */
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

export function parseArgs(argv: readonly string[], specs: FlagSpecs, usage?: string): ParsedArgs {
	const out: ParsedArgs = { positionals: [], flags: {} };
	const byShort = new Map(Object.entries(specs).flatMap(([name, s]) => (s.short ? [[s.short, name] as const] : [])));
	for (let i = 0; i < argv.length; i++) {
		const arg = argv[i] as string;
		if (arg === "--") {
			out.positionals.push(...argv.slice(i + 1));
			break;
		}
		let name: string | undefined;
		let inline: string | undefined;
		if (arg.startsWith("--") && arg.length > 2) {
			const eq = arg.indexOf("=");
			name = eq < 0 ? arg.slice(2) : arg.slice(2, eq);
			if (eq >= 0) inline = arg.slice(eq + 1);
		} else if (arg.startsWith("-") && arg.length === 2 && arg !== "-") {
			name = byShort.get(arg.slice(1));
			if (name === undefined) throw usageError(`unknown option ${arg}`, usage);
		} else {
			out.positionals.push(arg);
			continue;
		}
		const spec = specs[name];
		if (spec === undefined) throw usageError(`unknown option --${name}`, usage);
		let value: string | boolean;
		if (spec.type === "boolean") {
			if (inline !== undefined) throw usageError(`--${name} takes no value`, usage);
			value = true;
		} else if (inline !== undefined) {
			value = inline;
		} else {
			const next = argv[i + 1];
			if (next === undefined) throw usageError(`--${name} needs a value`, usage);
			value = next;
			i++;
		}
		if (spec.multiple && typeof value === "string") {
			const list = (out.flags[name] as string[] | undefined) ?? [];
			list.push(value);
			out.flags[name] = list;
		} else {
			out.flags[name] = value;
		}
	}
	return out;
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
