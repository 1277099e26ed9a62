/**
 * Every knob, its default, and how a raw value is validated and shown. How the sources combine
 * (default < saved settings file < environment variable) is resolved-settings.ts.
 * Values in, values out: reading the environment and the file is the adapter's job.
 */

/**
 * 0.30, not the 0.45 the product description started from: in the economics benchmark (three real
 * sessions replayed through Pi) a first fold at 30 % of the window was cheaper on every trace
 * (geometric mean 0.790x native against 0.836x at 45 %); see docs/BENCHMARKS.md.
 */
export const DEFAULT_FOLD_AT = 0.3;
/**
 * 0.06, not 0.12: in the same benchmark a half-size step was cheaper on two of three traces and
 * overall (geometric mean 0.772x native against 0.780x), and it is the only grid point where no
 * trace cost more than Pi without context-fold. Each event rewrites about the protected tail, so a
 * smaller step mostly means earlier savings, not more churn.
 */
export const DEFAULT_FOLD_STEP = 0.06;
export const DEFAULT_COLD_FOLD_AT = 0.25;
export const DEFAULT_BUDGET_FRACTION = 0.75;
export const DEFAULT_BUDGET_CAP = 200_000;
export const DEFAULT_TAIL = 20_000;
export const DEFAULT_COMPACT = "det" as const;
/** Early compaction (policy/compact.ts): decided by the economics benchmark, see docs/BENCHMARKS.md. */
export const DEFAULT_EARLY_COMPACT: EarlyCompactMode = "priced";
export const DEFAULT_RECON_TOKENS = 18_000;
export const DEFAULT_CACHE_IDLE_MINUTES = 30;
export const DEFAULT_RECALL_TOKENS = 4_000;

export type CompactMode = "det" | "native";
/** `priced`: compact early between runs when the price says so (only with CONTEXTFOLD_COMPACT=det); `off`: only Pi's threshold. */
export type EarlyCompactMode = "priced" | "off";

export interface Settings {
	foldAt: number;
	foldStep: number;
	coldFoldAt: number;
	budgetFraction: number;
	/** Absolute budget ceiling in tokens; null disables the cap. */
	budgetCap: number | null;
	tail: number;
	compact: CompactMode;
	earlyCompact: EarlyCompactMode;
	reconTokens: number;
	/** Idle minutes before the cache warning; null disables prediction and send confirmation. */
	cacheIdleMinutes: number | null;
	/** Per-provider idle overrides from the settings file. */
	providerCacheIdleMinutes: Record<string, number | null>;
	confirmColdPrompt: boolean;
	recallTokens: number;
	/**
	 * The fold points were set by hand (foldAt, foldStep or coldFoldAt, in the environment or the
	 * settings file): the fixed ladder (policy/fixed.ts) decides instead of the priced rule.
	 */
	fixedFolds: boolean;
}

export const DEFAULT_SETTINGS: Readonly<Settings> = Object.freeze({
	foldAt: DEFAULT_FOLD_AT,
	foldStep: DEFAULT_FOLD_STEP,
	coldFoldAt: DEFAULT_COLD_FOLD_AT,
	budgetFraction: DEFAULT_BUDGET_FRACTION,
	budgetCap: DEFAULT_BUDGET_CAP,
	tail: DEFAULT_TAIL,
	compact: DEFAULT_COMPACT,
	earlyCompact: DEFAULT_EARLY_COMPACT,
	reconTokens: DEFAULT_RECON_TOKENS,
	cacheIdleMinutes: DEFAULT_CACHE_IDLE_MINUTES,
	providerCacheIdleMinutes: Object.freeze({}) as Record<string, number | null>,
	confirmColdPrompt: false,
	recallTokens: DEFAULT_RECALL_TOKENS,
	fixedFolds: false,
});

export type ScalarKey = Exclude<keyof Settings, "providerCacheIdleMinutes" | "fixedFolds">;

