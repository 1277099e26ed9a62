/**
 * The economics benchmark: every trace × every arm through real Pi, two replays at a time (the
 * machine has 2 cores), then the same request logs billed under the headline model and each
 * sensitivity model. Returns plain totals; per-request rows go to CSV and SVG under docs/bench/.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { PRICE_PRESETS, type Prices } from "../../../src/core/accounting.ts";
import { DEFAULT_SETTINGS } from "../../../src/core/settings.ts";
import { ensureBundle, REPO } from "../../e2e/cf.ts";
import { NODE_BIN } from "../../e2e/harness/pi-env.ts";
import { traceFixture } from "../../helpers/traces.ts";
import {
	type ArmSpec,
	allArms,
	armsFor,
	DEFAULTS,
	EARLY_OFF,
	NATIVE,
	PI_COMPACTION,
	RAW,
	type SweepScope,
} from "./arms.ts";
import { type BillingModel, billingModel, FIVE_MINUTES, ONE_HOUR, SUMMARY_TOKENS } from "./billing.ts";
import { REQUEST_SECONDS, THINK_MINUTES } from "./demo-trace.ts";
import { FloorTracker } from "./floor.ts";
import { type GapBreakdown, gapToFloor } from "./gap.ts";
import { type ArmResult, type ArmTotals, measureFloor, measureRun } from "./metrics.ts";
import { buildPlan, type ReplayPlan, type TraceFeatures } from "./plan.ts";
import { type ArmRun, PI_VERSION, replayArm } from "./replay.ts";
import { type BenchSession, benchSessions, countCalls, HEADLINE_WINDOW, type SessionKind } from "./sessions.ts";
import { type SimulateAgreement, simulateTrace } from "./simulate-agreement.ts";
import { sha256Of } from "./trace-read.ts";
import { writeTraceFiles } from "./write-files.ts";

export const OUT_DIR = join(REPO, "docs/bench");
export const SENSITIVITY_CPT = 3.3;

export interface EconomicsOptions {
	quick: boolean;
	/** Only sessions whose name contains one of these comma-separated words. */
	trace?: string;
	/** Which sessions the fold-at × fold-step sweep covers (arms.ts). */
	sweep: SweepScope;
	/** Extra per-million prices, billed as a sensitivity run beside the headline. */
	customPrices?: Prices;
	jobs: number;
	command: string;
	log: (line: string) => void;
}

export interface TraceResult {
	name: string;
	/** recorded (a whole trace), cut (a recorded trace's first prompts) or generated. */
	kind: SessionKind;
	/** How it was made. */
	origin: string;
	/** The model's context window in its replays, and context-fold's default budget in it. */
	window: number;
	budget: number;
	/** Tool calls executed, and the characters / 4 of their recorded results (for "~1.7k tokens each"). */
	toolCalls: number;
	resultTokens: number;
	path: string;
	format: string;
	sha256: string;
	bytes: number;
	entries: number;
	malformedLines: number;
	offBranch: number;
	replies: number;
	inputs: number;
	features: TraceFeatures;
	/** Billing model name → totals of every arm (floor included). */
	billed: Record<string, ArmTotals[]>;
	/** Re-runs at characters / 3.3, headline prices and lifetime. */
	denser: ArmTotals[];
	overhead: { toolsChars: number; systemChars: number; tokens: number; requests: number } | null;
	gap: GapBreakdown | null;
	/** Turn requests where the defaults' prompt was over the budget while the floor's was not. */
	overBudget: { requests: number; floorUnder: number };
	/** The defaults' fold events one by one, with the layer each one committed. */
	folds: FoldEvent[];
	/**
	 * Recall tools declared only from the first fold event on, computed from the defaults' requests:
	 * what the requests before it would not pay, against rewriting the prefix the fold kept (the tools
	 * sit before every message, so adding them at the fold invalidates the cached part too).
	 */
	/** The floor with results and thinking only (before inputs and stale blocks could fold), headline billing. */
	floorResultsOnly: ArmTotals | null;
	/** `context-fold simulate` on the same trace (the CLI's own replay and billing). */
	simulate: SimulateAgreement;
	problems: string[];
	files: { csv: string; svg: string };
}

