/**
 * The targets for context-fold's defaults (headline billing), checked per trace.
 */
import type { EconomicsResult, TraceResult } from "./bench.ts";
import type { ArmTotals } from "./metrics.ts";
import { deviation } from "./simulate-agreement.ts";

/** `context-fold simulate` must agree with the harness within this, on prompt tokens and cost. */
export const SIMULATE_TOLERANCE = 0.05;

export interface Verdict {
	target: string;
	pass: boolean | null;
	detail: string;
}

export function armOf(trace: TraceResult, billing: string, id: string): ArmTotals | undefined {
	return trace.billed[billing]?.find((a) => a.arm === id);
}

export function geomean(values: readonly number[]): number {
	if (values.length === 0) return Number.NaN;
	return Math.exp(values.reduce((s, v) => s + Math.log(v), 0) / values.length);
}

export function checkTargets(result: EconomicsResult, budget: number, arm = "cf-default"): Verdict[] {
	const rows = result.traces.flatMap((t) => {
		const native = armOf(t, result.headline, "native");
		const def = armOf(t, result.headline, arm);
		const floor = armOf(t, result.headline, "floor");
		return native && def ? [{ t, native, def, floor }] : [];
	});
	if (rows.length === 0) return [{ target: "targets", pass: null, detail: "no trace had both arms" }];
	const ratio = (a: ArmTotals, b: ArmTotals) => a.cost / b.cost;
	const list = (f: (r: (typeof rows)[number]) => string) => rows.map((r) => `${r.t.name} ${f(r)}`).join("; ");
	const ratios = rows.map((r) => ratio(r.def, r.native));
	const g = geomean(ratios);
	const verdicts: Verdict[] = [
		{
			target: "never costlier than native on any trace",
			pass: rows.every((r) => r.def.cost <= r.native.cost),
			detail: list((r) => `${ratio(r.def, r.native).toFixed(3)}×`),
		},
		{
			target: "≤ 0.8× native on every trace",
			pass: ratios.every((x) => x <= 0.8),
			detail: list((r) => `${ratio(r.def, r.native).toFixed(3)}×`),
		},
		{ target: "geometric mean ≤ 0.65× native", pass: g <= 0.65, detail: `${g.toFixed(3)}× over ${rows.length} traces` },
	];
	const withFloor = rows.filter((r) => r.floor !== undefined);
	verdicts.push({
		target: "within 1.3× of the floor",
		pass: withFloor.length === 0 ? null : withFloor.every((r) => r.def.cost <= 1.3 * (r.floor as ArmTotals).cost),
		detail: list((r) => (r.floor ? `${ratio(r.def, r.floor).toFixed(3)}× floor` : "no floor")),
	});
	verdicts.push({
		target: `prompt never above the budget (${budget.toLocaleString("en-US")}) on a request where the floor's is not`,
		pass:
			withFloor.length === 0 || arm !== "cf-default" ? null : withFloor.every((r) => r.t.overBudget.floorUnder === 0),
		detail: list(
			(r) =>
				`${r.t.overBudget.floorUnder} such requests (${r.t.overBudget.requests} over budget in all); peak ${r.def.peakPrompt.toLocaleString("en-US")}, floor's peak ${r.floor ? r.floor.peakPrompt.toLocaleString("en-US") : "n/a"}`,
		),
	});
	verdicts.push({
		target: "prefix breaks ≤ fold events + compactions + lifetime expiries + unfolds",
		pass: rows.every(
			(r) => r.def.prefixBreaks <= r.def.foldEvents + r.def.compactions + r.def.expiries + r.def.unfolds,
		),
		detail: list(
			(r) =>
				`${r.def.prefixBreaks} ≤ ${r.def.foldEvents}+${r.def.compactions}+${r.def.expiries}+${r.def.unfolds} (${r.def.unexplainedBreaks} at neither a fold nor a compaction)`,
		),
	});
	if (arm === "cf-default") {
		const pct = (x: number) => `${x >= 0 ? "+" : ""}${(x * 100).toFixed(1)} %`;
		const dev = (r: (typeof rows)[number]) => ({
			folded: [
				deviation(r.t.simulate.folded.prompt, r.def.promptTokens),
				deviation(r.t.simulate.folded.cost, r.def.cost),
			],
			baseline: [
				deviation(r.t.simulate.baseline.prompt, r.native.promptTokens),
				deviation(r.t.simulate.baseline.cost, r.native.cost),
			],
		});
		const within = (xs: number[]) => xs.every((x) => Math.abs(x) <= SIMULATE_TOLERANCE);
		verdicts.push({
			target: "`context-fold simulate` within 5 % of the harness (prompt tokens and cost): with folding vs cf-default",
			pass: rows.every((r) => within(dev(r).folded)),
			detail: list((r) => `tokens ${pct(dev(r).folded[0] as number)}, cost ${pct(dev(r).folded[1] as number)}`),
		});
		verdicts.push({
			target: "… and without folding (the recording as it happened) vs native",
			pass: rows.every((r) => within(dev(r).baseline)),
			detail: list((r) => `tokens ${pct(dev(r).baseline[0] as number)}, cost ${pct(dev(r).baseline[1] as number)}`),
		});
	}
	return verdicts;
}
