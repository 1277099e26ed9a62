/**
 * The settings part of `/context-fold`: every knob as a row (its value and where it comes from), the
 * headless `config` listing of the same rows, and the edit dialog of one knob, which saves to
 * context-fold.json and applies at once. Only select and input dialogs (see menu.ts).
 */
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import { pinnedNotice, ruleChangeWords, ruleLabel, TEST_FIXED_FOLDS_ENV } from "../../core/fold-rule.ts";
import { idleMinutesFor } from "../../core/resolved-settings.ts";
import { redactSecrets } from "../../core/seed/redact.ts";
import { DEFAULT_SETTINGS, describeValue, FIXED_FOLD_KNOBS, KNOBS, type KnobSpec } from "../../core/settings.ts";
import { sha256 } from "../../store/hash.ts";
import { settingsFile } from "../../store/paths.ts";
import {
	type FieldEdit,
	patchSettingsFile,
	readSettingsFile,
	type SettingsFileRead,
} from "../../store/settings-file.ts";
import type { Runtime } from "./runtime.ts";

export const BACK = "Back";
/** The settings list's first row: which fold rule decides (picking it explains). */
export const RULE_ROW = "Fold rule";
/** A fold point nobody pinned: the priced rule decides. */
export const UNPINNED = "unset";
/** The answer that removes a saved value, in every edit dialog. */
export const DEFAULT_CHOICE = "default";

/** Knobs edited by picking from a list; every other knob takes typed input. */
const CHOICES: Partial<Record<KnobSpec["key"], readonly string[]>> = {
	compact: ["det", "native"],
	earlyCompact: ["priced", "off"],
	confirmColdPrompt: ["on", "off"],
};

/** What one settings row shows and where an edit from it is saved. */
interface Row {
	knob: KnobSpec;
	label: string;
	value: string;
	source: string;
	/** Where in context-fold.json the row's value lives. */
	path: readonly string[];
}

function rows(rt: Runtime, ctx: ExtensionContext, file: SettingsFileRead): Row[] {
	const saved = file.status === "ok" ? file.data : {};
	const provider = ctx.model?.provider;
	const priced = rt.rule.type === "priced";
	return KNOBS.map((knob) => {
		if (knob.key === "cacheIdleMinutes" && provider !== undefined) return idleRow(rt, knob, provider, saved);
		const source = rt.resolved.sources[knob.key];
		const savedValue = Object.hasOwn(saved, knob.file) ? savedDisplay(knob, saved[knob.file]) : undefined;
		// Under the priced rule a fold point's built-in value is not in use: it only applies once one is pinned.
		const unpinned = priced && isPin(knob);
		return {
			knob,
			label: knob.label,
			value: unpinned ? UNPINNED : describeValue(rt.settings[knob.key]),
			source:
				source === "env"
					? `env ${knob.env}${savedValue !== undefined ? ` (shadows saved ${savedValue})` : ""}`
					: source,
			path: [knob.file],
		};
	});
}

/**
 * The idle interval as it applies to the selected provider. Edits here save that provider's
 * override; the global `cacheIdleMinutes` stays the fallback for every other provider.
 */
function idleRow(rt: Runtime, knob: KnobSpec, provider: string, saved: Record<string, unknown>): Row {
	const overrides = saved.providerCacheIdleMinutes;
	const savedOverride =
		typeof overrides === "object" && overrides !== null && Object.hasOwn(overrides, provider)
			? savedDisplay(knob, (overrides as Record<string, unknown>)[provider])
			: undefined;
	const savedGlobal = Object.hasOwn(saved, knob.file) ? savedDisplay(knob, saved[knob.file]) : undefined;
	let source: string;
	if (rt.resolved.sources.cacheIdleMinutes === "env") {
		const hidden = savedOverride ?? savedGlobal;
		source = `env ${knob.env}${hidden !== undefined ? ` (shadows saved ${hidden})` : ""}`;
	} else if (Object.hasOwn(rt.settings.providerCacheIdleMinutes, provider)) {
		source = `file, ${provider} override`;
	} else {
		source = `${rt.resolved.sources.cacheIdleMinutes} fallback`;
	}
	return {
		knob,
		label: `${knob.label} for ${provider}`,
		value: describeValue(idleMinutesFor(rt.resolved, provider)),
		source,
		path: ["providerCacheIdleMinutes", provider],
	};
}

function rowText(row: Row): string {
	return `${row.label}: ${row.value} · ${row.source}`;
}

function isPin(knob: KnobSpec): boolean {
	return FIXED_FOLD_KNOBS.includes(knob.key);
}

function ruleRowText(rt: Runtime): string {
	return `${RULE_ROW}: ${ruleLabel(rt.rule)}`;
}

/** What picking the rule row says: how the active rule decides, and how to switch. */
function ruleExplanation(rt: Runtime): string {
	const rule = rt.rule;
	if (rule.type === "priced")
		return "fold rule: priced. A fold event fires once what re-reading the old output has cost outweighs the prompt-cache rewrite the fold causes, at once when the cache is cold (the rewrite is free); a fold is held back when Pi's compaction ahead is the cheaper reset, and over the budget it comes at once only when no compaction is ahead. Setting any Pin row pins the fold points instead (0.1.0's fixed ladder) and turns the priced rule off.";
	if (rule.pinnedBy === "test-seam")
		return `fold rule: fixed fold points at their built-in values, from the test seam ${TEST_FIXED_FOLDS_ENV}=1 (for tests only). Unset it to return to the priced rule.`;
	return pinnedNotice(rule) ?? "";
}

