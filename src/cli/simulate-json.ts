/**
 * A simulation as one stable JSON document (schema context-fold/simulate@1) for scripts: every
 * session's summary and each request's figures in both arms.
 */
import type { BilledRequest } from "../core/billing.ts";
import type { SimulatedSession, SimulateOptions } from "./simulate-report.ts";

/** The stable JSON document. Field names and meanings only ever grow; a breaking change bumps @1. */
export function simulationJson(sessions: readonly SimulatedSession[], o: SimulateOptions) {
	return {
		schema: "context-fold/simulate@1",
		price: o.price,
		ttl: o.ttl,
		sessions: sessions.map((s) => ({
			session: { id: s.id, path: s.path, malformed: s.malformed },
			model: s.model,
			window: s.window,
			windowSource: s.windowSource,
			prices: s.prices,
			costCheck: s.costCheck,
			summary: s.simulation.summary,
			requests: s.simulation.rows.map((r) => ({
				index: r.request.index,
				entryId: r.request.entryId,
				at: r.request.at,
				provider: r.request.provider,
				model: r.request.model,
				reported: r.request.reported,
				usage: r.request.usage,
				state: r.request.state,
				maskedTokens: r.request.maskedTokens,
				fold: r.request.fold,
				compacted: r.request.compacted,
				foldedCompacted: r.request.armCompacted,
				baselineCompacted: r.request.baseCompacted,
				baseline: bill(r.baseline),
				folded: bill(r.folded),
				baselineSummaries: r.baselineSummaries.map((b, i) => ({
					kind: r.request.baseSummaries[i]?.kind ?? "history",
					prompt: b.prompt,
					input: b.input,
					output: b.output,
					cost: b.cost,
				})),
			})),
		})),
	};
}

function bill(b: BilledRequest | null) {
	if (b === null) return null;
	return {
		prompt: b.prompt,
		input: b.input,
		cacheRead: b.cacheRead,
		cacheWrite: b.cacheWrite,
		output: b.output,
		cost: b.cost,
		prefixBreak: b.prefixBreak,
		expired: b.expired,
	};
}
