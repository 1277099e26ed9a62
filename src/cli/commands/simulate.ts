/**
 * `context-fold simulate <session...>`: replay recorded sessions through the fold ladder, offline and
 * without Pi (the replay runs the extension's own planFold request by request), then bill both the
 * recorded requests and the folded ones under one provider model. Prints a per-request table and a
 * summary, or JSON, and optionally writes an HTML page with a chart.
 */

import { writeFileSync } from "node:fs";
import { resolve } from "node:path";
import type { PricePreset } from "../../core/accounting.ts";
import { billingModel, type CacheTtl } from "../../core/billing.ts";
import { foldRuleOf, pinnedNotice } from "../../core/fold-rule.ts";
import { lookupModel } from "../../core/model-catalog.ts";
import { piCompactionOf } from "../../core/simulate/compaction.ts";
import { checkCosts, resolveModelPrices } from "../../core/simulate/pricing.ts";
import { replaySession } from "../../core/simulate/replay.ts";
import { billReplay } from "../../core/simulate/summary.ts";
import { PROMPT_MEASURES, type PromptMeasure } from "../../core/simulate/wire.ts";
import { sha256 } from "../../store/hash.ts";
import { parseIsoTime } from "../../store/session-file.ts";
import { readPiCompactionFiles } from "../../store/sessions.ts";
import { boolFlag, intFlag, stringFlag } from "../args.ts";
import { type CommandContext, remark } from "../context.ts";
import { CliError, usageError } from "../errors.ts";
import { println } from "../io.ts";
import { pricesFor as modelPrices, presetForProvider } from "../prices.ts";
import { type LoadedSession, loadSession } from "../session-load.ts";
import { chooseSession, resolveSessionArgs } from "../session-pick.ts";
import { renderTextChart } from "../simulate-chart.ts";
import { renderSimulationHtml } from "../simulate-html.ts";
import { simulationJson } from "../simulate-json.ts";
import {
	type PricedModel,
	renderRequestTable,
	renderSummary,
	renderTotals,
	type SimulatedSession,
} from "../simulate-report.ts";
import { VERSION } from "../version.ts";
import type { Command } from "./command.ts";
import { priceFlag } from "./status.ts";

const USAGE = `Usage: context-fold simulate <session...> [--price anthropic|openai|gemini] [--ttl 5m|1h]
                              [--window N] [--overhead N] [--measure content|openai-json]
                              [--html FILE] [--json] [--table]

Replay recorded sessions through the fold ladder, offline and without Pi, and report the prompt
tokens without and with folding, the fold events, prefix breaks and cache behaviour, and the
estimated cost: a summary and a chart of context size per session, and on request a table of every
request. Without folding is the session as recorded; with folding, Pi's compaction is re-decided on
the folded context and answered deterministically, as context-fold does by default.

Each request is priced as the model its response names: models.json, else pi-ai's catalog built into
context-fold, else the provider's preset; the summary says which prices were used and checks the
estimate against the costs the session states.

  session...       session file paths, session ids or unique id prefixes
  --price NAME     one preset for every request instead: anthropic (cache writes), openai or gemini
                   (uncached input)
  --ttl 5m|1h      cache lifetime; a longer gap between requests bills the whole prompt again
  --window N       the model's context window in tokens (default: models.json, else the catalog,
                   else 200000)
  --overhead N     tokens of system prompt and tools (default: measured from the first response)
  --measure NAME   how a request's messages are counted, chars/4 either way: content (default: each
                   message's role, ids and texts; the provider's report fixes the rest) or
                   openai-json (the JSON body Pi sends to an OpenAI chat-completions endpoint, which
                   the responses are then taken to report too, as the economics benchmark's fake
                   model does, so Pi's compaction is re-decided without folding as well; give
                   --overhead in the same units)
  --html FILE      also write a page with a chart of context size over each session
  --json           one JSON document (schema context-fold/simulate@1), with every request
  --table          also print the per-request table (--no-table: the summary and chart only, the default)`;