export interface EconomicsResult {
	command: string;
	quick: boolean;
	versions: Record<string, string>;
	settings: Record<string, string>;
	traceNote: string;
	headline: string;
	sensitivities: string[];
	traces: TraceResult[];
	sweep: SweepScope;
	arms: Array<{ id: string; label: string; kind: string; env: string }>;
	wallMs: number;
}

export interface FoldEvent {
	k: number;
	reason: string;
	blocks: number;
	/** Tokens the layer freed, by context-fold's own estimate. */
	freed: number;
	prompt: number;
	cacheRead: number;
	cacheWrite: number;
	cost: number;
}

interface Job {
	trace: string;
	window: number;
	plan: ReplayPlan;
	arm: ArmSpec;
	charsPerToken: number;
	floor?: FloorTracker;
	/** The floor as it was before inputs and stale blocks folded (results and thinking only), for comparison. */
	floorResultsOnly?: FloorTracker;
}

/** The defaults with early compaction against the same without it (headline billing), one log line. */
function logEarly(
	log: (line: string) => void,
	name: string,
	native: ArmTotals | undefined,
	on: ArmTotals | undefined,
	off: ArmTotals | undefined,
): void {
	if (native === undefined || on === undefined || off === undefined) return;
	const arm = (t: ArmTotals) =>
		`$${t.cost.toFixed(3)} (${(t.cost / native.cost).toFixed(3)}× native, ${t.compactions} compactions, ${t.hookCompactions} by hook, peak ${Math.round(t.peakPrompt / 1000)}k)`;
	log(
		`[economics] ${name} early compaction: defaults ${arm(on)} vs off ${arm(off)}: ${on.cost <= off.cost ? "saves" : "costs"} $${Math.abs(off.cost - on.cost).toFixed(3)}`,
	);
}

