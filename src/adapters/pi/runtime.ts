/**
 * The state one context-fold instance keeps for the session it is bound to, shared by the hook,
 * the tools, the commands and the advisories. Everything here is rebuilt on session_start.
 */

import type { ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent";
import type { PriceSchedule, Prices } from "../../core/accounting.ts";
import { cacheLifetimeMs, coldForRequest, scheduleOf } from "../../core/cache-life.ts";
import { type FoldRule, foldRuleOf } from "../../core/fold-rule.ts";
import type { FoldPlan } from "../../core/plan.ts";
import type { CompactDecision, EarlyCompactionRecord } from "../../core/policy/compact.ts";
import type { ColdReason } from "../../core/policy/price.ts";
import type { ResolvedSettings } from "../../core/resolved-settings.ts";
import { modelKey } from "../../core/session/branch-state.ts";
import { contextOf, previewPlan } from "../../core/session/preview.ts";
import type { PiMessage } from "../../core/session/view.ts";
import { renderFooter, renderStatus, statusFlags } from "../../core/status.ts";
import { sha256 } from "../../store/hash.ts";
import type { Ledger } from "../../store/ledger.ts";
import type { MemoryOriginals } from "../../store/originals.ts";
import { loadSettings } from "../../store/settings-load.ts";
import { type Clock, clockFrom } from "./clock.ts";
import type { HookOutcome } from "./context-hook.ts";
import { LedgerWatch } from "./ledger-watch.ts";
import { Notices } from "./notices.ts";
import { PiCompactionSettings } from "./pi-compaction.ts";
import { RecallDeclaration } from "./recall-declaration.ts";
import { type BranchSource, branchOf, LiveBranch } from "./state.ts";

export const STATUS_KEY = "context-fold";

export class Runtime {
	readonly notices = new Notices();
	resolved: ResolvedSettings;
	state = new LiveBranch();
	/** The session file: its ledger (or in-memory originals), checked for faults and foreign writers. */
	readonly sessionFile = new LedgerWatch(this.notices);
	ctx: ExtensionContext | undefined;
	lastOutcome: HookOutcome | undefined;
	requests = 0;
	/** The model the newest request went to, when it carried folded tool-call inputs (see refusal.ts). */
	inputRequest: string | undefined;
	/** Entry id of the newest response already checked for a refusal of folded inputs. */
	refusalChecked: string | undefined;
	/** Images from a prompt whose send was declined, kept for the next interactive prompt. */
	retainedImages: unknown[] = [];
	/**
	 * Early compaction (early-compact.ts): the newest decision (between runs) and the one being
	 * carried out, which the deterministic compaction answer records in its entry.
	 */
	early: { last: CompactDecision | null; pending: EarlyCompactionRecord | null } = { last: null, pending: null };
	/** Extra footer flags owned by other modules (e.g. the compaction warning), by key. */
	readonly footerFlags = new Map<string, string>();
	private footerText: string | undefined;
	readonly clock: Clock;
	/** When the recall tools are declared to the model (recall-declaration.ts). */
	readonly recall: RecallDeclaration;
	/** Pi's compaction settings, read at most once per run (pi-compaction.ts). */
	readonly piCompaction: PiCompactionSettings;

	constructor(
		readonly pi: ExtensionAPI,
		readonly env: NodeJS.ProcessEnv,
	) {
		this.resolved = loadSettings(env);
		this.clock = clockFrom(env);
		this.recall = new RecallDeclaration(pi as unknown as ConstructorParameters<typeof RecallDeclaration>[0]);
		this.piCompaction = new PiCompactionSettings(pi, env, sessionCwd);
	}

	get settings() {
		return this.resolved.settings;
	}

	/** The session's ledger, or null for an ephemeral session (then originals live in memory). */
	get ledger(): Ledger | null {
		return this.sessionFile.ledger;
	}

	get memory(): MemoryOriginals | undefined {
		return this.sessionFile.memory;
	}

	/**
	 * The recall tools are declared from the start (eager) under the fixed ladder, with the test seam
	 * CONTEXTFOLD_TEST_EAGER_TOOLS=1 (the economics benchmark's eager arm), or when the user named
	 * them in `--tools`; else lazily, from the first fold on (see RecallDeclaration).
	 */
	eagerTools(): boolean {
		return this.settings.fixedFolds || this.env.CONTEXTFOLD_TEST_EAGER_TOOLS === "1" || this.recall.userSelected();
	}

	/**
	 * At session start and on a branch switch: Pi's active tools as the branch's requests were sent
	 * (declared when eager, or when the branch holds a fold layer or the declaration note). Syncs the
	 * branch state first. Never throws.
	 */
	reconcileTools(ctx: ExtensionContext): void {
		try {
			if (!this.sync(ctx)) return;
			this.recall.reconcile(ctx, branchOf(ctx.sessionManager), this.state.index.layers.length, this.eagerTools());
		} catch {
			// The hook checks the active tools on every request: no digest goes out undeclared.
		}
	}

	/** Which rule decides fold events: priced, or fixed points set by hand (core/fold-rule.ts). */
	get rule(): FoldRule {
		return foldRuleOf(this.resolved);
	}

	/** The clock for cache-lifetime reasoning (clock.ts: its test seams). */
	now(): number {
		return this.clock.now();
	}

	/** The model's prices as Pi declares them ($/Mtok, with tiers), or null. */
	pricesOf(ctx: ExtensionContext): PriceSchedule | null {
		return scheduleOf((ctx.model as { cost?: unknown } | undefined)?.cost);
	}

	/** Why the cached prefix is gone for a request to ctx.model with these messages (core/cache-life.ts), or null. */
	coldFor(ctx: ExtensionContext, messages: readonly PiMessage[]): ColdReason | null {
		const model = ctx.model;
		return coldForRequest({
			messages,
			warmAt: this.state.branch.lastWarmAt,
			now: this.now(),
			at: (t) => this.clock.at(t),
			lifetimeMs: cacheLifetimeMs(
				this.env.PI_CACHE_RETENTION,
				(model as { promptCache?: { short?: number; long?: number } } | undefined)?.promptCache,
			),
			provider: model?.provider,
			model: model?.id,
		});
	}

	/** What the next request would look like, planned but not committed. Null when it cannot be built. */
	previewPlan(ctx: ExtensionContext): FoldPlan | null {
		try {
			if (!this.sync(ctx)) return null;
			const messages = contextOf(branchOf(ctx.sessionManager), (iso) => Date.parse(iso));
			return previewPlan({
				messages,
				branch: this.state.branch,
				settings: this.settings,
				window: ctx.model?.contextWindow,
				api: ctx.model?.api,
				model: modelKey(ctx.model?.provider, ctx.model?.id),
				cwd: sessionCwd(ctx),
				prices: this.pricesOf(ctx),
				cold: this.coldFor(ctx, messages),
				compaction: this.piCompaction.of(ctx),
				hash: sha256,
			});
		} catch {
			return null;
		}
	}

	/** Re-read the settings file and environment (after a menu edit, or on reload). */
	reloadSettings(): void {
		this.resolved = loadSettings(this.env);
	}

	/** Bind to the session a context belongs to: its ledger, or in-memory originals without a file. */
	bind(ctx: ExtensionContext): void {
		this.ctx = ctx;
		this.sessionFile.bind(ctx.sessionManager.getSessionFile());
	}

	/** Whether the session file holds an entry, for a fold event about to commit (LedgerWatch.has). */
	ledgerHas(ctx: ExtensionContext, entryId: string, request: number): boolean {
		return this.sessionFile.has(ctx, entryId, request, this.state.index);
	}

	/** Bring the ledger up to date, reporting a fault once (LedgerWatch.check). False when the file cannot be read. */
	checkLedger(ctx: ExtensionContext): boolean {
		return this.sessionFile.check(ctx, this.state.index);
	}

	/** A fresh session: drop everything derived from the previous one. */
	reset(ctx: ExtensionContext): void {
		this.state = new LiveBranch();
		this.lastOutcome = undefined;
		this.requests = 0;
		this.inputRequest = undefined;
		this.refusalChecked = undefined;
		this.footerFlags.clear();
		this.footerText = undefined;
		this.retainedImages = [];
		this.early = { last: null, pending: null };
		this.bind(ctx);
	}

	/** Bring branch state up to date; returns false (and reports once) when the branch cannot be read. */
	sync(ctx: ExtensionContext): boolean {
		try {
			this.state.syncWith(ctx.sessionManager as unknown as BranchSource);
			return true;
		} catch (error) {
			this.notices.once(ctx, "sync", `could not read the session branch: ${(error as Error).message}`, "warning");
			return false;
		}
	}

	showFooter(ctx: ExtensionContext): void {
		if (!ctx.hasUI) return;
		try {
			const plan = this.lastOutcome?.plan;
			const flags = [
				...(this.state.accounting().offWire ? ["⚠ fold not on wire"] : []),
				...(this.state.branch.forcedCompactions >= 2 ? ["⚠ 2nd forced compaction"] : []),
				...this.footerFlags.values(),
			];
			const s = this.settings;
			const text = plan
				? renderFooter({
						plan,
						events: this.state.index.layers.length,
						cacheAvg: this.state.cacheAvg(),
						flags,
						thresholdFraction: this.state.everCacheRead ? s.foldAt : s.coldFoldAt,
					})
				: `⧉ context-fold ×${this.state.index.layers.length} · waiting for the first request`;
			// Pi redraws on every call; only send a line that changed.
			if (text === this.footerText) return;
			this.footerText = text;
			ctx.ui.setStatus(STATUS_KEY, text);
		} catch {
			// The footer is cosmetic; a UI failure must not cost anything else.
		}
	}

	statusText(ctx: ExtensionContext): string {
		const a = this.state.accounting();
		const plan = this.lastOutcome?.plan ?? null;
		const branch = this.state.branch;
		return renderStatus({
			plan,
			events: this.state.index.layers.length,
			accounting: a,
			...withPrices(ctx),
			rule: this.rule,
			lastFold: this.state.index.layers.at(-1) ?? null,
			early: { count: branch.earlyCompactions, last: branch.lastEarly, waiting: this.early.last },
			flags: statusFlags({
				plan,
				accounting: a,
				recallCalls: branch.recallCalls,
				forcedCompactions: branch.forcedCompactions,
				reconTokens: this.settings.reconTokens,
			}),
		});
	}
}

/** The model's prices, when it declares them (for the net in dollars). */
function withPrices(ctx: ExtensionContext): { prices?: Prices } {
	const cost = (ctx.model as { cost?: Partial<Prices> } | undefined)?.cost;
	if (cost === undefined) return {};
	return {
		prices: {
			input: cost.input ?? 0,
			output: cost.output ?? 0,
			cacheRead: cost.cacheRead ?? 0,
			cacheWrite: cost.cacheWrite ?? 0,
		},
	};
}

/** The session's working directory as its header records it (where its relative paths point). */
export function sessionCwd(ctx: ExtensionContext): string | undefined {
	const session = ctx.sessionManager as unknown as { getHeader?(): { cwd?: unknown } | null; getCwd?(): string };
	const cwd = session.getHeader?.()?.cwd;
	return typeof cwd === "string" ? cwd : session.getCwd?.();
}