export interface KnobSpec {
	key: ScalarKey;
	env: string;
	/** Key in context-fold.json. */
	file: string;
	label: string;
	describe: string;
	parse(raw: unknown): { ok: true; value: Settings[ScalarKey] } | { ok: false; expected: string };
}

function fraction(min: number, max: number, inclusiveMin: boolean) {
	const expected = `a number ${inclusiveMin ? ">=" : ">"} ${min} and <= ${max}`;
	return (raw: unknown) => {
		const n = toNumber(raw);
		if (n === null) return { ok: false as const, expected };
		if ((inclusiveMin ? n < min : n <= min) || n > max) return { ok: false as const, expected };
		return { ok: true as const, value: n };
	};
}

function integer(min: number, max: number, offValue?: null) {
	const expected = `a whole number from ${min} to ${max}${offValue === null ? ", or 0/off" : ""}`;
	return (raw: unknown) => {
		if (offValue === null && isOff(raw)) return { ok: true as const, value: null };
		const n = toNumber(raw);
		if (n === null || !Number.isInteger(n) || n < min || n > max) return { ok: false as const, expected };
		return { ok: true as const, value: n };
	};
}

export function minutes(raw: unknown) {
	const expected = "minutes > 0 (up to 1440), or 0/off";
	if (isOff(raw)) return { ok: true as const, value: null };
	const n = toNumber(raw);
	if (n === null || n <= 0 || n > 1440) return { ok: false as const, expected };
	return { ok: true as const, value: n };
}

function onOff(raw: unknown) {
	if (raw === true || raw === false) return { ok: true as const, value: raw };
	if (typeof raw === "string") {
		const s = raw.trim().toLowerCase();
		if (["on", "1", "true", "yes"].includes(s)) return { ok: true as const, value: true };
		if (["off", "0", "false", "no"].includes(s)) return { ok: true as const, value: false };
	}
	return { ok: false as const, expected: "on or off" };
}

function compactMode(raw: unknown) {
	if (typeof raw === "string") {
		const s = raw.trim().toLowerCase();
		if (s === "det" || s === "native") return { ok: true as const, value: s as CompactMode };
	}
	return { ok: false as const, expected: "det or native" };
}

function earlyCompactMode(raw: unknown) {
	if (typeof raw === "string") {
		const s = raw.trim().toLowerCase();
		if (s === "priced" || s === "off") return { ok: true as const, value: s as EarlyCompactMode };
	}
	return { ok: false as const, expected: "priced or off" };
}