export async function runEconomics(o: EconomicsOptions): Promise<EconomicsResult> {
	const started = performance.now();
	const bundle = ensureBundle();
	const headline = billingModel("anthropic", { lifetimeMs: FIVE_MINUTES, charsPerToken: 4 });
	const sensitivities: BillingModel[] = [
		billingModel("openai", { name: "OpenAI, 5 min" }),
		billingModel("gemini", { name: "Gemini, 5 min" }),
		billingModel(
			{ ...PRICE_PRESETS.anthropic, cacheWrite: 6 },
			{ lifetimeMs: ONE_HOUR, name: "Anthropic, 1 h (writes 2x)" },
		),
		...(o.customPrices ? [billingModel(o.customPrices, { name: "custom prices, 5 min" })] : []),
	];

	const set = await benchSessions({ filter: o.trace, quick: o.quick, bundle, log: o.log });
	o.log(`[economics] ${set.note}`);
	const sessions: BenchSession[] = set.sessions;
	for (const { trace: t, window } of sessions) {
		o.log(`[economics] session ${t.name} (${window / 1000}k window): ${t.path} (${t.format}, sha256 ${t.sha256})`);
	}
	const plans = new Map(sessions.map((s) => [s.trace.name, buildPlan(s.trace)]));
	const jobs: Job[] = [];
	for (const { trace: t, window, kind } of sessions) {
		const plan = plans.get(t.name) as ReplayPlan;
		for (const arm of armsFor(kind, o.quick, o.sweep)) {
			jobs.push({
				trace: t.name,
				window,
				plan,
				arm,
				charsPerToken: 4,
				...(arm.id === RAW.id && {
					floor: new FloorTracker(window),
					floorResultsOnly: new FloorTracker(window, { inputs: false }),
				}),
			});
		}
		if (!o.quick) {
			for (const arm of [NATIVE, DEFAULTS]) {
				jobs.push({ trace: t.name, window, plan, arm, charsPerToken: SENSITIVITY_CPT });
			}
		}
	}
	o.log(
		`[economics] ${jobs.length} replays (${sessions.length} sessions, sweep: ${o.quick ? "none" : o.sweep}${o.quick ? "" : ", + sensitivity"}), ${o.jobs} at a time`,
	);
	const runs = new Map<Job, ArmRun>();
	await pool(jobs, o.jobs, async (job) => {
		const model = billingModel("anthropic", { charsPerToken: job.charsPerToken });
		const run = await replayArm({
			plan: job.plan,
			arm: job.arm,
			billing: model,
			bundle,
			window: job.window,
			...(job.floor && {
				observe: (messages: Parameters<FloorTracker["observe"]>[0], record: Parameters<FloorTracker["observe"]>[1]) => {
					job.floor?.observe(messages, record);
					job.floorResultsOnly?.observe(messages, record);
				},
			}),
		});
		runs.set(job, run);
		const problems = run.problems.length > 0 ? ` · ${run.problems.length} PROBLEMS: ${run.problems[0]}` : "";
		o.log(
			`[economics] ${job.trace} ${job.arm.id}${job.charsPerToken !== 4 ? ` (chars/${job.charsPerToken})` : ""}: ${run.records.length} requests in ${(run.wallMs / 1000).toFixed(1)} s${problems}`,
		);
	});

	// A quick smoke run never overwrites the committed charts and tables.
	const outDir = o.quick ? mkdtempSync(join(tmpdir(), "cf-econ-quick-")) : OUT_DIR;
	mkdirSync(outDir, { recursive: true });
	const results: TraceResult[] = [];
	for (const { trace: t, window, kind, origin } of sessions) {
		const plan = plans.get(t.name) as ReplayPlan;
		const budget = budgetTokens(window);
		const mine = jobs.filter((j) => j.trace === t.name);
		const at4 = mine.filter((j) => j.charsPerToken === 4);
		const floorJob = at4.find((j) => j.floor !== undefined);
		const measureAll = (model: BillingModel): Array<{ id: string; result: ArmResult }> => {
			const out = at4.map((j) => ({ id: j.arm.id, result: measureRun(runs.get(j) as ArmRun, model) }));
			if (floorJob?.floor) {
				out.splice(1, 0, {
					id: "floor",
					result: measureFloor(floorJob.floor.records, model, floorJob.floor.problems.length),
				});
			}
			return out;
		};
		const main = measureAll(headline);
		let floorResultsOnly: ArmTotals | null = null;
		if (floorJob?.floor && floorJob.floorResultsOnly) {
			const now = measureFloor(floorJob.floor.records, headline, 0).totals;
			floorResultsOnly = measureFloor(floorJob.floorResultsOnly.records, headline, 0).totals;
			o.log(
				`[economics] ${t.name} floor (${headline.name}): $${now.cost.toFixed(2)} with inputs and stale blocks, $${floorResultsOnly.cost.toFixed(2)} results and thinking only`,
			);
		}
		const billed: Record<string, ArmTotals[]> = { [headline.name]: main.map((m) => m.result.totals) };
		for (const s of sensitivities) billed[s.name] = measureAll(s).map((m) => m.result.totals);
		for (const [billing, totals] of Object.entries(billed)) {
			const of = (id: string) => totals.find((x) => x.arm === id);
			logEarly(o.log, `${t.name} (${billing})`, of(NATIVE.id), of(DEFAULTS.id), of(EARLY_OFF.id));
		}
		const denserModel = billingModel("anthropic", { charsPerToken: SENSITIVITY_CPT });
		const denser = mine
			.filter((j) => j.charsPerToken === SENSITIVITY_CPT)
			.map((j) => measureRun(runs.get(j) as ArmRun, denserModel).totals);
		if (floorJob?.floor) denser.push(measureFloor(floorJob.floor.records, denserModel, 0).totals);

		const byId = new Map(main.map((m) => [m.id, m.result]));
		const runOf = (id: string) => {
			const job = at4.find((j) => j.arm.id === id);
			return job ? runs.get(job) : undefined;
		};
		const overhead = overheadOf(runOf(NATIVE.id), runOf(DEFAULTS.id), headline.charsPerToken);
		const def = byId.get(DEFAULTS.id);
		const floor = byId.get("floor");
		const gap = def && floor ? gapToFloor(def, floor, overhead?.tokens ?? 0, headline) : null;
		const defRun = runOf(DEFAULTS.id);
		const floorPrompt = new Map((floor?.rows ?? []).map((row) => [row.k, row.prompt]));
		const over = (def?.rows ?? []).filter((row) => row.kind !== "summary" && row.prompt > budget);
		const overBudget = {
			requests: over.length,
			floorUnder: over.filter((row) => (floorPrompt.get(row.k) ?? Number.POSITIVE_INFINITY) <= budget).length,
		};
		const folds: FoldEvent[] = (def?.rows ?? [])
			.filter((row) => row.foldEvent)
			.map((row, i) => {
				const layer = defRun?.layers[i];
				return {
					k: row.k,
					reason: layer?.reason ?? "?",
					blocks: layer ? Object.keys(layer.saved).length : row.newCodes,
					freed: layer ? Object.values(layer.saved).reduce((a, b) => a + b, 0) : 0,
					prompt: row.prompt,
					cacheRead: row.cacheRead,
					cacheWrite: row.cacheWrite,
					cost: row.cost,
				};
			});
		const problems = [...mine.flatMap((j) => (runs.get(j)?.problems ?? []).map((p) => `${j.arm.id}: ${p}`))];
		if (floorJob?.floor) problems.push(...floorJob.floor.problems.map((p) => `floor: ${p}`));
		const files = writeTraceFiles(outDir, t.name, main, {
			budget,
			threshold: window - PI_COMPACTION.reserveTokens,
			window,
		});
		results.push({
			name: t.name,
			kind,
			origin,
			window,
			toolCalls: countCalls(t),
			resultTokens: Object.values(plan.tools.results).reduce(
				(n, r) => n + Math.ceil(JSON.stringify(r.content).length / 4),
				0,
			),
			budget,
			path: shownPath(t.path),
			format: t.format,
			sha256: t.sha256,
			bytes: t.bytes,
			entries: t.entries.length,
			malformedLines: t.malformedLines,
			offBranch: t.offBranch,
			replies: plan.replies.length,
			inputs: plan.steps.length,
			features: plan.features,
			billed,
			denser,
			overhead,
			gap,
			folds,
			overBudget,
			floorResultsOnly,
			simulate: simulateTrace(t, fixedPromptTokens(runOf(NATIVE.id), headline.charsPerToken), window),
			problems,
			files: { csv: relative(REPO, files.csv), svg: relative(REPO, files.svg) },
		});
	}
	return {
		command: o.command,
		quick: o.quick,
		versions: versions(bundle),
		settings: settingsFacts(),
		traceNote: set.note,
		headline: headline.name,
		sensitivities: [...sensitivities.map((s) => s.name), `Anthropic, 5 min, chars/${SENSITIVITY_CPT} (re-run)`],
		traces: results,
		sweep: o.quick ? "none" : o.sweep,
		arms: allArms(o.quick).map((a) => ({
			id: a.id,
			label: a.label,
			kind: a.kind,
			env: Object.entries(a.env)
				.map(([k, v]) => `${k}=${v}`)
				.join(" "),
		})),
		wallMs: performance.now() - started,
	};
}

