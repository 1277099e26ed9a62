/**
 * `context-fold status [session]`: what `/context-fold status` says inside Pi, read from the session
 * file: fold position, masked tokens, fold events, cache ratios, fold cost and its net, flags, and
 * the advisories the extension would give now. The status text itself is the core's renderStatus,
 * so it reads the same in both places; the JSON document is status-json.ts.
 */

import { PRICE_PRESETS, type PricePreset } from "../../core/accounting.ts";
import { cacheLifetimeMs, coldForRequest } from "../../core/cache-life.ts";
import { foldRuleOf, pinnedNotice } from "../../core/fold-rule.ts";
import { layerMasks } from "../../core/layers.ts";
import { lookupModel } from "../../core/model-catalog.ts";
import type { ColdReason } from "../../core/policy/price.ts";
import { FOLD_ENTRY_TYPE, modelKey } from "../../core/session/branch-state.ts";
import { previewPlan } from "../../core/session/preview.ts";
import { piCompactionOf } from "../../core/simulate/compaction.ts";
import { renderStatus, statusFlags } from "../../core/status.ts";
import { groupDigits } from "../../core/tokens.ts";
import { plural } from "../../core/wording.ts";
import { sha256 } from "../../store/hash.ts";
import { readPiCompactionFiles } from "../../store/sessions.ts";
import { intFlag, type ParsedArgs, stringFlag } from "../args.ts";
import type { CommandContext } from "../context.ts";
import { usageError } from "../errors.ts";
import { formatBytes } from "../format.ts";
import { println } from "../io.ts";
import { pricesFor } from "../prices.ts";
import { coverageNote, type LoadedSession, loadSession } from "../session-load.ts";
import { type ChosenSession, chooseSession } from "../session-pick.ts";
import type { Command } from "./command.ts";
import { advise } from "./status-advisories.ts";
import { type StatusFacts, type StatusReport, statusJson } from "./status-json.ts";

const USAGE = `Usage: context-fold status [session] [--json] [--price anthropic|openai|gemini] [--window N]

Fold position, masked tokens, fold events, cache hit ratios, fold cost and advisories for one session.
With no session, the most recent session of the current directory is used (as pi -c picks it).

  session          a session file path, a session id, or a unique id prefix
  --price NAME     prices for the fold-cost net (default: models.json, else the provider's preset)
  --window N       the model's context window in tokens (default: models.json, else 200000)
  --json           one JSON document (schema context-fold/status@1)`;

export const statusCommand: Command = {
	name: "status",
	summary: "fold position, masked tokens, fold events, cache ratios, fold cost and advisories",
	usage: USAGE,
	flags: { price: { type: "string" }, window: { type: "string" } },
	async run(ctx, args) {
		if (args.positionals.length > 1) throw usageError("status takes at most one session", USAGE);
		const price = priceFlag(args, USAGE);
		const window = intFlag(args, "window", USAGE);
		const chosen = await chooseSession(ctx, args.positionals[0], { fallback: "most-recent", usage: USAGE });
		const loaded = loadSession(ctx, chosen.path, window);
		const report = buildStatus(ctx, loaded, chosen, price);
		if (ctx.json) println(ctx.io.stdout, JSON.stringify(report, null, 2));
		else if (ctx.guided && ctx.prompts !== null) ctx.prompts.note(report.text, "status");
		else println(ctx.io.stdout, report.text);
		return 0;
	},
};

export function priceFlag(args: ParsedArgs, usage: string): PricePreset | undefined {
	const raw = stringFlag(args, "price");
	if (raw === undefined) return undefined;
	if (raw in PRICE_PRESETS) return raw as PricePreset;
	throw usageError(`--price must be one of ${Object.keys(PRICE_PRESETS).join(", ")}, got "${raw}"`, usage);
}

export function buildStatus(
	ctx: CommandContext,
	loaded: LoadedSession,
	chosen: ChosenSession,
	price: PricePreset | undefined,
): StatusReport {
	const facts = computeStatus(ctx, loaded, price);
	return { ...statusJson(loaded, chosen, facts), text: renderStatusText(loaded, facts) };
}

