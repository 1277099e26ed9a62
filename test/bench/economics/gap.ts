/**
 * Where an arm's cost above the floor goes. The trajectory is the same in every arm, so turn request
 * k of the arm and of the floor answer the same recorded message and can be compared one by one:
 * - declarations: the recall tools' fixed tokens, on every request, at that request's price;
 * - fold events: the rest of the difference on requests that carried a new fold (the prefix rewrite);
 * - compactions: summary requests, plus the difference on the first request after each compaction;
 * - late masking: the rest, on ordinary requests before the arm's first compaction (blocks the floor
 *   had already masked, still sent in full);
 * - after compaction: the rest, on ordinary requests after it. The floor never compacts, so this is
 *   negative when a compaction left the arm with a smaller prompt than masking alone could.
 */
import type { BillingModel } from "./billing.ts";
import type { ArmResult, RequestRow } from "./metrics.ts";

export interface GapBreakdown {
	arm: number;
	floor: number;
	declarations: number;
	foldEvents: number;
	compactions: number;
	lateMasking: number;
	afterCompaction: number;
}

export function gapToFloor(
	arm: ArmResult,
	floor: ArmResult,
	overheadTokens: number,
	model: BillingModel,
): GapBreakdown {
	const floorByK = new Map<number, RequestRow>();
	for (const r of floor.rows) floorByK.set(r.k, r);
	const out: GapBreakdown = {
		arm: arm.totals.cost,
		floor: floor.totals.cost,
		declarations: 0,
		foldEvents: 0,
		compactions: 0,
		lateMasking: 0,
		afterCompaction: 0,
	};
	let compacted = false;
	let turns = 0;
	// The defaults declare the recall tools lazily: the first fold event's request is the first to carry them.
	let declared = false;
	for (const r of arm.rows) {
		if (r.kind === "summary") {
			out.compactions += r.cost;
			continue;
		}
		const cached = turns > 0 && !r.expired;
		turns++;
		const perToken = (cached ? model.prices.cacheRead : model.prices.cacheWrite || model.prices.input) / 1e6;
		if (r.foldEvent) declared = true;
		const declarations = declared ? overheadTokens * perToken : 0;
		out.declarations += declarations;
		const rest = r.cost - (floorByK.get(r.k)?.cost ?? 0) - declarations;
		if (r.compactionBefore) {
			out.compactions += rest;
			compacted = true;
		} else if (r.foldEvent) out.foldEvents += rest;
		else if (compacted) out.afterCompaction += rest;
		else out.lateMasking += rest;
	}
	return out;
}
