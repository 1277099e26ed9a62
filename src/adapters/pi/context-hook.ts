/**
 * The per-request path: sync branch state, build the core view, plan, persist a new layer if the
 * plan commits one, and apply substitutions in place. Everything here fails open: an error costs
 * this request's folding, never the request.
 */

import { chmodSync, writeFileSync } from "node:fs";
import type { PriceSchedule } from "../../core/accounting.ts";
import type { ViewMessage } from "../../core/blocks.ts";
import { valueAt } from "../../core/inputs.ts";
import { layerMasks } from "../../core/layers.ts";
import { type FoldPlan, type PlanInput, planFold, type Substitution } from "../../core/plan.ts";
import type { PiCompactionFacts } from "../../core/policy/horizon.ts";
import type { ColdReason } from "../../core/policy/price.ts";
import { buildView, type PiEntry, type PiMessage } from "../../core/session/view.ts";
import type { Settings } from "../../core/settings.ts";
import { thinkingPolicyFor } from "../../core/thinking-policy.ts";
import { sha256 } from "../../store/hash.ts";
import type { MemoryOriginals } from "../../store/originals.ts";
import { applySubstitutions, fits } from "./apply.ts";
import type { BranchSource, LiveBranch } from "./state.ts";

export interface HookDeps {
	state: LiveBranch;
	settings: Settings;
	getBranch(): readonly PiEntry[];
	/** Pi's session manager, for an incremental sync (see LiveBranch.syncWith); getBranch alone works too. */
	session?: BranchSource | undefined;
	contextWindow(): number | undefined;
	/** API of the model this request goes to (decides how thinking may fold). */
	modelApi?(): string | undefined;
	/** Fold tool-call inputs for the model this request goes to (false once its provider refused them). */
	foldInputs?(): boolean;
	/** The session's working directory (its header's), for the superseded rules' paths. */
	cwd?(): string | undefined;
	/** The model's prices ($/Mtok, with tiers); null when it declares none (see policy/price.ts). */
	prices?(): PriceSchedule | null;
	/** Pi's compaction settings for the model (the compaction ahead the fold rule weighs); Pi's defaults without. */
	compaction?(): PiCompactionFacts;
	/** Why the cached prefix is gone for this request (see core/cache-life.ts), or null. */
	cold?(messages: readonly PiMessage[]): ColdReason | null;
	/**
	 * The recall tools are not declared on this request (see RecallDeclaration): what declaring them
	 * costs. The planner then holds any fold back, and no digest goes out, frozen ones included.
	 * Undefined: they are declared.
	 */
	tools?(): PlanInput["tools"];
	/** Persist a fold record; throws when the session cannot take it. */
	persist(record: NonNullable<FoldPlan["layer"]>): void;
	/** Test seam: make a named stage fail on purpose. */
	fault?: string | undefined;
	dumpPath?: string | undefined;
	/** Called once a new layer is on record (before it is applied), with the view it was planned from. */
	onCommit?: ((layer: NonNullable<FoldPlan["layer"]>, view: readonly ViewMessage[]) => void) | undefined;
	/** Ephemeral sessions (no session file): originals are held here for recall. */
	memory?: MemoryOriginals | undefined;
	/**
	 * The session file still holds this entry, so recall can serve the block once it is folded.
	 * Asked only for blocks a fold event is about to commit; absent means there is no file to check.
	 */
	inLedger?: ((entryId: string) => boolean) | undefined;
}

/** Ephemeral digests say where recall comes from, since there is no ledger behind them. */
export const MEMORY_NOTE = "recall from memory only (no session file)";

export interface HookOutcome {
	plan: FoldPlan;
	/** Substitutions actually applied. */
	applied: number;
	/** Of those, tool-call input values (a provider refusal right after is blamed on them). */
	appliedInputs: number;
	/** The new layer was planned but could not be persisted, so it was not applied. */
	persistFailed?: Error;
	/** CONTEXTFOLD_DUMP could not be written; the request itself went out as planned. */
	dumpFailed?: Error;
	/** Substitutions not applied because the message no longer had the part (another extension reshaped it). */
	skipped: number;
	ms: number;
	/** Milliseconds per stage, for the benchmark and CONTEXTFOLD_DEBUG. */
	stages: { sync: number; view: number; plan: number; persist: number; apply: number };
}