export const KNOBS: readonly KnobSpec[] = [
	{
		key: "foldAt",
		env: "CONTEXTFOLD_FOLD_AT",
		file: "foldAt",
		label: "Pin first fold at (fraction of window)",
		describe:
			"Pins the first fold to this fraction of the window (0.1.0's fixed fold points). Set, it turns the priced fold rule off; unset, the priced rule decides.",
		parse: fraction(0, 1, false),
	},
	{
		key: "foldStep",
		env: "CONTEXTFOLD_FOLD_STEP",
		file: "foldStep",
		label: "Pin fold step (fraction of window)",
		describe:
			"Pins each fold event to free at least this fraction of the window (fixed fold points). Set, it turns the priced fold rule off; unset, the priced rule decides.",
		parse: fraction(0, 1, false),
	},
	{
		key: "coldFoldAt",
		env: "CONTEXTFOLD_COLD_FOLD_AT",
		file: "coldFoldAt",
		label: "Pin cold first fold at (fraction of window)",
		describe:
			"Pins the first fold, while no cache read was ever reported, to this fraction of the window (fixed fold points). Set, it turns the priced fold rule off; unset, the priced rule decides.",
		parse: fraction(0, 1, false),
	},
	{
		key: "budgetFraction",
		env: "CONTEXTFOLD_BUDGET_FRACTION",
		file: "budgetFraction",
		label: "Budget (fraction of window)",
		describe: "Budget is this fraction of the window...",
		parse: fraction(0, 1, false),
	},
	{
		key: "budgetCap",
		env: "CONTEXTFOLD_BUDGET_CAP",
		file: "budgetCap",
		label: "Budget cap (tokens)",
		describe: "...capped at this many tokens. 0 or off disables the cap.",
		parse: integer(1000, 100_000_000, null),
	},
	{
		key: "tail",
		env: "CONTEXTFOLD_TAIL",
		file: "tail",
		label: "Protected tail (tokens)",
		describe: "The newest ~N tokens never fold (clamped to half the budget).",
		parse: integer(0, 10_000_000),
	},
	{
		key: "compact",
		env: "CONTEXTFOLD_COMPACT",
		file: "compact",
		label: "Hard compaction",
		describe: "det answers Pi's compaction from the seed index; native keeps Pi's LLM summary.",
		parse: compactMode,
	},
	{
		key: "earlyCompact",
		env: "CONTEXTFOLD_EARLY_COMPACT",
		file: "earlyCompact",
		label: "Early compaction",
		describe:
			"priced compacts between runs, from the seed index, once the context is over the budget with no fold due and the rent paid covers the rewrite (only with det); off waits for Pi's threshold.",
		parse: earlyCompactMode,
	},
	{
		key: "reconTokens",
		env: "CONTEXTFOLD_RECON_TOKENS",
		file: "reconTokens",
		label: "Reconstruction estimate (tokens)",
		describe: "What a fresh start is assumed to cost, for the reset flag.",
		parse: integer(0, 10_000_000),
	},
	{
		key: "cacheIdleMinutes",
		env: "CONTEXTFOLD_CACHE_IDLE_MINUTES",
		file: "cacheIdleMinutes",
		label: "Cache inactivity warning (minutes)",
		describe: "Idle minutes before warning that the cache may have expired. 0 or off disables.",
		parse: minutes,
	},
	{
		key: "confirmColdPrompt",
		env: "CONTEXTFOLD_CONFIRM_COLD_PROMPT",
		file: "confirmColdPrompt",
		label: "Confirm potentially cold prompts",
		describe: "Ask Keep draft / Send anyway before a prompt that would hit a cold cache.",
		parse: onOff,
	},
	{
		key: "recallTokens",
		env: "CONTEXTFOLD_RECALL_TOKENS",
		file: "recallTokens",
		label: "Recall answer cap (tokens)",
		describe: "Most tokens one recall_folded answer may return.",
		parse: integer(200, 1_000_000),
	},
];

/** Knobs that, once set by hand, pin the fold points (see Settings.fixedFolds). */
export const FIXED_FOLD_KNOBS: readonly ScalarKey[] = ["foldAt", "foldStep", "coldFoldAt"];

/** True when the master switch turns the extension off for this session. */
export function isDisabled(env: Readonly<Record<string, string | undefined>>): boolean {
	const raw = env.CONTEXTFOLD;
	if (raw === undefined) return false;
	const s = raw.trim().toLowerCase();
	return s === "0" || s === "off" || s === "false" || s === "no";
}

export function describeValue(value: unknown): string {
	if (value === null) return "off";
	if (value === true) return "on";
	if (value === false) return "off";
	return String(value);
}

function toNumber(raw: unknown): number | null {
	if (typeof raw === "number") return Number.isFinite(raw) ? raw : null;
	if (typeof raw !== "string") return null;
	const s = raw.trim();
	if (!/^[+-]?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?$/i.test(s)) return null;
	const n = Number(s);
	return Number.isFinite(n) ? n : null;
}

function isOff(raw: unknown): boolean {
	if (raw === 0 || raw === false || raw === null) return true;
	if (typeof raw !== "string") return false;
	const s = raw.trim().toLowerCase();
	return s === "0" || s === "off";
}