export const simulateCommand: Command = {
	name: "simulate",
	summary: "replay sessions through the fold ladder offline: tokens, cache and cost with and without folding",
	usage: USAGE,
	flags: {
		price: { type: "string" },
		ttl: { type: "string" },
		window: { type: "string" },
		overhead: { type: "string" },
		measure: { type: "string" },
		html: { type: "string" },
		table: { type: "boolean" },
		"no-table": { type: "boolean" },
	},
	async run(ctx, args) {
		const price = priceFlag(args, USAGE);
		if (boolFlag(args, "table") && boolFlag(args, "no-table"))
			throw usageError("--table and --no-table contradict each other", USAGE);
		const ttlRaw = stringFlag(args, "ttl") ?? "5m";
		if (ttlRaw !== "5m" && ttlRaw !== "1h") throw usageError(`--ttl must be 5m or 1h, got "${ttlRaw}"`, USAGE);
		const ttl: CacheTtl = ttlRaw;
		const window = intFlag(args, "window", USAGE);
		const overheadRaw = stringFlag(args, "overhead");
		const overhead = overheadRaw === undefined ? undefined : Number(overheadRaw);
		if (overhead !== undefined && (!Number.isInteger(overhead) || overhead < 0))
			throw usageError(`--overhead needs a whole number of tokens, got "${overheadRaw}"`, USAGE);
		const measureRaw = stringFlag(args, "measure") ?? "content";
		if (!(PROMPT_MEASURES as readonly string[]).includes(measureRaw))
			throw usageError(`--measure must be ${PROMPT_MEASURES.join(" or ")}, got "${measureRaw}"`, USAGE);
		const measure = measureRaw as PromptMeasure;
		const paths =
			args.positionals.length > 0
				? await resolveSessionArgs(ctx, args.positionals)
				: [(await chooseSession(ctx, undefined, { fallback: "pick", usage: USAGE })).path];
		const options = { price: price ?? "per-model", ttl };
		const sessions: SimulatedSession[] = [];
		// Fold points pinned by hand replay the fixed ladder: said once, as Pi says it at session start.
		let pinnedSaid = false;
		const sayRule = (loaded: LoadedSession) => {
			const pinned = pinnedNotice(foldRuleOf(loaded.settings));
			if (pinned !== null && !pinnedSaid) remark(ctx, pinned);
			pinnedSaid = true;
		};
		for (const path of paths) {
			const work = () => simulateOne(ctx, path, { window, overhead, measure, price, ttl }, sayRule);
			const s =
				ctx.guided && ctx.prompts !== null
					? await ctx.prompts.spin(`replaying ${path}`, work, () => "replayed")
					: work();
			sessions.push(s);
		}
		const html = stringFlag(args, "html");
		if (html !== undefined) {
			const out = resolve(ctx.io.cwd, html);
			try {
				writeFileSync(out, renderSimulationHtml(sessions, options, VERSION));
			} catch (error) {
				throw new CliError("io", `cannot write ${out} (${(error as NodeJS.ErrnoException).code ?? "error"})`);
			}
			remark(ctx, `wrote ${out}`);
		}
		if (ctx.json) {
			println(ctx.io.stdout, JSON.stringify(simulationJson(sessions, options), null, 2));
			return 0;
		}
		const blocks: string[] = [];
		for (const s of sessions) {
			blocks.push(renderSummary(s, options), renderTextChart(s));
			if (boolFlag(args, "table")) blocks.push(renderRequestTable(s.simulation.rows));
		}
		if (sessions.length > 1) blocks.push(renderTotals(sessions));
		if (ctx.guided && ctx.prompts !== null) ctx.prompts.note(blocks.join("\n\n"), "simulate");
		else println(ctx.io.stdout, blocks.join("\n\n"));
		return 0;
	},
};

interface SimulateParams {
	window: number | undefined;
	overhead: number | undefined;
	measure: PromptMeasure;
	/** One preset for every request, or undefined to price each request as its model. */
	price: PricePreset | undefined;
	ttl: CacheTtl;
}

