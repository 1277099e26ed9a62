/**
 * The extension entry. Registers hooks and owns the per-session lifecycle; the decisions are the
 * core's. CONTEXTFOLD=0 (or off) registers nothing at all.
 */
import type { ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent";
import { escapeControls } from "../../core/escape.ts";
import { pinnedNotice } from "../../core/fold-rule.ts";
import type { FrozenLayer } from "../../core/layers.ts";
import { RECALL_TOOLS_TOKENS } from "../../core/recall-tools.ts";
import { redactSecrets } from "../../core/seed/redact.ts";
import { FOLD_ENTRY_TYPE } from "../../core/session/branch-state.ts";
import type { PiMessage } from "../../core/session/view.ts";
import { isDisabled } from "../../core/settings.ts";
import { sha256 } from "../../store/hash.ts";
import { registerAdvisories } from "./advisories.ts";
import { type HookOutcome, runContextHook } from "./context-hook.ts";
import { debugSink, requestLine } from "./debug.ts";
import { registerEarlyCompaction } from "./early-compact.ts";
import { claimInstance, releaseInstance } from "./guard.ts";
import { registerMarkerGuard } from "./marker-guard.ts";
import { registerMenu } from "./menu.ts";
import { Notices } from "./notices.ts";
import { declarationRebuildsPrefix } from "./recall-declaration.ts";
import { checkInputRefusal, inputsAllowed, requestModel } from "./refusal.ts";
import { Runtime, sessionCwd } from "./runtime.ts";
import { registerSeed } from "./seed.ts";
import { SeedWriter } from "./seed-writer.ts";
import { type BranchSource, branchOf, LiveBranch } from "./state.ts";
import { isOurToolSchema, RECALL_TOOL, registerTools, UNFOLD_TOOL } from "./tools.ts";

export default function contextFold(pi: ExtensionAPI): void {
	const env = process.env;
	if (isDisabled(env)) return;
	const source = sourceOf();
	const claim = claimInstance(source);
	if (!claim.owner) {
		explainDuplicate(pi, claim.holder, source);
		return;
	}
	const rt = new Runtime(pi, env);
	registerTools(pi, toolDeps(rt));
	registerLifecycle(rt, claim);
	// After session_start above: advisories and the seed index read the state it rebuilt.
	registerAdvisories(rt);
	const seeds = new SeedWriter(rt);
	registerSeed(rt, seeds);
	registerEarlyCompaction(rt);
	registerContextHook(rt, seeds);
	registerMenu(pi, rt);
	registerMarkerGuard(pi, rt);
}

/** Loaded twice (installed plus -e): exactly one instance acts; this one only explains. */
function explainDuplicate(pi: ExtensionAPI, holder: string | undefined, source: string): void {
	const notices = new Notices();
	pi.on("session_start", (_event, ctx) => {
		notices.once(
			ctx,
			"duplicate",
			`context-fold is loaded twice (${holder} and ${source}); only the first copy is active. Remove one of them.`,
			"warning",
		);
	});
}

/** What recall_folded and unfold read and write: the branch's index, the ledger or memory, unfold records. */
function toolDeps(rt: Runtime): Parameters<typeof registerTools>[1] {
	return {
		sources: () => {
			if (rt.ctx) rt.sync(rt.ctx);
			return { index: rt.state.index, ledger: rt.ledger, ...(rt.memory && { memory: rt.memory }) };
		},
		recallTokens: () => rt.settings.recallTokens,
		commitUnfold: (record) => {
			rt.pi.appendEntry(FOLD_ENTRY_TYPE, record);
			rt.state.commit(record);
		},
	};
}

/** Session start and end, branch changes, and the bookkeeping after every response. */
function registerLifecycle(rt: Runtime, claim: ReturnType<typeof claimInstance>): void {
	const pi = rt.pi;
	pi.on("turn_end", (_event, ctx) => afterResponse(rt, ctx));
	pi.on("agent_end", (_event, ctx) => afterResponse(rt, ctx));
	pi.on("session_start", (_event, ctx) => {
		rt.reset(ctx);
		checkToolConflicts(pi, ctx, rt.notices);
		// A secret pasted into the wrong variable is not echoed back (the warning names the variable).
		for (const w of rt.resolved.warnings)
			rt.notices.once(ctx, `settings:${w.name}:${w.value}`, redactSecrets(w.message, sha256), "warning");
		// Fold points set by hand turn the priced rule off: said once, with the way back.
		const pinned = pinnedNotice(rt.rule);
		if (pinned !== null) rt.notices.once(ctx, `pinned:${pinned}`, pinned, "warning");
		if (rt.sync(ctx) && rt.state.branch.invalidRecords > 0) {
			rt.notices.once(
				ctx,
				"invalid-records",
				`${rt.state.branch.invalidRecords} fold record(s) in this session could not be read and were ignored; the session file was not changed.`,
				"warning",
			);
		}
		// After the sync above; declares the recall tools iff the session's requests were sent with them.
		rt.reconcileTools(ctx);
		rt.showFooter(ctx);
	});
	pi.on("session_tree", (_event, ctx) => {
		// A new branch: state is rebuilt from the entries on it, and the recall tools follow it.
		rt.state = new LiveBranch();
		rt.reconcileTools(ctx);
		rt.showFooter(ctx);
	});
	pi.on("session_shutdown", () => {
		releaseInstance(claim);
	});
}

/** After a response: bring the accounting up to date, run the wire watchdog, refresh the footer. */
function afterResponse(rt: Runtime, ctx: ExtensionContext): void {
	checkInputRefusal(rt, ctx);
	try {
		rt.checkLedger(ctx);
	} catch {
		// The check only reports; recall and folding re-check on their own.
	}
	if (rt.state.branch.badUsage > 0) {
		rt.notices.once(
			ctx,
			"usage",
			`the provider reported unusable token usage (${rt.state.branch.badUsageKind}) on a response; context-fold ignores such reports and sizes the context by its own estimate instead. Folding goes on.`,
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
}

/** The `context` hook: one request's folding (runContextHook), its notices and the debug line. Never throws. */
function registerContextHook(rt: Runtime, seeds: SeedWriter): void {
	const env = rt.env;
	const fault = env.CONTEXTFOLD_TEST_FAULT;
	const dumpPath = env.CONTEXTFOLD_DUMP && env.CONTEXTFOLD_DUMP.trim() !== "" ? env.CONTEXTFOLD_DUMP : undefined;
	const debug = debugSink(env);
	rt.pi.on("context", (event, ctx) => {
		rt.requests++;
		try {
			if (rt.ctx === undefined) rt.bind(ctx);
			const state = rt.state;
			const messages = event.messages as unknown as PiMessage[];
			// The recall tools on this request: declared, or what declaring them would cost.
			const live = rt.recall.live();
			const declaredFresh = live && rt.recall.takeFresh();
			const tools = live
				? undefined
				: { declared: false as const, rebuildsPrefix: declarationRebuildsPrefix(ctx), tokens: RECALL_TOOLS_TOKENS };
			const outcome = runContextHook(messages, {
				state,
				settings: rt.settings,
				getBranch: () => branchOf(ctx.sessionManager),
				session: ctx.sessionManager as unknown as BranchSource,
				contextWindow: () => ctx.model?.contextWindow,
				modelApi: () => ctx.model?.api,
				// CONTEXTFOLD_TEST_NO_INPUTS=1: a test seam (the economics benchmark's arm without input folds).
				foldInputs: () => env.CONTEXTFOLD_TEST_NO_INPUTS !== "1" && inputsAllowed(rt, ctx),
				cwd: () => sessionCwd(ctx),
				prices: () => rt.pricesOf(ctx),
				compaction: () => rt.piCompaction.of(ctx),
				// The first request after a declaration that rebuilt the prompt rewrites it all anyway.
				cold: (sent) => rt.coldFor(ctx, sent) ?? (declaredFresh ? "tools" : null),
				tools: () => tools,
				persist: (layer: FrozenLayer) => rt.pi.appendEntry(FOLD_ENTRY_TYPE, layer),
				fault,
				dumpPath,
				memory: rt.memory,
				inLedger: (entryId) => rt.ledgerHas(ctx, entryId, rt.requests),
				onCommit: (layer, view) => seeds.onFold(ctx, layer, state.index.layers.at(-2), view),
			});
			rt.lastOutcome = outcome;
			// Wanted by the plan, or owed to the branch's layers (another extension took them out).
			if (tools !== undefined && (outcome.plan.toolsWanted !== null || state.index.layers.length > 0))
				declareTools(rt, ctx, fault);
			rt.inputRequest = outcome.appliedInputs > 0 ? requestModel(ctx) : undefined;
			reportOutcome(rt, ctx, outcome);
			debug?.(ctx, () => requestLine(rt, outcome));
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
}

/**
 * A plan wants the recall tools, or the branch's folds need them: declare them for the next request.
 * When Pi will not (a `--tools` list that leaves them out, another extension's tool of the same name,
 * an error), nothing folds, and the user hears why once.
 */
function declareTools(rt: Runtime, ctx: ExtensionContext, fault: string | undefined): void {
	if (rt.recall.declare(ctx, fault)) return;
	rt.notices.once(
		ctx,
		"tools-undeclared",
		`the recall tools (${RECALL_TOOL}, ${UNFOLD_TOOL}) could not be declared to the model${rt.recall.registered() ? "" : " (they are not among the tools Pi offers: a --tools list that leaves them out?)"}. context-fold folds nothing while the model cannot recall what it folds; the session goes on unfolded.`,
		"warning",
	);
}

/** What the user must hear about one request: a fold that could not be recorded, blocks another extension reshaped. */
function reportOutcome(rt: Runtime, ctx: ExtensionContext, outcome: HookOutcome): void {
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
			`could not write CONTEXTFOLD_DUMP=${escapeControls(rt.env.CONTEXTFOLD_DUMP ?? "")} (${escapeControls(outcome.dumpFailed.message)}); the request went out as planned (folded where due), only the dump was not written.`,
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

function sourceOf(): string {
	try {
		return import.meta.url;
	} catch {
		return "context-fold";
	}
}
