/**
 * The targets for context-fold's defaults, checked per session: the cost targets under every
 * billing (the headline, and each sensitivity run, to say where a verdict changes), the rest under the
 * headline.
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

/** The arms of a session under a billing: the headline and the re-billed sensitivities, or the chars/3.3 re-run. */
export function armsUnder(trace: TraceResult, billing: string, rerun?: string): readonly ArmTotals[] {
	return billing === rerun ? trace.denser : (trace.billed[billing] ?? []);
}

interface Row {
	t: TraceResult;
	native: ArmTotals;
	def: ArmTotals;
	floor: ArmTotals | undefined;
}

function rowsUnder(result: EconomicsResult, billing: string, arm: string): Row[] {
	const rerun = result.sensitivities.at(-1);
	return result.traces.flatMap((t) => {
		const arms = armsUnder(t, billing, rerun);
		const native = arms.find((a) => a.arm === "native");
		const def = arms.find((a) => a.arm === arm);
		const floor = arms.find((a) => a.arm === "floor");
		return native && def ? [{ t, native, def, floor }] : [];
	});
}

const ratioOf = (r: Row) => r.def.cost / r.native.cost;
const times = (x: number) => `${x.toFixed(3)}×`;

/**
 * The three cost targets under one billing: no session (recorded, cut or generated) costlier
 * than native Pi (required); every whole recorded trace at or under 0.8×; their geometric mean at or
 * under 0.65× (both over the whole recorded traces only, never the cut or generated sessions).
 */
export function costTargets(result: EconomicsResult, billing: string, arm = "cf-default"): Verdict[] {
	const rows = rowsUnder(result, billing, arm);
	if (rows.length === 0) return [{ target: "targets", pass: null, detail: "no session had both arms" }];
	const recorded = rows.filter((r) => r.t.kind === "recorded");
	const g = geomean(recorded.map(ratioOf));
	const list = (rs: readonly Row[]) => rs.map((r) => `${r.t.name} ${times(ratioOf(r))}`).join("; ");
	const noneCostlier = (rs: readonly Row[]): Pick<Verdict, "pass" | "detail"> => {
		const costlier = rs.filter((r) => r.def.cost > r.native.cost);
		if (rs.length === 0) return { pass: null, detail: "no such session" };
		return costlier.length === 0
			? {
					pass: true,
					detail: `all ${rs.length} sessions at or under 1.000× (highest: ${list([...rs].sort((a, b) => ratioOf(b) - ratioOf(a)).slice(0, 1))})`,
				}
			: { pass: false, detail: `${costlier.length} of ${rs.length} sessions costlier: ${list(costlier)}` };
	};
	// The set (whole, cut and generated sessions in their own windows); the small-window
	// replays were added later to make early compaction fire, and get a verdict of their own.
	const own = rows.filter((r) => r.t.kind !== "window");
	const small = rows.filter((r) => r.t.kind === "window");
	return [
		{
			target: "required: no session, whether whole, cut or generated, costs more than native Pi",
			...noneCostlier(own),
		},
		{
			target: "… and no whole trace or long session replayed in a smaller window (100k, 128k) either",
			...noneCostlier(small),
		},
		{
			target: "every whole recorded trace ≤ 0.8× native",
			pass: recorded.length === 0 ? null : recorded.every((r) => ratioOf(r) <= 0.8),
			detail: recorded.length === 0 ? "no whole recorded trace" : list(recorded),
		},
		{
			target: "geometric mean over the whole recorded traces ≤ 0.65× native",
			pass: recorded.length === 0 ? null : g <= 0.65,
			detail: recorded.length === 0 ? "no whole recorded trace" : `${times(g)} over ${recorded.length} traces`,
		},
	];
}

/** The headline targets: the cost targets, then the floor, the budget, the prefix and simulate's agreement. */
export function checkTargets(result: EconomicsResult, arm = "cf-default"): Verdict[] {
	const rows = rowsUnder(result, result.headline, arm);
	if (rows.length === 0) return [{ target: "targets", pass: null, detail: "no session had both arms" }];
	const ratio = (a: ArmTotals, b: ArmTotals) => a.cost / b.cost;
	const list = (f: (r: Row) => string) => rows.map((r) => `${r.t.name} ${f(r)}`).join("; ");
	const verdicts = costTargets(result, result.headline, arm);
	const withFloor = rows.filter((r) => r.floor !== undefined);
	verdicts.push({
		target: "within 1.3× of the floor",
		pass: withFloor.length === 0 ? null : withFloor.every((r) => r.def.cost <= 1.3 * (r.floor as ArmTotals).cost),
		detail: list((r) => (r.floor ? `${ratio(r.def, r.floor).toFixed(3)}× floor` : "no floor")),
	});
	verdicts.push({
		target: "prompt never above the budget (75 % of the window, capped) on a request where the floor's is not",
		pass:
			withFloor.length === 0 || arm !== "cf-default" ? null : withFloor.every((r) => r.t.overBudget.floorUnder === 0),
		detail: list(
			(r) =>
				`${r.t.overBudget.floorUnder} such requests (${r.t.overBudget.requests} over ${r.t.budget.toLocaleString("en-US")} in all); peak ${r.def.peakPrompt.toLocaleString("en-US")}, floor's peak ${r.floor ? r.floor.peakPrompt.toLocaleString("en-US") : "n/a"}`,
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
		const dev = (r: Row) => ({
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
			target: "… and without folding (compactions re-decided on the same measure) vs native",
			pass: rows.every((r) => within(dev(r).baseline)),
			detail: list((r) => `tokens ${pct(dev(r).baseline[0] as number)}, cost ${pct(dev(r).baseline[1] as number)}`),
		});
	}
	return verdicts;
}

export interface SensitivityVerdicts {
	billing: string;
	verdicts: Verdict[];
	/** Sessions on the other side of native Pi than under the headline (costlier here and not there, or the reverse). */
	flips: Array<{ session: string; headline: number; here: number }>;
}

/** The cost targets under every billing, and the sessions whose "costlier than native" verdict flips. */
export function sensitivityVerdicts(result: EconomicsResult, arm = "cf-default"): SensitivityVerdicts[] {
	const headline = new Map(rowsUnder(result, result.headline, arm).map((r) => [r.t.name, ratioOf(r)]));
	return [result.headline, ...result.sensitivities].map((billing) => {
		const flips = rowsUnder(result, billing, arm).flatMap((r) => {
			const h = headline.get(r.t.name);
			const here = ratioOf(r);
			return h !== undefined && h > 1 !== here > 1 ? [{ session: r.t.name, headline: h, here }] : [];
		});
		return { billing, verdicts: costTargets(result, billing, arm), flips };
	});
}