function simulateOne(
	ctx: CommandContext,
	path: string,
	p: SimulateParams,
	sayRule: (loaded: LoadedSession) => void,
): SimulatedSession {
	const loaded = loadSession(ctx, path, p.window);
	sayRule(loaded);
	const used = new Map<string, { window: number; source: string; n: number; provider: string | null }>();
	const replay = replaySession({
		entries: loaded.file.branch,
		settings: loaded.settings.settings,
		windowFor(provider, modelId) {
			const w = windowOf(loaded, provider, modelId);
			const key = `${provider ?? "?"}/${modelId ?? "?"}`;
			const seen = used.get(key);
			used.set(key, { ...w, n: (seen?.n ?? 0) + 1, provider: provider ?? null });
			return w.window;
		},
		hash: sha256,
		parseTime: parseIsoTime,
		sessionFile: loaded.file.path,
		...(typeof loaded.file.header?.cwd === "string" && { cwd: loaded.file.header.cwd }),
		// The fold rule is priced as the extension prices it: the prices each request's model declares.
		pricesFor: (provider, modelId) =>
			modelPrices(provider, loaded.modelFacts(provider ?? undefined, modelId ?? undefined), p.price, modelId),
		cacheLifetimeMs: p.ttl === "1h" ? 3_600_000 : 300_000,
		// Pi's compaction settings as the user's Pi has them: the fold rule weighs the compaction ahead.
		piCompaction: piCompactionOf(
			readPiCompactionFiles(
				ctx.io.env,
				typeof loaded.file.header?.cwd === "string" ? loaded.file.header.cwd : undefined,
			),
			undefined,
		),
		measure: p.measure,
		...(p.overhead !== undefined && { overhead: p.overhead }),
	});
	// Name the model most requests went to; the window is per request, this is for the reader.
	const [name, main] = [...used].sort((a, b) => b[1].n - a[1].n)[0] ?? [
		"?/?",
		{ window: 0, source: "default", n: 0, provider: null },
	];
	// The cache mechanics (minimum cached prefix, steps) follow the main provider; prices follow each request's model.
	const model = billingModel(p.price ?? presetForProvider(main.provider) ?? "anthropic", p.ttl);
	const priced = new Map<string, PricedModel>();
	const pricesOf = (provider: string | null, modelId: string | null): PricedModel => {
		const key = `${provider ?? "?"}/${modelId ?? "?"}`;
		let m = priced.get(key);
		if (m === undefined) {
			const resolved = resolveModelPrices({
				provider,
				model: modelId,
				...(p.price !== undefined && { explicit: p.price }),
				...ownPrices(loaded, provider, modelId),
				fallback: presetForProvider(provider) ?? "anthropic",
			});
			m = { ...resolved, requests: 0 };
			priced.set(key, m);
		}
		return m;
	};
	for (const r of replay.requests) pricesOf(r.provider, r.model).requests++;
	const pricesFor = (r: { provider: string | null; model: string | null }) =>
		p.price === undefined ? pricesOf(r.provider, r.model).prices : undefined;
	const simulation = billReplay(replay, model, p.overhead, pricesFor);
	return {
		id: loaded.file.header?.id ?? null,
		path: loaded.file.path,
		model: name,
		window: main.window,
		windowSource: main.source === "default" ? "assumed; --window to set" : `from ${main.source}`,
		malformed: loaded.file.malformed,
		prices: [...priced.values()].sort((a, b) => b.requests - a.requests),
		costCheck: checkCosts(simulation.rows, loaded.file.branch, model, (row) => pricesFor(row.request)),
		simulation,
	};
}

/** The window of a request's model: --window, models.json, pi-ai's catalog, else the stated default. */
function windowOf(
	loaded: LoadedSession,
	provider: string | undefined,
	modelId: string | undefined,
): { window: number; source: string } {
	const w = loaded.windowFor(provider, modelId);
	if (w.source !== "default") return w;
	const hit = lookupModel(provider, modelId);
	return hit === null ? w : { window: hit.entry.contextWindow, source: "the pi-ai catalog" };
}

function ownPrices(loaded: LoadedSession, provider: string | null, modelId: string | null) {
	const own = loaded.modelFacts(provider ?? undefined, modelId ?? undefined)?.prices;
	return own === undefined ? {} : { own };
}