/** A saved field as the person wrote it, shown the way the menu shows values. */
function savedDisplay(knob: KnobSpec, raw: unknown): string {
	const parsed = knob.parse(raw);
	return parsed.ok ? describeValue(parsed.value) : `${JSON.stringify(raw)} (invalid)`;
}

/** The headless `config` listing: the same rows the menu shows. */
export function settingsListing(rt: Runtime, ctx: ExtensionContext): string {
	const path = settingsFile(rt.env);
	const file = readSettingsFile(path);
	const lines = [`context-fold settings (saved in ${path}; precedence: default < file < env)`];
	lines.push(`  ${ruleRowText(rt)}`);
	const pinned = pinnedNotice(rt.rule);
	if (pinned !== null) lines.push(`  ⚠ ${pinned}`);
	for (const row of rows(rt, ctx, file)) lines.push(`  ${rowText(row)}`);
	if (file.status === "invalid" || file.status === "unreadable") lines.push(`  ⚠ ${file.message}`);
	return lines.join("\n");
}

export async function settingsMenu(rt: Runtime, ctx: ExtensionContext): Promise<void> {
	const path = settingsFile(rt.env);
	for (;;) {
		const file = readSettingsFile(path);
		const list = rows(rt, ctx, file);
		const byText = new Map(list.map((row) => [rowText(row), row]));
		const refusal = file.status === "invalid" || file.status === "unreadable" ? file.message : undefined;
		const warning = refusal === undefined ? "" : `\n⚠ ${refusal}: edits are refused until it is fixed.`;
		const ruleRow = ruleRowText(rt);
		const choice = await ctx.ui.select(`context-fold settings (saved in ${path})${warning}`, [
			ruleRow,
			...byText.keys(),
			BACK,
		]);
		if (choice === ruleRow) {
			rt.notices.say(ctx, ruleExplanation(rt), "info");
			continue;
		}
		const row = choice === undefined ? undefined : byText.get(choice);
		if (row === undefined) return;
		if (refusal !== undefined) {
			// Checked before asking for a value, so nobody types one only to have it refused.
			rt.notices.say(ctx, `${refusal}; it was not changed and nothing was saved.`, "error");
			continue;
		}
		await editRow(rt, ctx, row);
	}
}

async function editRow(rt: Runtime, ctx: ExtensionContext, row: Row): Promise<void> {
	const { knob } = row;
	const builtIn = describeValue(DEFAULT_SETTINGS[knob.key]);
	const heading = `${row.label}: now ${row.value} (${row.source})`;
	const removeHint =
		row.path.length > 1
			? `"${DEFAULT_CHOICE}" removes the saved override (then the fallback applies).`
			: isPin(knob)
				? `"${DEFAULT_CHOICE}" removes the saved value: not pinned (built-in ${builtIn}, used only while another fold point is pinned).`
				: `"${DEFAULT_CHOICE}" removes the saved value (built-in: ${builtIn}).`;
	let raw: string | undefined;
	const choices = CHOICES[knob.key];
	if (choices) {
		raw = await ctx.ui.select(`${heading}\n${knob.describe}\n${removeHint}`, [...choices, DEFAULT_CHOICE]);
	} else {
		const expected = expectedForm(knob);
		raw = await ctx.ui.input(
			`${heading}\n${knob.describe}\nEnter ${expected}. ${removeHint} Escape keeps the current value.`,
			row.value === UNPINNED ? builtIn : row.value,
		);
	}
	if (raw === undefined || raw.trim() === "") return;
	const answer = raw.trim();
	if (answer.toLowerCase() === DEFAULT_CHOICE) {
		save(rt, ctx, row, [{ path: row.path }], `${row.label} back to default`);
		return;
	}
	const parsed = knob.parse(answer);
	if (!parsed.ok) {
		rt.notices.say(
			ctx,
			`"${answer}" is not a valid ${row.label}: expected ${parsed.expected}. Nothing was saved.`,
			"error",
		);
		return;
	}
	save(
		rt,
		ctx,
		row,
		[{ path: row.path, value: stored(parsed.value) }],
		`${row.label} = ${describeValue(parsed.value)}`,
	);
}

function save(rt: Runtime, ctx: ExtensionContext, row: Row, edits: FieldEdit[], what: string): void {
	const result = patchSettingsFile(settingsFile(rt.env), edits);
	if (!result.ok) {
		rt.notices.say(ctx, result.message, "error");
		return;
	}
	const { knob } = row;
	const ruleBefore = rt.rule;
	// Every knob is live: the running session reads the new value from the next request on.
	rt.reloadSettings();
	// A secret pasted into the wrong variable is not echoed back (the warning names the variable).
	for (const w of rt.resolved.warnings)
		rt.notices.once(ctx, `settings:${w.name}:${w.value}`, redactSecrets(w.message, sha256), "warning");
	// The footer's gauge reads the thresholds; redraw it now rather than at the next response.
	rt.showFooter(ctx);
	let note = " Applies now.";
	const env = rt.env[knob.env];
	if (env !== undefined && env.trim() !== "" && knob.parse(env.trim()).ok) {
		note = ` ${knob.env}=${env.trim()} still overrides it in this session.`;
	}
	rt.notices.say(ctx, `saved ${what} in ${result.path}.${note}${ruleChangeWords(ruleBefore, rt.rule)}`, "info");
}

/** The form a knob accepts, in its own words (what a wrong answer would be told). */
function expectedForm(knob: KnobSpec): string {
	const probe = knob.parse({});
	return probe.ok ? "a value" : probe.expected;
}

/** How a value is written to the file: readable words for on/off, numbers as numbers. */
function stored(value: unknown): unknown {
	if (value === null) return "off";
	if (value === true) return "on";
	if (value === false) return "off";
	return value;
}
