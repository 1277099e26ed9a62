/**
 * `context-fold status [session]`: what `/context-fold status` says inside Pi, read from the session
 * file: fold position, masked tokens, fold events, cache ratios, fold cost and its net, flags, and
 * the advisories the extension would give now. The status text itself is the core's renderStatus,
 * so it reads the same in both places.
 */
import { type AccountingReport, PRICE_PRESETS, type PricePreset, type Prices } from "../../core/accounting.ts";
import { coldVerdict, idleVerdict } from "../../core/advisories.ts";
import { layerMasks } from "../../core/layers.ts";
import type { FoldPlan } from "../../core/plan.ts";
import { FOLD_ENTRY_TYPE, modelKey } from "../../core/session/branch-state.ts";
import { previewPlan } from "../../core/session/preview.ts";
import { idleMinutesFor } from "../../core/settings.ts";
import { renderStatus, type StatusFlags, statusFlags } from "../../core/status.ts";
import { sha256 } from "../../store/hash.ts";
import { intFlag, type ParsedArgs, stringFlag } from "../args.ts";
import type { CommandContext } from "../context.ts";
import { usageError } from "../errors.ts";
import { formatBytes, groupDigits } from "../format.ts";
import { println } from "../io.ts";
import { type LoadedSession, loadSession, type WindowSource } from "../session-load.ts";
import { type ChosenSession, chooseSession } from "../session-pick.ts";
import type { Command } from "./command.ts";

const USAGE = `Usage: context-fold status [session] [--json] [--price anthropic|openai|gemini] [--window N]

Fold position, masked tokens, fold events, cache hit ratios, fold cost and advisories for one session.
With no session, the most recent session of the current directory is used (as pi -c picks it).

  session          a session file path, a session id, or a unique id prefix
  --price NAME     prices for the fold-cost net (default: models.json, else the provider's preset)
  --window N       the model's context window in tokens (default: models.json, else 200000)
  --json           one JSON document (schema context-fold/status@1)
  --session-dir D  where sessions live (as pi --session-dir)`;

export interface StatusReport {
	schema: "context-fold/status@1";
	session: {
		id: string | null;
		path: string;
		version: number;
		cwd: string | null;
		size: number;
		entries: number;
		branchEntries: number;
		malformed: number;
		chosen: ChosenSession["chosen"];
	};
	model: { provider: string | null; model: string | null; window: number; windowSource: WindowSource };
	position: {
		usage: number;
		usageSource: "reported" | "estimate";
		state: FoldPlan["state"];
		armed: boolean;
		mass: number;
		budget: number | null;
		threshold: number | null;
		step: number | null;
		/** The fold the next request would commit, not yet in the session. */
		pendingFold: { reason: string; blocks: number; tokens: number } | null;
	} | null;
	folds: {
		events: number;
		maskedBlocks: number;
		maskedTokens: number;
		invalidRecords: number;
		layers: Array<{ seq: number; reason: string; blocks: number; usageBefore: number; usageAfter: number }>;
	};
	cache: { sessionRatio: number | null; lastRatio: number | null; responses: number };
	foldCost: {
		maskedSent: number;
		reprefilled: number;
		writesReported: boolean;
		prices: (Prices & { source: string }) | null;
	};
	flags: Required<Omit<StatusFlags, "recallChurn">> & { recallChurn: string[] };
	advisories: Array<{ kind: "idle" | "cold"; message: string }>;
	text: string;
}

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
	const { file, replay } = loaded;
	const settings = loaded.settings.settings;
	const last = replay.lastAssistant;
	const provider = typeof last?.provider === "string" ? last.provider : null;
	const model = typeof last?.model === "string" ? last.model : null;
	const { window, source } = loaded.windowFor(provider ?? undefined, model ?? undefined);
	// The next request as Pi would send it now (without the next prompt), planned but not committed.
	const plan = previewPlan({
		messages: replay.context.messages,
		branch: replay,
		settings,
		window,
		api: typeof last?.api === "string" ? last.api : undefined,
		model: modelKey(provider, model),
		cwd: file.header?.cwd ?? null,
		hash: sha256,
	});
	const a = replay.accounting();
	const prices = pricesFor(loaded, provider, model, price);
	const lastRatio = a.perTurn.at(-1) ?? null;
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
	const text = renderStatus({
		plan: shown,
		events: replay.index.layers.length,
		accounting: a,
		...(prices !== null && { prices }),
		flags,
	});
	const advisories = advise(ctx, loaded, plan, a, provider);
	const header = [
		`session ${file.header?.id ?? "(no id)"}  ${file.path}`,
		`  project ${file.header?.cwd ?? "?"} · format v${file.header?.version ?? 1} · ${groupDigits(file.entryCount)} entries · ${formatBytes(file.size)}`,
		`  model ${provider ?? "?"}/${model ?? "?"} · window ${groupDigits(window)} (${source === "default" ? "assumed; --window to set" : `from ${source}`})${prices === null ? "" : ` · prices ${prices.source}`}`,
	];
	const next =
		pending === null
			? []
			: [
					`  next request: context-fold would fold ${layerMasks(pending).length} block(s) now (${pending.reason}), ~${groupDigits(saved)} tok out of every later request`,
				];
	const tail = advisories.length === 0 ? [] : ["advisories:", ...advisories.map((x) => `  ⚠ ${x.message}`)];
	const g = plan.geometry;
	return {
		schema: "context-fold/status@1",
		session: {
			id: file.header?.id ?? null,
			path: file.path,
			version: file.header?.version ?? 1,
			cwd: file.header?.cwd ?? null,
			size: file.size,
			entries: file.entryCount,
			branchEntries: file.branch.length,
			malformed: file.malformed,
			chosen: chosen.chosen,
		},
		model: { provider, model, window, windowSource: source },
		position: {
			usage: plan.usage.tokens,
			usageSource: plan.usage.source,
			state: plan.state,
			armed: plan.armed,
			mass: shown.mass,
			budget: g?.budget ?? null,
			threshold: g?.threshold ?? null,
			step: g?.step ?? null,
			pendingFold:
				pending === null ? null : { reason: pending.reason, blocks: layerMasks(pending).length, tokens: saved },
		},
		folds: {
			events: replay.index.layers.length,
			maskedBlocks: shown.maskedBlocks,
			maskedTokens: shown.maskedTokens,
			invalidRecords: replay.invalidRecords,
			layers: replay.index.layers.map((l) => ({
				seq: l.seq,
				reason: l.reason,
				blocks: layerMasks(l).length,
				usageBefore: l.usageBefore,
				usageAfter: l.usageAfter,
			})),
		},
		cache: { sessionRatio: a.sessionRatio, lastRatio, responses: a.responses },
		foldCost: { maskedSent: a.maskedSent, reprefilled: a.reprefilled, writesReported: a.writesReported, prices },
		flags,
		advisories,
		text: [...header, text, ...next, ...tail, ...invalidNote(replay.invalidRecords)].join("\n"),
	};
}

