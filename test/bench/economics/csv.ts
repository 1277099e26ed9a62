/**
 * Per-request CSV: one row per request of each arm (summary requests included), in arrival order.
 * Times are seconds since the trace's first request; costs are US dollars at the headline prices.
 */
import type { RequestRow } from "./metrics.ts";

export const CSV_COLUMNS = [
	"arm",
	"k",
	"kind",
	"t_s",
	"prompt_tokens",
	"cache_read",
	"cache_write",
	"input",
	"output",
	"cost_usd",
	"prefix_ratio",
	"prefix_break",
	"fold_event",
	"new_fold_codes",
	"masked_tokens",
	"compaction_before",
	"lifetime_expired",
] as const;

export function requestsCsv(rows: readonly RequestRow[]): string {
	const t0 = rows.reduce((min, r) => (Number.isFinite(r.t) ? Math.min(min, r.t) : min), Number.POSITIVE_INFINITY);
	const lines = [CSV_COLUMNS.join(",")];
	for (const r of rows) {
		lines.push(
			[
				r.arm,
				r.k,
				r.kind,
				Number.isFinite(r.t) && Number.isFinite(t0) ? Math.round((r.t - t0) / 1000) : "",
				r.prompt,
				r.cacheRead,
				r.cacheWrite,
				r.input,
				r.output,
				r.cost.toFixed(6),
				r.prefixRatio === null ? "" : r.prefixRatio.toFixed(4),
				flag(r.prefixBreak),
				flag(r.foldEvent),
				r.newCodes,
				r.maskedTokens,
				flag(r.compactionBefore),
				flag(r.expired),
			].join(","),
		);
	}
	return `${lines.join("\n")}\n`;
}

function flag(b: boolean): string {
	return b ? "1" : "0";
}