function computeStatus(ctx: CommandContext, loaded: LoadedSession, price: PricePreset | undefined): StatusFacts {
	const { replay } = loaded;
	const settings = loaded.settings.settings;
	const last = replay.lastAssistant;
	const provider = typeof last?.provider === "string" ? last.provider : null;
	const model = typeof last?.model === "string" ? last.model : null;
	const { window, source } = loaded.windowFor(provider ?? undefined, model ?? undefined);
	const prices = pricesFor(provider, loaded.modelFacts(provider ?? undefined, model ?? undefined), price, model);
	// The next request as Pi would send it now (without the next prompt), planned but not committed.
	const plan = previewPlan({
		messages: replay.context.messages,
		branch: replay,
		settings,
		window,
		api: typeof last?.api === "string" ? last.api : undefined,
		model: modelKey(provider, model),
		cwd: loaded.file.header?.cwd ?? null,
		prices,
		cold: coldNow(loaded, provider, model),
		// Pi's compaction settings as the user's Pi has them: the compaction ahead the rule weighs.
		compaction: piCompactionOf(
			readPiCompactionFiles(
				ctx.io.env,
				typeof loaded.file.header?.cwd === "string" ? loaded.file.header.cwd : undefined,
			),
			provider !== null && model !== null ? `${provider}/${model}` : undefined,
		),
		hash: sha256,
	});
	const a = replay.accounting();
	const flags = statusFlags({
		plan,
		accounting: a,
		recallCalls: replay.recallCalls,
		forcedCompactions: replay.forcedCompactions,
		reconTokens: settings.reconTokens,
	});
	// A fold the next request would make is not in the session yet: show the recorded state, then say so.
	const pending = plan.layer;
	const saved = pending === null ? 0 : pending.usageBefore - pending.usageAfter;
	const shown =
		pending === null
			? plan
			: {
					...plan,
					maskedBlocks: plan.maskedBlocks - layerMasks(pending).length,
					maskedTokens: plan.maskedTokens - saved,
					mass: Math.max(plan.mass, saved),
				};
	return {
		provider,
		model,
		window,
		source,
		plan,
		shown,
		due:
			pending === null
				? null
				: {
						reason: pending.reason,
						rule: pending.decision?.rule ?? null,
						blocks: layerMasks(pending).length,
						tokens: saved,
						cold: pending.decision?.cold ?? null,
					},
		rule: foldRuleOf(loaded.settings),
		accounting: a,
		prices,
		flags,
		advisories: advise(ctx, loaded, plan, a, provider),
	};
}

function renderStatusText(loaded: LoadedSession, f: StatusFacts): string {
	const { file, replay } = loaded;
	const text = renderStatus({
		plan: f.shown,
		due: f.due,
		events: replay.index.layers.length,
		accounting: f.accounting,
		...(f.prices !== null && { prices: f.prices }),
		flags: f.flags,
		rule: f.rule,
		lastFold: replay.index.layers.at(-1) ?? null,
		early: { count: replay.earlyCompactions, last: replay.lastEarly },
	});
	const partial = coverageNote(file);
	const pinned = pinnedNotice(f.rule);
	const header = [
		`session ${file.header?.id ?? "(no id)"}  ${file.path}`,
		...(partial === null ? [] : [`  ⚠ ${partial}`]),
		`  project ${file.header?.cwd ?? "?"} · format v${file.header?.version ?? 1} · ${groupDigits(file.entryCount)} entries · ${formatBytes(file.size)}`,
		`  model ${f.provider ?? "?"}/${f.model ?? "?"} · window ${groupDigits(f.window)} (${f.source === "default" ? "assumed; --window to set" : `from ${f.source}`})${f.prices === null ? "" : ` · prices ${f.prices.source}`}`,
		...(pinned === null ? [] : [`  ⚠ ${pinned}`]),
	];
	const tail = f.advisories.length === 0 ? [] : ["advisories:", ...f.advisories.map((x) => `  ⚠ ${x.message}`)];
	return [...header, text, ...tail, ...invalidNote(replay.invalidRecords)].join("\n");
}

function invalidNote(n: number): string[] {
	return n === 0
		? []
		: [
				`note: ${plural(n, `${FOLD_ENTRY_TYPE} record`)} in the session failed validation and ${n === 1 ? "was" : "were"} ignored`,
			];
}

/** Whether the cache is cold for a request sent now to the session's model (core/cache-life.ts). */
function coldNow(loaded: LoadedSession, provider: string | null, model: string | null): ColdReason | null {
	return coldForRequest({
		messages: loaded.replay.context.messages,
		warmAt: loaded.replay.lastWarmAt,
		now: Date.now(),
		lifetimeMs: cacheLifetimeMs(process.env.PI_CACHE_RETENTION, lookupModel(provider, model)?.entry.promptCache),
		provider,
		model,
	});
}
