/**
 * Options of the economics benchmark, from the command line and the environment (the environment
 * is what `npm run bench` can pass through): CF_ECON_QUICK=1 (one session, three arms), CF_ECON_TRACE
 * (only sessions whose name contains one of its comma-separated words, e.g. `generated,p15`),
 * CF_ECON_SWEEP (all | default | none: which sessions the fold-at × fold-step sweep covers; default:
 * the whole recorded traces), CF_ECON_PRICES="input,output,cacheRead,cacheWrite" ($ per million, billed as
 * an extra sensitivity run), CF_ECON_JOBS (replays at a time, default 2).
 */
import { relative } from "node:path";
import type { Prices } from "../../../src/core/accounting.ts";
import type { SweepScope } from "./arms.ts";
import type { EconomicsOptions } from "./bench.ts";

export interface CliOptions extends Omit<EconomicsOptions, "log" | "command"> {
	docs: boolean;
}

export function parseOptions(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): CliOptions {
	const o: CliOptions = {
		quick: env.CF_ECON_QUICK === "1",
		jobs: positiveInt(env.CF_ECON_JOBS, "CF_ECON_JOBS") ?? 2,
		sweep: sweepScope(env.CF_ECON_SWEEP ?? "default", "CF_ECON_SWEEP"),
		docs: true,
		...(env.CF_ECON_TRACE ? { trace: env.CF_ECON_TRACE } : {}),
		...(env.CF_ECON_PRICES ? { customPrices: parsePrices(env.CF_ECON_PRICES) } : {}),
	};
	for (let i = 0; i < argv.length; i++) {
		const arg = argv[i];
		const value = () => {
			const v = argv[++i];
			if (v === undefined) throw new Error(`${arg} needs a value`);
			return v;
		};
		if (arg === "--quick") o.quick = true;
		else if (arg === "--no-docs") o.docs = false;
		else if (arg === "--trace") o.trace = value();
		else if (arg === "--prices") o.customPrices = parsePrices(value());
		else if (arg === "--jobs") o.jobs = positiveInt(value(), "--jobs") ?? 2;
		else if (arg === "--sweep") o.sweep = sweepScope(value(), "--sweep");
		else
			throw new Error(
				`unknown argument: ${arg} (use --quick, --trace <words,…>, --sweep all|default|none, --prices i,o,r,w, --jobs <n>, --no-docs)`,
			);
	}
	return o;
}

export function parsePrices(raw: string): Prices {
	const parts = raw.split(",").map((s) => Number(s.trim()));
	if (parts.length !== 4 || parts.some((n) => !Number.isFinite(n) || n < 0)) {
		throw new Error(`prices must be "input,output,cacheRead,cacheWrite" in $ per million, got ${raw}`);
	}
	const [input, output, cacheRead, cacheWrite] = parts as [number, number, number, number];
	return { input, output, cacheRead, cacheWrite };
}

function sweepScope(raw: string, name: string): SweepScope {
	if (raw === "all" || raw === "default" || raw === "none") return raw;
	throw new Error(`${name} must be all, default or none, got ${raw}`);
}

function positiveInt(raw: string | undefined, name: string): number | undefined {
	if (raw === undefined || raw === "") return undefined;
	const n = Number(raw);
	if (!Number.isInteger(n) || n < 1) throw new Error(`${name} must be a whole number >= 1, got ${raw}`);
	return n;
}

/** The exact command, as typed: the npm script when there is one, then what it ran. */
export function commandLine(argv: readonly string[] = process.argv, env: NodeJS.ProcessEnv = process.env): string {
	const script = argv[1] ? relative(process.cwd(), argv[1]) : "test/bench/economics/run.ts";
	const direct = ["bun", script, ...argv.slice(2)].join(" ");
	const vars = ["CF_ECON_QUICK", "CF_ECON_TRACE", "CF_ECON_SWEEP", "CF_ECON_PRICES", "CF_ECON_JOBS"]
		.filter((k) => env[k] !== undefined && env[k] !== "")
		.map((k) => `${k}=${env[k]}`)
		.join(" ");
	const npm = env.npm_lifecycle_event ? `npm run ${env.npm_lifecycle_event} → ` : "";
	return `${vars ? `${vars} ` : ""}${npm}${direct}`;
}