// Over 80 lines on purpose: one timed pipeline of stages (sync, view, plan, persist, apply), each timed in place.
export function runContextHook(messages: PiMessage[], deps: HookDeps): HookOutcome {
	const started = performance.now();
	if (deps.session !== undefined) deps.state.syncWith(deps.session);
	else deps.state.sync(deps.getBranch());
	const tSync = performance.now();
	if (deps.fault === "context") throw new Error("injected fault (CONTEXTFOLD_TEST_FAULT=context)");
	const view = buildView(
		messages,
		(m) => deps.state.lookup(m),
		{
			raw: (id) => deps.state.rawMessage(id),
			verified: deps.state.verified,
			facts: deps.state.facts,
			masked: deps.state.index.byKey,
		},
		deps.state.views,
	);
	const tView = performance.now();
	const tools = deps.tools?.();
	const plan = planFold({
		messages: view,
		index: deps.state.index,
		settings: deps.settings,
		window: deps.contextWindow(),
		everCacheRead: deps.state.everCacheRead,
		prices: deps.prices?.() ?? null,
		...(deps.compaction !== undefined && { compaction: deps.compaction() }),
		cold: deps.cold?.(messages) ?? null,
		hash: sha256,
		thinking: thinkingPolicyFor(deps.modelApi?.()),
		// Never fold what recall could not serve: the text must be the session's, and the session file
		// must still hold it (it may have been deleted, cut short or made unreadable under Pi).
		verify: (entryId, blockIndex, text, path) =>
			deps.state.matchesSession(entryId, blockIndex, text, path) && (deps.inLedger?.(entryId) ?? true),
		...(deps.memory !== undefined && { digestNote: MEMORY_NOTE }),
		inputs: deps.foldInputs?.() ?? true,
		...cwdOf(deps),
		...(tools !== undefined && { tools }),
	});
	const tPlan = performance.now();
	// A digest the model cannot recall loses the original from its view: without the tools, none goes out.
	let substitutions = tools === undefined ? plan.substitutions : [];
	let persistFailed: Error | undefined;
	if (plan.layer !== null) {
		try {
			if (deps.fault === "persist") throw new Error("injected fault (CONTEXTFOLD_TEST_FAULT=persist)");
			deps.persist(plan.layer);
			deps.state.commit(plan.layer);
			deps.onCommit?.(plan.layer, view);
			if (deps.memory !== undefined) {
				for (const s of substitutions) {
					const text = originalOf(view, s);
					if (text !== undefined) deps.memory.put(s.code, text);
				}
			}
		} catch (error) {
			// Never apply a fold that is not on record: a resume would not reproduce it.
			persistFailed = error instanceof Error ? error : new Error(String(error));
			const fresh = new Set(layerMasks(plan.layer).map((b) => b.code));
			substitutions = substitutions.filter((s) => !fresh.has(s.code));
		}
	}
	const tPersist = performance.now();
	if (deps.fault === "apply") throw new Error("injected fault (CONTEXTFOLD_TEST_FAULT=apply)");
	// Another extension may have changed a message's shape in this request (content no longer a list
	// of parts): that one block goes out as it came, every other fold still applies.
	const applicable = substitutions.filter((s) => fits(messages, s));
	const skipped = substitutions.length - applicable.length;
	substitutions = applicable;
	applySubstitutions(messages, substitutions);
	const tApply = performance.now();
	let dumpFailed: Error | undefined;
	if (deps.dumpPath) {
		// After apply: a dump that cannot be written must not read as a failed fold (the request is
		// already folded), nor cost the debug line that follows.
		try {
			writeFileSync(deps.dumpPath, JSON.stringify(messages), { mode: 0o600 });
			// The mode given to writeFileSync only applies to a new file; the dump holds secrets either way.
			chmodSync(deps.dumpPath, 0o600);
		} catch (error) {
			dumpFailed = error instanceof Error ? error : new Error(String(error));
		}
	}
	return {
		plan: persistFailed
			? { ...plan, layer: null }
			: tools !== undefined && plan.maskedBlocks > 0
				? { ...plan, substitutions: [], maskedBlocks: 0, maskedTokens: 0 }
				: plan,
		applied: substitutions.length,
		appliedInputs: substitutions.filter((s) => s.path !== undefined).length,
		skipped,
		...(persistFailed && { persistFailed }),
		...(dumpFailed && { dumpFailed }),
		ms: performance.now() - started,
		stages: {
			sync: tSync - started,
			view: tView - tSync,
			plan: tPlan - tView,
			persist: tPersist - tPlan,
			apply: tApply - tPersist,
		},
	};
}

/** The original a substitution folds, from the view it was planned on (an input: its value at the path). */
export function originalOf(view: readonly ViewMessage[], s: Substitution): string | undefined {
	const block = view[s.messageIndex]?.blocks[s.blockIndex];
	if (s.path === undefined) return block?.text;
	return valueAt(block?.call?.args, s.path);
}

function cwdOf(deps: HookDeps): { cwd?: string } {
	const cwd = deps.cwd?.();
	return typeof cwd === "string" && cwd.length > 0 ? { cwd } : {};
}
