/**
 * `context-fold simulate <session...>`: replay recorded sessions through the fold ladder, offline and
 * without Pi (the replay runs the extension's own planFold request by request), then bill both the
 * recorded requests and the folded ones under one provider model. Prints a per-request table and a
 * summary, or JSON, and optionally writes an HTML page with a chart.
 */
import { writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { billingModel, type CacheTtl } from "../../core/billing.ts";
import { replaySession } from "../../core/simulate/replay.ts";
import { billReplay } from "../../core/simulate/summary.ts";
import { sha256 } from "../../store/hash.ts";
import { parseIsoTime } from "../../store/session-file.ts";
import { boolFlag, intFlag, stringFlag } from "../args.ts";
import { type CommandContext, remark } from "../context.ts";
import { CliError, usageError } from "../errors.ts";
import { println } from "../io.ts";
import { loadSession, type WindowSource } from "../session-load.ts";
import { chooseSession, resolveSessionArg } from "../session-pick.ts";
import { renderSimulationHtml } from "../simulate-html.ts";
import {
	renderRequestTable,
	renderSummary,
	renderTotals,
	type SimulatedSession,
	simulationJson,
} from "../simulate-report.ts";
import { VERSION } from "../version.ts";
import type { Command } from "./command.ts";
import { priceFlag } from "./status.ts";

const USAGE = `Usage: context-fold simulate <session...> [--price anthropic|openai|gemini] [--ttl 5m|1h]
                              [--window N] [--overhead N] [--html FILE] [--json] [--no-table]

Replay recorded sessions through the fold ladder, offline and without Pi, and report per request the
prompt tokens without and with folding, the fold events, prefix breaks and cache behaviour, and the
estimated cost under one provider's billing model. Without folding is the session as recorded; with
folding, Pi's compaction is re-decided on the folded context and answered deterministically, as
context-fold does by default.

  session...       session file paths, session ids or unique id prefixes
  --price NAME     billing model: anthropic (cache writes, default), openai or gemini (uncached input)
  --ttl 5m|1h      cache lifetime; a longer gap between requests bills the whole prompt again
  --window N       the model's context window in tokens (default: models.json, else 200000)
  --overhead N     tokens of system prompt and tools (default: measured from the first response)
  --html FILE      also write a page with a chart of context size over each session
  --json           one JSON document (schema context-fold/simulate@1), with every request
  --no-table       the summary only`;

export const simulateCommand: Command = {
	name: "simulate",
	summary: "replay sessions through the fold ladder offline: tokens, cache and cost with and without folding",
	usage: USAGE,
	flags: {
		price: { type: "string" },
		ttl: { type: "string" },
		window: { type: "string" },
		overhead: { type: "string" },
		html: { type: "string" },
		"no-table": { type: "boolean" },
	},
	async run(ctx, args) {
		const price = priceFlag(args, USAGE) ?? "anthropic";
		const ttlRaw = stringFlag(args, "ttl") ?? "5m";
		if (ttlRaw !== "5m" && ttlRaw !== "1h") throw usageError(`--ttl must be 5m or 1h, got "${ttlRaw}"`, USAGE);
		const ttl: CacheTtl = ttlRaw;
		const window = intFlag(args, "window", USAGE);
		const overheadRaw = stringFlag(args, "overhead");
		const overhead = overheadRaw === undefined ? undefined : Number(overheadRaw);
		if (overhead !== undefined && (!Number.isInteger(overhead) || overhead < 0))
			throw usageError(`--overhead needs a whole number of tokens, got "${overheadRaw}"`, USAGE);
		const paths =
			args.positionals.length > 0
				? args.positionals.map((a) => resolveSessionArg(ctx, a))
				: [(await chooseSession(ctx, undefined, { fallback: "pick", usage: USAGE })).path];
		const options = { price, ttl };
		const model = billingModel(price, ttl);
		const sessions: SimulatedSession[] = [];
		for (const path of paths) {
			const work = () => simulateOne(ctx, path, window, overhead, model);
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
			if (!boolFlag(args, "no-table")) blocks.push(renderRequestTable(s.simulation.rows));
			blocks.push(renderSummary(s, options));
		}
		if (sessions.length > 1) blocks.push(renderTotals(sessions));
		if (ctx.guided && ctx.prompts !== null) ctx.prompts.note(blocks.join("\n\n"), "simulate");
		else println(ctx.io.stdout, blocks.join("\n\n"));
		return 0;
	},
};

function simulateOne(
	ctx: CommandContext,
	path: string,
	window: number | undefined,
	overhead: number | undefined,
	model: ReturnType<typeof billingModel>,
): SimulatedSession {
	const loaded = loadSession(ctx, path, window);
	const used = new Map<string, { window: number; source: WindowSource; n: number }>();
	const replay = replaySession({
		entries: loaded.file.branch,
		settings: loaded.settings.settings,
		windowFor(provider, modelId) {
			const w = loaded.windowFor(provider, modelId);
			const key = `${provider ?? "?"}/${modelId ?? "?"}`;
			const seen = used.get(key);
			used.set(key, { ...w, n: (seen?.n ?? 0) + 1 });
			return w.window;
		},
		hash: sha256,
		parseTime: parseIsoTime,
		sessionFile: loaded.file.path,
		...(typeof loaded.file.header?.cwd === "string" && { cwd: loaded.file.header.cwd }),
	});
	const simulation = billReplay(replay, model, overhead);
	// Name the model most requests went to; the window is per request, this is for the reader.
	const [name, main] = [...used].sort((a, b) => b[1].n - a[1].n)[0] ?? ["?/?", { window: 0, source: "default", n: 0 }];
	return {
		id: loaded.file.header?.id ?? null,
		path: loaded.file.path,
		model: name,
		window: main.window,
		windowSource: main.source === "default" ? "assumed; --window to set" : `from ${main.source}`,
		malformed: loaded.file.malformed,
		simulation,
	};
}