function invalidNote(n: number): string[] {
	return n === 0 ? [] : [`note: ${n} ${FOLD_ENTRY_TYPE} record(s) in the session failed validation and were ignored`];
}

/** Prices for the net line: the model's own (models.json), an explicit preset, or the provider's preset. */
function pricesFor(
	loaded: LoadedSession,
	provider: string | null,
	model: string | null,
	price: PricePreset | undefined,
): (Prices & { source: string }) | null {
	if (price !== undefined) return { ...PRICE_PRESETS[price], source: `--price ${price}` };
	const own = loaded.modelFacts(provider ?? undefined, model ?? undefined)?.prices;
	if (own !== undefined && own.input + own.output > 0) return { ...own, source: "models.json" };
	const preset = presetForProvider(provider);
	return preset === null ? null : { ...PRICE_PRESETS[preset], source: `${preset} preset` };
}

export function presetForProvider(provider: string | null): PricePreset | null {
	if (provider === null) return null;
	if (/anthropic|bedrock|claude/i.test(provider)) return "anthropic";
	if (/openai|codex|azure/i.test(provider)) return "openai";
	if (/google|gemini|vertex/i.test(provider)) return "gemini";
	return null;
}

function advise(
	ctx: CommandContext,
	loaded: LoadedSession,
	plan: FoldPlan,
	a: AccountingReport,
	provider: string | null,
): StatusReport["advisories"] {
	const out: StatusReport["advisories"] = [];
	const { replay } = loaded;
	const idle = idleVerdict({
		now: ctx.io.now(),
		idleMinutes: idleMinutesFor(loaded.settings, provider ?? undefined),
		lastActivity: replay.lastResponseAt > 0 ? replay.lastResponseAt : null,
		carried: plan.usage.tokens,
		lastNoticeAnchor: null,
	});
	if (idle.type === "warn") out.push({ kind: "idle", message: idle.message });
	const branch = loaded.file.branch;
	const assistants = branch.flatMap((e, i) => (e.type === "message" && e.message?.role === "assistant" ? [i] : []));
	const lastAt = assistants.at(-1);
	const lastUsage = lastAt === undefined ? undefined : branch[lastAt]?.message?.usage;
	if (lastAt !== undefined && lastUsage !== undefined) {
		const prevAt = assistants.at(-2) ?? -1;
		const firstAfterFold = branch
			.slice(prevAt + 1, lastAt)
			.some((e) => e.type === "custom" && e.customType === FOLD_ENTRY_TYPE);
		const cold = coldVerdict({
			observed: a.responses,
			firstAfterFold,
			cacheRead: Math.max(0, lastUsage.cacheRead ?? 0),
			fresh: Math.max(0, lastUsage.input ?? 0) + Math.max(0, lastUsage.cacheWrite ?? 0),
			inStreak: false,
		});
		if (cold.warn && cold.message !== undefined) out.push({ kind: "cold", message: cold.message });
	}
	return out;
}
