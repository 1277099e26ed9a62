/**
 * The extension entry. Registers hooks and owns the per-session lifecycle; the decisions are the
 * core's. CONTEXTFOLD=0 (or off) registers nothing at all.
 */
import { appendFileSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import type { ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent";
import { escapeControls } from "../../core/escape.ts";
import type { FrozenLayer } from "../../core/layers.ts";
import { redactSecrets } from "../../core/seed/redact.ts";
import { isDisabled } from "../../core/settings.ts";
import { formatTokens } from "../../core/tokens.ts";
import { registerAdvisories } from "./advisories.ts";
import { type HookOutcome, runContextHook } from "./context-hook.ts";
import { claimInstance, releaseInstance } from "./guard.ts";
import { sha256 } from "./hash.ts";
import { registerMenu } from "./menu.ts";
import { Notices } from "./notices.ts";
import { agentDir } from "./paths.ts";
import { Runtime } from "./runtime.ts";
import { registerSeed, SeedWriter } from "./seed.ts";
import { type BranchSource, BranchState, CUSTOM_TYPE } from "./state.ts";
import { isOurToolSchema, RECALL_TOOL, registerTools, UNFOLD_TOOL } from "./tools.ts";
import type { PiEntry, PiMessage } from "./view.ts";

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

	const rt = new Runtime(pi, env);
	const fault = env.CONTEXTFOLD_TEST_FAULT;
	const dumpPath = env.CONTEXTFOLD_DUMP && env.CONTEXTFOLD_DUMP.trim() !== "" ? env.CONTEXTFOLD_DUMP : undefined;
	const debug = env.CONTEXTFOLD_DEBUG !== undefined && !isDisabledValue(env.CONTEXTFOLD_DEBUG);

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

	/** After a response: bring the accounting up to date, run the wire watchdog, refresh the footer. */
	const afterResponse = (ctx: ExtensionContext) => {
		try {
			rt.checkLedger(ctx);
		} catch {
			// The check only reports; recall and folding re-check on their own.
		}
		if (rt.state.badUsage > 0) {
			rt.notices.once(
				ctx,
				"usage",
				`the provider reported unusable token usage (${rt.state.badUsageKind}) on a response; context-fold ignores such reports and sizes the context by its own estimate instead. Folding goes on.`,
				"warning",
			);
		}
		if (rt.sync(ctx) && rt.state.accounting().offWire) {
			rt.notices.once(
				ctx,
				"off-wire",
				"a fold was committed but the provider still read the whole old prompt from cache: the rewrite never reached the wire (another extension or transport may be re-sending the original history). Folding is on record and recall works; the savings are not happening.",
				"warning",
			);
		}
		rt.showFooter(ctx);
	};

	registerTools(pi, {
		sources: () => {
			if (rt.ctx) rt.sync(rt.ctx);
			return { index: rt.state.index, ledger: rt.ledger, ...(rt.memory && { memory: rt.memory }) };
		},
		recallTokens: () => rt.settings.recallTokens,
		commitUnfold: (record) => {
			pi.appendEntry(CUSTOM_TYPE, record);
			rt.state.commit(record);
		},
		onRecall: (codes) => {
			for (const c of codes) rt.recallCounts.set(c, (rt.recallCounts.get(c) ?? 0) + 1);
		},
	});

	pi.on("turn_end", (_event, ctx) => afterResponse(ctx));
	pi.on("agent_end", (_event, ctx) => afterResponse(ctx));

	pi.on("session_start", (_event, ctx) => {
		rt.reset(ctx);
		checkToolConflicts(pi, ctx, rt.notices);
		// A secret pasted into the wrong variable is not echoed back (the warning names the variable).
		for (const w of rt.resolved.warnings)
			rt.notices.once(ctx, `settings:${w.name}:${w.value}`, redactSecrets(w.message, sha256), "warning");
		if (rt.sync(ctx) && rt.state.invalidRecords > 0) {
			rt.notices.once(
				ctx,
				"invalid-records",
				`${rt.state.invalidRecords} fold record(s) in this session could not be read and were ignored; the session file was not changed.`,
				"warning",
			);
		}
		rt.showFooter(ctx);
	});

	// After session_start above: advisories and the seed index read the state it rebuilt.
	registerAdvisories(rt);
	const seeds = new SeedWriter(rt);
	registerSeed(rt, seeds);

	pi.on("session_tree", (_event, ctx) => {
		// A new branch: state is rebuilt from the entries on it at the next request.
		rt.state = new BranchState();
		rt.showFooter(ctx);
	});

	pi.on("session_shutdown", () => {
		releaseInstance(claim);
	});

	pi.on("context", (event, ctx) => {
		rt.requests++;
		try {
			if (rt.ctx === undefined) rt.bind(ctx);
			const state = rt.state;
			const outcome = runContextHook(event.messages as unknown as PiMessage[], {
				state,
				settings: rt.settings,
				getBranch: () => ctx.sessionManager.getBranch() as unknown as PiEntry[],
				session: ctx.sessionManager as unknown as BranchSource,
				contextWindow: () => ctx.model?.contextWindow,
				modelApi: () => ctx.model?.api,
				persist: (layer: FrozenLayer) => pi.appendEntry(CUSTOM_TYPE, layer),
				fault,
				dumpPath,
				memory: rt.memory,
				inLedger: (entryId) => rt.ledgerHas(ctx, entryId, rt.requests),
				onCommit: (layer, view) => {
					const layers = state.index.layers;
					const since =
						layers.length >= 2 ? (layers[layers.length - 2]?.lastResponseAt ?? 0) : Number.NEGATIVE_INFINITY;
					seeds.onFold(ctx, layer, since, view, event.messages as unknown as PiMessage[]);
				},
			});
			rt.lastOutcome = outcome;
			if (outcome.persistFailed) {
				rt.notices.once(
					ctx,
					"persist",
					`a fold event could not be recorded (${outcome.persistFailed.message}); this request went out unfolded.`,
					"warning",
				);
			}
			if (outcome.dumpFailed) {
				rt.notices.once(
					ctx,
					"dump",
					`could not write CONTEXTFOLD_DUMP=${escapeControls(dumpPath ?? "")} (${escapeControls(outcome.dumpFailed.message)}); the request went out as planned (folded where due), only the dump was not written.`,
					"warning",
				);
			}
			if (outcome.skipped > 0) {
				rt.notices.once(
					ctx,
					"reshaped",
					`another extension changed the shape of a message context-fold had folded (its content is no longer a list of parts), so ${outcome.skipped} folded block(s) went out as they came in this request; every other fold was applied, and nothing was lost.`,
					"warning",
				);
			}
			const p = outcome.plan;
			const g = p.geometry;
			debugLine(
				ctx,
				`[context-fold] req=${rt.requests} usage=${formatTokens(p.usage.tokens)}${g ? `/${formatTokens(g.window)}` : ""} (${p.usage.source}) state=${p.state}${p.layer ? ` fold#${p.layer.seq} blocks=${p.layer.blocks.length} after=${formatTokens(p.usageAfter)}` : ""} mass=${formatTokens(p.mass)}${g ? `/${formatTokens(g.step)}` : ""} masked=${p.maskedBlocks} ~${formatTokens(p.maskedTokens)} layers=${state.index.layers.length} cacheAvg=${fmtRatio(state.cacheAvg())} held=${state.index.byCode.size} views=${state.views.size} facts=${state.facts.size} hook=${outcome.ms.toFixed(2)}ms${debug ? `${stagesText(outcome)}${footprintText(rt)}` : ""}`,
			);
			rt.showFooter(ctx);
		} catch (error) {
			rt.notices.once(
				ctx,
				`hook:${(error as Error).message}`,
				`folding skipped for this request: ${(error as Error).message}. The request went ahead unchanged.`,
				"warning",
			);
		}
		return undefined;
	});

	registerMenu(pi, rt);
}

/** Another extension registering our tool names would shadow one of us; say so, naming both. */
function checkToolConflicts(pi: ExtensionAPI, ctx: ExtensionContext, notices: Notices): void {
	try {
		const ours = sourceOf();
		for (const tool of pi.getAllTools() as Array<{
			name: string;
			parameters?: unknown;
			sourceInfo?: { path?: string };
		}>) {
			if (tool.name !== RECALL_TOOL && tool.name !== UNFOLD_TOOL) continue;
			if (isOurToolSchema(tool.parameters)) continue;
			const path = tool.sourceInfo?.path ?? "an unknown source";
			if (ours.includes(path)) continue;
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

/** Milliseconds per stage of the hook (sync, view, plan, persist, apply), for CONTEXTFOLD_DEBUG. */
function stagesText(outcome: HookOutcome): string {
	const s = outcome.stages;
	return ` stages=${[s.sync, s.view, s.plan, s.persist, s.apply].map((ms) => ms.toFixed(2)).join("/")}`;
}

/**
 * The extension's own memory, for CONTEXTFOLD_DEBUG: characters it holds in fold state (digests and
 * digest facts), its map sizes, the entries and bytes the ledger index covers, and originals kept in
 * memory (sessions without a file only). None of it grows with the bytes of what was folded.
 */
function footprintText(rt: Runtime): string {
	const f = rt.state.footprint();
	const l = rt.ledger?.stats;
	return ` state: blocks=${f.foldedBlocks} digestChars=${f.digestChars} factChars=${f.factChars} facts=${f.facts} verified=${f.verified} keys=${f.keys} rawRefs=${f.rawRefs} events=${f.events} ledger: entries=${l?.entries ?? 0} indexedBytes=${l?.bytesIndexed ?? 0} memoryChars=${rt.memory?.heldChars ?? 0}`;
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