/** context-fold's default budget in a window. */
export function budgetTokens(window: number = HEADLINE_WINDOW): number {
	const byFraction = DEFAULT_SETTINGS.budgetFraction * window;
	return Math.floor(
		DEFAULT_SETTINGS.budgetCap === null ? byFraction : Math.min(DEFAULT_SETTINGS.budgetCap, byFraction),
	);
}

/** System prompt and tools of plain Pi's requests as the harness bills them (serialized, chars/4). */
function fixedPromptTokens(native: ArmRun | undefined, charsPerToken: number): number | undefined {
	const a = native?.records.find((r) => r.kind === "turn");
	return a ? Math.ceil(a.fixedChars / charsPerToken) : undefined;
}

/**
 * The fixed cost of context-fold's recall tools: tools array and system prompt, with minus without,
 * on the newest request of a context-fold run (declared lazily, they are absent from the first ones),
 * and how many of its requests carried them.
 */
function overheadOf(
	native: ArmRun | undefined,
	cf: ArmRun | undefined,
	charsPerToken: number,
): TraceResult["overhead"] {
	const a = native?.records.find((r) => r.kind === "turn");
	const turns = cf?.records.filter((r) => r.kind === "turn") ?? [];
	const b = turns.at(-1);
	if (!a || !b) return null;
	const toolsChars = b.toolsChars - a.toolsChars;
	const systemChars = b.systemChars - a.systemChars;
	return {
		toolsChars,
		systemChars,
		tokens: Math.ceil((toolsChars + systemChars) / charsPerToken),
		requests: turns.filter((r) => r.toolsChars > a.toolsChars).length,
	};
}

