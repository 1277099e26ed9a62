/**
 * How the sources of the settings combine: per knob, built-in default < saved settings file <
 * environment variable. A bad value anywhere is named in one warning and that knob falls back to the
 * next source. Values in, values out: reading the environment and the file is the adapter's job.
 */
import { echoArg, escapeControls } from "./escape.ts";
import {
	DEFAULT_SETTINGS,
	describeValue,
	FIXED_FOLD_KNOBS,
	KNOBS,
	minutes,
	type ScalarKey,
	type Settings,
} from "./settings.ts";
import { isRecord } from "./values.ts";

export type SettingSource = "default" | "file" | "env";

export interface SettingsWarning {
	source: "env" | "file";
	/** Variable or file field name. */
	name: string;
	value: string;
	message: string;
}

export interface ResolvedSettings {
	settings: Settings;
	sources: Record<ScalarKey, SettingSource>;
	/** Knobs whose saved file value is hidden by an environment variable. */
	shadowed: ScalarKey[];
	warnings: SettingsWarning[];
}

/**
 * Combine defaults, a parsed settings file (any JSON value) and an environment map.
 * A bad value anywhere yields one warning naming it, and that knob falls back to the next source.
 */
export function resolveSettings(input: {
	env: Readonly<Record<string, string | undefined>>;
	file?: unknown;
}): ResolvedSettings {
	const settings: Settings = { ...DEFAULT_SETTINGS, providerCacheIdleMinutes: {} };
	const sources = {} as Record<ScalarKey, SettingSource>;
	const shadowed: ScalarKey[] = [];
	const warnings: SettingsWarning[] = [];
	const file = isRecord(input.file) ? input.file : undefined;

	for (const knob of KNOBS) {
		sources[knob.key] = "default";
		let fromFile = false;
		if (file && Object.hasOwn(file, knob.file)) {
			const raw = file[knob.file];
			const parsed = knob.parse(raw);
			if (parsed.ok) {
				assign(settings, knob.key, parsed.value);
				sources[knob.key] = "file";
				fromFile = true;
			} else {
				warnings.push({
					source: "file",
					name: knob.file,
					value: safeString(raw),
					message: `context-fold.json: "${knob.file}" is ${safeString(raw)}; expected ${parsed.expected}. Using ${describeValue(settings[knob.key])}.`,
				});
			}
		}
		const rawEnv = input.env[knob.env];
		if (rawEnv !== undefined && rawEnv.trim() !== "") {
			const parsed = knob.parse(rawEnv.trim());
			if (parsed.ok) {
				assign(settings, knob.key, parsed.value);
				sources[knob.key] = "env";
				if (fromFile) shadowed.push(knob.key);
			} else {
				warnings.push({
					source: "env",
					name: knob.env,
					value: rawEnv,
					// The value is quoted escaped and clipped: it may hold terminal escapes or line breaks.
					message: `${knob.env}=${echoArg(rawEnv, 60)} is invalid; expected ${parsed.expected}. Using ${describeValue(settings[knob.key])}.`,
				});
			}
		}
	}

	if (file && Object.hasOwn(file, "providerCacheIdleMinutes")) {
		const raw = file.providerCacheIdleMinutes;
		if (!isRecord(raw)) {
			warnings.push({
				source: "file",
				name: "providerCacheIdleMinutes",
				value: safeString(raw),
				message: `context-fold.json: "providerCacheIdleMinutes" must be an object of provider ids to minutes; ignored.`,
			});
		} else {
			for (const [provider, value] of Object.entries(raw)) {
				const parsed = minutes(value);
				if (parsed.ok) settings.providerCacheIdleMinutes[provider] = parsed.value;
				else
					warnings.push({
						source: "file",
						name: `providerCacheIdleMinutes.${provider}`,
						value: safeString(value),
						message: `context-fold.json: "providerCacheIdleMinutes.${provider}" is ${safeString(value)}; expected ${parsed.expected}. Ignored.`,
					});
			}
		}
	}
	// CONTEXTFOLD_TEST_FIXED_FOLDS=1, a test seam: the fixed ladder at its default points, so that tests
	// of fold mechanics get folds at known requests without setting (and being told about) a knob.
	settings.fixedFolds =
		FIXED_FOLD_KNOBS.some((k) => sources[k] !== "default") || input.env.CONTEXTFOLD_TEST_FIXED_FOLDS === "1";
	return { settings, sources, shadowed, warnings };
}

/** The idle interval that applies to a provider: env beats provider override beats global. */
export function idleMinutesFor(resolved: ResolvedSettings, provider: string | undefined): number | null {
	if (resolved.sources.cacheIdleMinutes === "env") return resolved.settings.cacheIdleMinutes;
	if (provider !== undefined && Object.hasOwn(resolved.settings.providerCacheIdleMinutes, provider)) {
		return resolved.settings.providerCacheIdleMinutes[provider] ?? null;
	}
	return resolved.settings.cacheIdleMinutes;
}

function assign<K extends ScalarKey>(settings: Settings, key: K, value: Settings[ScalarKey]): void {
	(settings as unknown as Record<string, unknown>)[key] = value;
}

/**
 * A file value as written: JSON (a number too large for a double arrives as its source text, kept by
 * the reader, so `1e400` reads 1e400, not null), clipped, with control characters escaped.
 */
function safeString(v: unknown): string {
	if (typeof v === "string") return escapeControls(JSON.stringify(v.length > 60 ? `${v.slice(0, 60)}…` : v));
	try {
		const s = typeof v === "number" && !Number.isFinite(v) ? String(v) : JSON.stringify(v);
		return s === undefined ? String(v) : escapeControls(s.length > 60 ? `${s.slice(0, 60)}…` : s);
	} catch {
		return String(v);
	}
}
