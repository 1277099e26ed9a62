/**
 * The extension entry. Registers hooks and owns the per-session lifecycle; the decisions are the
 * core's. CONTEXTFOLD=0 (or off) registers nothing at all.
 */
import { appendFileSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import type { ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent";
import type { FrozenLayer } from "../../core/layers.ts";
import { isDisabled, type ResolvedSettings } from "../../core/settings.ts";
import { renderFooter, renderStatus } from "../../core/status.ts";
import { formatTokens } from "../../core/tokens.ts";
import { Ledger } from "../../store/ledger.ts";
import { MemoryOriginals } from "../../store/originals.ts";
import { loadSettings } from "./config.ts";
import { type HookOutcome, runContextHook } from "./context-hook.ts";
import { claimInstance, releaseInstance } from "./guard.ts";
import { Notices } from "./notices.ts";
import { agentDir } from "./paths.ts";
import { BranchState, CUSTOM_TYPE } from "./state.ts";
import { RECALL_TOOL, registerTools, UNFOLD_TOOL } from "./tools.ts";
import type { PiEntry, PiMessage } from "./view.ts";

export const STATUS_KEY = "context-fold";
/** The same code recalled this many times is "churn": unfolding it once would be cheaper. */
export const RECALL_CHURN = 3;

export default function contextFold(pi: ExtensionAPI): void {
	const env = process.env;
	if (isDisabled(env)) return;

	const notices = new Notices();
	const source = sourceOf();
	const claim = claimInstance(source);
	if (!claim.owner) {
		// Loaded twice (installed plus -e): exactly one instance acts; this one only explains.
		pi.on("session_start", (_event, ctx) => {
			notices.once(
				ctx,
				"duplicate",
				`context-fold is loaded twice (${claim.holder} and ${source}); only the first copy is active. Remove one of them.`,
				"warning",
			);
		});
		return;
	}

	const resolved: ResolvedSettings = loadSettings(env);
	let state = new BranchState();
	/** The session's ledger, or null for an ephemeral session (then originals live in memory). */
	let ledger: Ledger | null = null;
	let memory: MemoryOriginals | undefined;
	let sessionCtx: ExtensionContext | undefined;
	let requests = 0;
	let lastOutcome: HookOutcome | undefined;
	const fault = env.CONTEXTFOLD_TEST_FAULT;
	const dumpPath = env.CONTEXTFOLD_DUMP && env.CONTEXTFOLD_DUMP.trim() !== "" ? env.CONTEXTFOLD_DUMP : undefined;
	const debug = env.CONTEXTFOLD_DEBUG !== undefined && !isDisabledValue(env.CONTEXTFOLD_DEBUG);

	const showFooter = (ctx: ExtensionContext) => {
		if (!ctx.hasUI) return;
		try {
			const plan = lastOutcome?.plan;
			const flags = state.accounting().offWire ? ["⚠ fold not on wire"] : [];
			const text = plan
				? renderFooter({ plan, events: state.index.layers.length, cacheAvg: state.cacheAvg(), flags })
				: `⧉ context-fold ×${state.index.layers.length} · waiting for the first request`;
			ctx.ui.setStatus(STATUS_KEY, text);
		} catch {
			// The footer is cosmetic; a UI failure must not cost anything else.
		}
	};

	const debugLine = (ctx: ExtensionContext, line: string) => {
		if (!debug) return;
		if (ctx.hasUI && modeOf(ctx) === "tui") {
			// Never write raw to the terminal under the TUI: the line goes to a log file instead.
			try {
				const file = join(agentDir(env), "context-fold", "debug.log");
				mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
				appendFileSync(file, `${line}\n`, { mode: 0o600 });
			} catch {
				// Debug output is best effort.
			}
			return;
		}
		process.stderr.write(`${line}\n`);
	};

	const bindSession = (ctx: ExtensionContext) => {
		sessionCtx = ctx;
		const file = ctx.sessionManager.getSessionFile();
		if (file) {
			if (ledger?.path !== file) ledger = new Ledger(file);
			memory = undefined;
		} else {
			ledger = null;
			memory ??= new MemoryOriginals();
		}
	};

	const recallCounts = new Map<string, number>();

	/** After a response: bring the accounting up to date, run the wire watchdog, refresh the footer. */
	const afterResponse = (ctx: ExtensionContext) => {
		try {
			state.sync(ctx.sessionManager.getBranch() as unknown as PiEntry[]);
			if (state.accounting().offWire) {
				notices.once(
					ctx,
					"off-wire",
					"a fold was committed but the provider still read the whole old prompt from cache: the rewrite never reached the wire (another extension or transport may be re-sending the original history). Folding is on record and recall works; the savings are not happening.",
					"warning",
				);
			}
		} catch (error) {
			notices.once(ctx, "accounting", `accounting skipped: ${(error as Error).message}`, "warning");
		}
		showFooter(ctx);
	};

	const statusText = (ctx: ExtensionContext): string => {
		const a = state.accounting();
		const plan = lastOutcome?.plan ?? null;
		const cost = (
			ctx.model as { cost?: { input?: number; output?: number; cacheRead?: number; cacheWrite?: number } } | undefined
		)?.cost;
		const churn = [...recallCounts].filter(([, n]) => n >= RECALL_CHURN).map(([c]) => c);
		return renderStatus({
			plan,
			events: state.index.layers.length,
			accounting: a,
			...(cost && {
				prices: {
					input: cost.input ?? 0,
					output: cost.output ?? 0,
					cacheRead: cost.cacheRead ?? 0,
					cacheWrite: cost.cacheWrite ?? 0,
				},
			}),
			flags: {
				offWire: a.offWire,
				irreducible:
					plan !== null && plan.geometry !== null && plan.mass === 0 && plan.usage.tokens > plan.geometry.window / 2,
				recallChurn: churn,
			},
		});
	};

	registerTools(pi, {
		sources: () => {
			if (sessionCtx) {
				try {
					state.sync(sessionCtx.sessionManager.getBranch() as unknown as PiEntry[]);
				} catch {
					// Recall still answers from the state it has.
				}
			}
			return { index: state.index, ledger, ...(memory && { memory }) };
		},
		recallTokens: () => resolved.settings.recallTokens,
		commitUnfold: (record) => {
			pi.appendEntry(CUSTOM_TYPE, record);
			state.commit(record);
		},
		onRecall: (codes) => {
			for (const c of codes) recallCounts.set(c, (recallCounts.get(c) ?? 0) + 1);
		},
	});

	pi.on("turn_end", (_event, ctx) => afterResponse(ctx));
	pi.on("agent_end", (_event, ctx) => afterResponse(ctx));

	pi.on("session_start", (_event, ctx) => {
		state = new BranchState();
		lastOutcome = undefined;
		requests = 0;
		bindSession(ctx);
		checkToolConflicts(pi, ctx, notices);
		for (const w of resolved.warnings) notices.once(ctx, `settings:${w.name}:${w.value}`, w.message, "warning");
		try {
			state.sync(ctx.sessionManager.getBranch() as unknown as PiEntry[]);
			if (state.invalidRecords > 0) {
				notices.once(
					ctx,
					"invalid-records",
					`${state.invalidRecords} fold record(s) in this session could not be read and were ignored; the session file was not changed.`,
					"warning",
				);
			}
		} catch (error) {
			notices.once(ctx, "sync-start", `could not read fold state: ${(error as Error).message}`, "warning");
		}
		showFooter(ctx);
	});

	pi.on("session_tree", (_event, ctx) => {
		// A new branch: state is rebuilt from the entries on it at the next request.
		state = new BranchState();
		showFooter(ctx);
	});

	pi.on("session_shutdown", () => {
		releaseInstance(claim);
	});

	pi.on("context", (event, ctx) => {
		requests++;
		try {
			if (sessionCtx === undefined) bindSession(ctx);
			const outcome = runContextHook(event.messages as unknown as PiMessage[], {
				state,
				settings: resolved.settings,
				getBranch: () => ctx.sessionManager.getBranch() as unknown as PiEntry[],
				contextWindow: () => ctx.model?.contextWindow,
				modelApi: () => ctx.model?.api,
				persist: (layer: FrozenLayer) => pi.appendEntry(CUSTOM_TYPE, layer),
				fault,
				dumpPath,
				memory,
			});
			lastOutcome = outcome;
			if (outcome.persistFailed) {
				notices.once(
					ctx,
					"persist",
					`a fold event could not be recorded (${outcome.persistFailed.message}); this request went out unfolded.`,
					"warning",
				);
			}
			const p = outcome.plan;
			const g = p.geometry;
			debugLine(
				ctx,
				`[context-fold] req=${requests} usage=${formatTokens(p.usage.tokens)}${g ? `/${formatTokens(g.window)}` : ""} (${p.usage.source}) state=${p.state}${p.layer ? ` fold#${p.layer.seq} blocks=${p.layer.blocks.length} after=${formatTokens(p.usageAfter)}` : ""} mass=${formatTokens(p.mass)}${g ? `/${formatTokens(g.step)}` : ""} masked=${p.maskedBlocks} ~${formatTokens(p.maskedTokens)} layers=${state.index.layers.length} cacheAvg=${fmtRatio(state.cacheAvg())} held=${state.index.byCode.size} hook=${outcome.ms.toFixed(2)}ms`,
			);
			showFooter(ctx);
		} catch (error) {
			notices.once(
				ctx,
				`hook:${(error as Error).message}`,
				`folding skipped for this request: ${(error as Error).message}. The request went ahead unchanged.`,
				"warning",
			);
		}
		return undefined;
	});

	pi.registerCommand("context-fold", {
		description: "context-fold status",
		handler: async (_args, ctx) => {
			try {
				state.sync(ctx.sessionManager.getBranch() as unknown as PiEntry[]);
			} catch {
				// Status still renders from the state already held.
			}
			notices.say(ctx, statusText(ctx), "info");
		},
	});
}

/** Another extension registering our tool names would shadow one of us; say so, naming both. */
function checkToolConflicts(pi: ExtensionAPI, ctx: ExtensionContext, notices: Notices): void {
	try {
		const ours = sourceOf();
		for (const tool of pi.getAllTools() as Array<{ name: string; sourceInfo?: { path?: string } }>) {
			if (tool.name !== RECALL_TOOL && tool.name !== UNFOLD_TOOL) continue;
			const path = tool.sourceInfo?.path;
			if (path === undefined || ours.includes(path) || path.includes("context-fold")) continue;
			notices.once(
				ctx,
				`conflict:${tool.name}`,
				`another extension (${path}) also registers the tool "${tool.name}"; one of the two is shadowed. Remove one, or expect recall of {#code FOLDED} blocks to misbehave.`,
				"warning",
			);
		}
	} catch {
		// Older Pi builds may not describe tool sources; the check is advisory.
	}
}

function fmtRatio(r: number | null): string {
	return r === null ? "n/a" : `${Math.round(r * 100)}%`;
}

function isDisabledValue(v: string): boolean {
	const s = v.trim().toLowerCase();
	return s === "" || s === "0" || s === "off" || s === "false";
}

function modeOf(ctx: ExtensionContext): string | undefined {
	return (ctx as { mode?: string }).mode;
}

function sourceOf(): string {
	try {
		return import.meta.url;
	} catch {
		return "context-fold";
	}
}
