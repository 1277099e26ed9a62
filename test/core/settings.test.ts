import { describe, expect, test } from "bun:test";
import { idleMinutesFor, resolveSettings } from "../../src/core/resolved-settings.ts";
import { DEFAULT_SETTINGS, isDisabled, KNOBS } from "../../src/core/settings.ts";

describe("resolveSettings", () => {
	test("defaults with empty inputs", () => {
		const r = resolveSettings({ env: {} });
		expect(r.settings).toEqual({ ...DEFAULT_SETTINGS, providerCacheIdleMinutes: {} });
		expect(r.warnings).toEqual([]);
		expect(Object.values(r.sources).every((s) => s === "default")).toBe(true);
	});
	test("every knob reads its variable", () => {
		const env = {
			CONTEXTFOLD_FOLD_AT: "0.5",
			CONTEXTFOLD_FOLD_STEP: "0.1",
			CONTEXTFOLD_COLD_FOLD_AT: "0.3",
			CONTEXTFOLD_BUDGET_FRACTION: "0.8",
			CONTEXTFOLD_BUDGET_CAP: "150000",
			CONTEXTFOLD_TAIL: "10000",
			CONTEXTFOLD_COMPACT: "native",
			CONTEXTFOLD_EARLY_COMPACT: "OFF",
			CONTEXTFOLD_RECON_TOKENS: "9000",
			CONTEXTFOLD_CACHE_IDLE_MINUTES: "5",
			CONTEXTFOLD_CONFIRM_COLD_PROMPT: "on",
			CONTEXTFOLD_RECALL_TOKENS: "2000",
		};
		const r = resolveSettings({ env });
		expect(r.warnings).toEqual([]);
		expect(r.settings).toEqual({
			foldAt: 0.5,
			foldStep: 0.1,
			coldFoldAt: 0.3,
			budgetFraction: 0.8,
			budgetCap: 150000,
			tail: 10000,
			compact: "native",
			earlyCompact: "off",
			reconTokens: 9000,
			cacheIdleMinutes: 5,
			providerCacheIdleMinutes: {},
			confirmColdPrompt: true,
			recallTokens: 2000,
			fixedFolds: true,
		});
		expect(KNOBS.map((k) => k.env).sort()).toEqual(Object.keys(env).sort());
	});
	test("fold points set by hand (environment or file) pin the fixed ladder; unset, the rule is priced", () => {
		expect(resolveSettings({ env: {} }).settings.fixedFolds).toBe(false);
		expect(resolveSettings({ env: { CONTEXTFOLD_TAIL: "1000" } }).settings.fixedFolds).toBe(false);
		for (const name of ["CONTEXTFOLD_FOLD_AT", "CONTEXTFOLD_FOLD_STEP", "CONTEXTFOLD_COLD_FOLD_AT"])
			expect(resolveSettings({ env: { [name]: "0.2" } }).settings.fixedFolds).toBe(true);
		expect(resolveSettings({ env: {}, file: { foldStep: 0.1 } }).settings.fixedFolds).toBe(true);
		// An invalid value is not a setting: the rule stays priced.
		expect(resolveSettings({ env: { CONTEXTFOLD_FOLD_AT: "abc" } }).settings.fixedFolds).toBe(false);
	});
	test.each([
		["CONTEXTFOLD_FOLD_AT", "abc"],
		["CONTEXTFOLD_FOLD_AT", "1.7"],
		["CONTEXTFOLD_FOLD_AT", "-1"],
		["CONTEXTFOLD_FOLD_AT", "0"],
		["CONTEXTFOLD_FOLD_STEP", "NaN"],
		["CONTEXTFOLD_BUDGET_CAP", "12.5"],
		["CONTEXTFOLD_BUDGET_CAP", "999"],
		["CONTEXTFOLD_TAIL", "-5"],
		["CONTEXTFOLD_COMPACT", "llm"],
		["CONTEXTFOLD_EARLY_COMPACT", "always"],
		["CONTEXTFOLD_EARLY_COMPACT", "on"],
		["CONTEXTFOLD_CACHE_IDLE_MINUTES", "forever"],
		["CONTEXTFOLD_CONFIRM_COLD_PROMPT", "maybe"],
		["CONTEXTFOLD_FOLD_AT", "0x10"],
		["CONTEXTFOLD_FOLD_AT", "Infinity"],
	])("%s=%s warns once, names the variable, and keeps the default", (name, value) => {
		const r = resolveSettings({ env: { [name]: value } });
		expect(r.warnings).toHaveLength(1);
		expect(r.warnings[0]?.name).toBe(name);
		expect(r.warnings[0]?.message).toContain(`${name}=${value} is invalid`);
		expect(r.settings).toEqual({ ...DEFAULT_SETTINGS, providerCacheIdleMinutes: {} });
	});
	test("off values", () => {
		const r = resolveSettings({ env: { CONTEXTFOLD_BUDGET_CAP: "off", CONTEXTFOLD_CACHE_IDLE_MINUTES: "0" } });
		expect(r.settings.budgetCap).toBeNull();
		expect(r.settings.cacheIdleMinutes).toBeNull();
	});
	test("precedence: default < file < env, and shadowing is reported", () => {
		const r = resolveSettings({ env: { CONTEXTFOLD_FOLD_AT: "0.6" }, file: { foldAt: 0.5, tail: 5000 } });
		expect(r.settings.foldAt).toBe(0.6);
		expect(r.settings.tail).toBe(5000);
		expect(r.sources.foldAt).toBe("env");
		expect(r.sources.tail).toBe("file");
		expect(r.shadowed).toEqual(["foldAt"]);
	});
	test("a bad file field warns, names the field, and the rest of the file applies", () => {
		const r = resolveSettings({ env: {}, file: { foldAt: "lots", tail: 7000 } });
		expect(r.settings.foldAt).toBe(DEFAULT_SETTINGS.foldAt);
		expect(r.settings.tail).toBe(7000);
		expect(r.warnings.map((w) => w.name)).toEqual(["foldAt"]);
		expect(r.warnings[0]?.message).toContain('"foldAt" is "lots"');
	});
	test("a bad env value falls back to the file value, not the default", () => {
		const r = resolveSettings({ env: { CONTEXTFOLD_TAIL: "x" }, file: { tail: 7000 } });
		expect(r.settings.tail).toBe(7000);
		expect(r.sources.tail).toBe("file");
	});
	test("provider idle overrides", () => {
		const file = { cacheIdleMinutes: 20, providerCacheIdleMinutes: { openai: 30, mine: 10, bad: "x" } };
		const r = resolveSettings({ env: {}, file });
		expect(idleMinutesFor(r, "mine")).toBe(10);
		expect(idleMinutesFor(r, "other")).toBe(20);
		expect(r.warnings.map((w) => w.name)).toEqual(["providerCacheIdleMinutes.bad"]);
		const withEnv = resolveSettings({ env: { CONTEXTFOLD_CACHE_IDLE_MINUTES: "45" }, file });
		expect(idleMinutesFor(withEnv, "mine")).toBe(45);
	});
	test("a file that is not an object is ignored", () => {
		expect(resolveSettings({ env: {}, file: [1, 2] }).settings.foldAt).toBe(DEFAULT_SETTINGS.foldAt);
	});
});

describe("master switch", () => {
	test.each([
		[undefined, false],
		["1", false],
		["on", false],
		["0", true],
		["off", true],
		["OFF", true],
		["false", true],
	])("CONTEXTFOLD=%p disabled=%p", (v, expected) => {
		expect(isDisabled(v === undefined ? {} : { CONTEXTFOLD: v })).toBe(expected);
	});
});