function settingsFacts(): Record<string, string> {
	return {
		"context window": `${HEADLINE_WINDOW.toLocaleString("en-US")} tokens unless the session says otherwise (its window is in the table of sessions)`,
		"Pi compaction (native arm)": `reserve ${PI_COMPACTION.reserveTokens.toLocaleString("en-US")}, keep ${PI_COMPACTION.keepRecentTokens.toLocaleString("en-US")}`,
		"summary requests": `fixed ${SUMMARY_TOKENS.toLocaleString("en-US")}-token summary; prompt billed as uncached input, plus ${SUMMARY_TOKENS.toLocaleString("en-US")} output tokens`,
		tokens: "serialized request characters / 4 (sensitivity: / 3.3, re-run)",
		"headline prices": `Anthropic preset, $/M: input ${PRICE_PRESETS.anthropic.input}, output ${PRICE_PRESETS.anthropic.output}, cache read ${PRICE_PRESETS.anthropic.cacheRead}, cache write ${PRICE_PRESETS.anthropic.cacheWrite}`,
		"cache lifetime": "5 minutes between request start times recorded in the trace (1 hour as a sensitivity)",
		"context-fold defaults": `priced fold rule (rent or buy at the model's declared prices, free folds on a cold cache), budget ${budgetTokens().toLocaleString("en-US")} in a 200k window (${budgetTokens(100_000).toLocaleString("en-US")} in 100k), tail ${DEFAULT_SETTINGS.tail.toLocaleString("en-US")}, COMPACT ${DEFAULT_SETTINGS.compact}`,
		"generated session timing": `${REQUEST_SECONDS} s per request, ${THINK_MINUTES} min before each prompt after the first`,
	};
}

function versions(bundle: string): Record<string, string> {
	const pkg = (path: string) => (JSON.parse(readFileSync(path, "utf8")) as { version: string }).version;
	const git = (...args: string[]) => {
		try {
			return execFileSync("git", args, { cwd: REPO, encoding: "utf8" }).trim();
		} catch {
			return "unknown";
		}
	};
	const dirty = git("status", "--porcelain", "--", "src").split("\n").filter(Boolean).length;
	return {
		pi: `${pkg(join(REPO, "node_modules/@earendil-works/pi-coding-agent/package.json"))} (required ${PI_VERSION})`,
		node: execFileSync(NODE_BIN, ["--version"], { encoding: "utf8" }).trim(),
		bun: process.versions.bun ?? "n/a",
		"context-fold": `${pkg(join(REPO, "package.json"))} @ ${git("rev-parse", "--short", "HEAD")}${dirty > 0 ? ` + ${dirty} uncommitted src files` : ""}`,
		"dist/index.js sha256": sha256Of(readFileSync(bundle)),
	};
}

async function pool<T>(items: readonly T[], size: number, work: (item: T) => Promise<void>): Promise<void> {
	let next = 0;
	const worker = async () => {
		while (next < items.length) {
			const item = items[next++] as T;
			await work(item);
		}
	};
	await Promise.all(Array.from({ length: Math.max(1, size) }, worker));
}

/** Where a session came from, as the report shows it: a recorded trace by its vendored fixture (and its cut). */
function shownPath(path: string): string {
	if (path.startsWith("(generated)")) return path;
	const [file = path, ...cut] = path.split(", ");
	return [traceFixture(file), ...cut].join(", ");
}
