/**
 * `context-fold status --json`: the report's shape (schema context-fold/status@1; field names and
 * meanings only ever grow), and the facts both the JSON and the text are built from, computed once.
 */
import type { AccountingReport, Prices } from "../../core/accounting.ts";
import type { FoldPin, FoldRule } from "../../core/fold-rule.ts";
import { type FoldDecisionRecord, layerMasks } from "../../core/layers.ts";
import { foldPaybacks, paybacksJson } from "../../core/payback.ts";
import type { FoldPlan } from "../../core/plan.ts";
import type { ColdReason, RelativeRates } from "../../core/policy/price.ts";
import type { StatusFlags } from "../../core/status.ts";
import { foldNet, type SourcedPrices } from "../prices.ts";
import { branchResponses, type LoadedSession, type WindowSource } from "../session-load.ts";
import type { ChosenSession } from "../session-pick.ts";

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
		/** The message chain is broken: every figure covers only the branch after the break. */
		brokenChain: { line: number; missingParent: string; responses: number; fileResponses: number } | null;
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
		/**
		 * The fold the next request would commit, not yet in the session: `reason` as the layer will record
		 * it (threshold, step, budget), `rule` why the priced rule fires it (null under fixed fold points).
		 */
		pendingFold: { reason: string; rule: FoldDecisionRecord["rule"] | null; blocks: number; tokens: number } | null;
	} | null;
	/** Which rule decides the folds: priced, or fixed points pinned by hand (or by the test seam). */
	rule: { active: FoldRule["type"]; pinnedBy: "hand" | "test-seam" | null; pins: FoldPin[] };
	/** The priced rule's inputs and its expected paybacks (core/payback.ts); `next` is null under fixed points. */
	pricing: {
		basis: RelativeRates["basis"];
		rates: { read: number; write: number };
		prices: Prices;
		cold: ColdReason | null;
	} & ReturnType<typeof paybacksJson>;
	folds: {
		events: number;
		maskedBlocks: number;
		maskedTokens: number;
		invalidRecords: number;
		layers: Array<{
			seq: number;
			reason: string;
			blocks: number;
			usageBefore: number;
			usageAfter: number;
			/** The priced rule's record of why it folded (null for a layer the fixed ladder or 0.1.0 made). */
			decision: FoldDecisionRecord | null;
		}>;
	};
	cache: { sessionRatio: number | null; lastRatio: number | null; responses: number };
	foldCost: {
		maskedSent: number;
		reprefilled: number;
		writesReported: boolean;
		prices: SourcedPrices | null;
		/** Dollars folding saved so far net of re-writes, as the status text and `sessions` show it. */
		net: number | null;
	};
	flags: Required<Omit<StatusFlags, "recallChurn">> & { recallChurn: string[] };
	advisories: Array<{ kind: "idle" | "cold"; message: string }>;
	text: string;
}

/** Everything the status says, computed once: where the session stands and what the next request would fold. */
export interface StatusFacts {
	provider: string | null;
	model: string | null;
	window: number;
	source: WindowSource;
	plan: FoldPlan;
	/** The plan as the session records it: without the fold the next request would make. */
	shown: Pick<
		FoldPlan,
		"state" | "fixed" | "pricing" | "mass" | "geometry" | "maskedTokens" | "maskedBlocks" | "usage"
	>;
	due: (NonNullable<NonNullable<StatusReport["position"]>["pendingFold"]> & { cold: ColdReason | null }) | null;
	rule: FoldRule;
	accounting: AccountingReport;
	prices: (Prices & { source: string }) | null;
	flags: StatusReport["flags"];
	advisories: StatusReport["advisories"];
}

export function statusJson(loaded: LoadedSession, chosen: ChosenSession, f: StatusFacts): Omit<StatusReport, "text"> {
	const { file, replay } = loaded;
	const { plan, shown, accounting: a } = f;
	const g = plan.geometry;
	return {
		schema: "context-fold/status@1",
		session: {
			id: file.header?.id ?? null,
			path: file.path,
			version: file.header?.version ?? 1,
			cwd: loaded.file.header?.cwd ?? null,
			size: file.size,
			entries: file.entryCount,
			branchEntries: file.branch.length,
			malformed: file.malformed,
			chosen: chosen.chosen,
			brokenChain:
				file.brokenChain === null
					? null
					: { ...file.brokenChain, responses: branchResponses(file), fileResponses: file.responses },
		},
		model: { provider: f.provider, model: f.model, window: f.window, windowSource: f.source },
		position: {
			usage: plan.usage.tokens,
			usageSource: plan.usage.source,
			state: plan.state,
			armed: plan.fixed === null ? plan.geometry !== null : plan.fixed.armed,
			mass: shown.mass,
			budget: g?.budget ?? null,
			threshold: plan.fixed?.threshold ?? null,
			step: plan.fixed?.step ?? null,
			pendingFold:
				f.due === null ? null : { reason: f.due.reason, rule: f.due.rule, blocks: f.due.blocks, tokens: f.due.tokens },
		},
		rule: {
			active: f.rule.type,
			pinnedBy: f.rule.type === "fixed" ? f.rule.pinnedBy : null,
			pins: f.rule.type === "fixed" && f.rule.pinnedBy === "hand" ? f.rule.pins : [],
		},
		pricing: {
			basis: plan.pricing.rates.basis,
			// Ratios of two prices: four decimals say them exactly enough (0.1, not 0.09999999999999999).
			rates: { read: round4(plan.pricing.rates.read), write: round4(plan.pricing.rates.write) },
			prices: plan.pricing.prices,
			cold: plan.pricing.cold,
			...paybacksJson(
				foldPaybacks({
					plan,
					fixed: f.rule.type === "fixed",
					lastFold: replay.index.layers.at(-1) ?? null,
					pending: true,
				}),
			),
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
				decision: l.decision ?? null,
			})),
		},
		cache: { sessionRatio: a.sessionRatio, lastRatio: a.perTurn.at(-1) ?? null, responses: a.responses },
		foldCost: {
			maskedSent: a.maskedSent,
			reprefilled: a.reprefilled,
			writesReported: a.writesReported,
			prices: f.prices,
			net: foldNet(a, f.prices),
		},
		flags: f.flags,
		advisories: f.advisories,
	};
}

function round4(x: number): number {
	return Math.round(x * 1e4) / 1e4;
}
