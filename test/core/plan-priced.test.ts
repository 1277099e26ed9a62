/**
 * planFold deciding with the priced rule (policy/price.ts) on sessions grown request by request:
 * when the first fold comes (computed here from the requests themselves, not by the planner's own
 * functions), what a cold cache does, price tiers and zero prices, the recall tools declared lazily,
 * the decision a layer records and how an older or a damaged record reads back, and the fixed ladder
 * that ignores all of it.
 */
import { describe, expect, test } from "bun:test";
import { PRICE_PRESETS, type PriceSchedule } from "../../src/core/accounting.ts";
import type { ViewMessage } from "../../src/core/blocks.ts";
import { addRecord, emptyIndex, type FrozenLayer, type MaskIndex, parseFoldRecord } from "../../src/core/layers.ts";
import { type FoldPlan, type PlanInput, planFold } from "../../src/core/plan.ts";
import { type PricedEvent, RENT_MULTIPLE, requestsToPay } from "../../src/core/policy/price.ts";
import { buildView, type PiMessage } from "../../src/core/session/view.ts";
import { DEFAULT_SETTINGS, type Settings } from "../../src/core/settings.ts";
import { estimateTokens } from "../../src/core/tokens.ts";
import {
	assistantCall,
	FIXED_SETTINGS,
	filler,
	outgoing,
	sha256,
	T0,
	toolResult,
	user,
	viewTokens,
} from "../helpers/session.ts";

const PRICED: Settings = { ...DEFAULT_SETTINGS, providerCacheIdleMinutes: {}, fixedFolds: false };
const ANTHROPIC: PriceSchedule = { ...PRICE_PRESETS.anthropic };
const SYSTEM = 1_000;

interface Run {
	plans: FoldPlan[];
	/** The messages of each request, before its plan applied anything. */
	views: ViewMessage[][];
	/** The prompt each request sent, as the provider reported it back. */
	prompts: number[];
	index: MaskIndex;
}

/**
 * Grow a tool chain: each request is planned, its layer committed, and a response that reports the
 * outgoing prompt (plus a system prompt) as usage appended with the step's tool results.
 */
function drive(o: {
	turns: number;
	window: number;
	settings?: Partial<Settings>;
	size?: number;
	results?: (turn: number, ts: number) => ViewMessage[];
	extra?: (turn: number, previous: FoldPlan | undefined) => Partial<PlanInput>;
	/** The first user message's text. */
	prompt?: string;
}): Run {
	const settings: Settings = { ...PRICED, ...o.settings };
	const index = emptyIndex();
	const view: ViewMessage[] = [user("u0", o.prompt ?? "please fix the build", T0)];
	const run: Run = { plans: [], views: [], prompts: [], index };
	for (let turn = 0; turn <= o.turns; turn++) {
		run.views.push(view.slice());
		const plan = planFold({
			messages: view,
			index,
			settings,
			window: o.window,
			hash: sha256,
			...o.extra?.(turn, run.plans[turn - 1]),
		});
		if (plan.layer) addRecord(index, plan.layer);
		run.plans.push(plan);
		const prompt = viewTokens(outgoing(view, plan)) + SYSTEM;
		run.prompts.push(prompt);
		if (turn === o.turns) break;
		const ts = T0 + (turn + 1) * 1000;
		const cacheRead = Math.floor(prompt * 0.8);
		view.push(assistantCall(`a${turn}`, ts, { input: prompt - cacheRead, cacheRead, cacheWrite: 0, output: 20 }));
		view.push(...(o.results?.(turn, ts + 1) ?? [toolResult(`r${turn}`, ts + 1, filler(o.size ?? 1700, `t${turn}`))]));
	}
	return run;
}

const firstFold = (run: Run) => run.plans.findIndex((p) => p.layer !== null);

// ---------------------------------------------------------------------------------------------
// The rule, computed from the requests themselves: message sizes at chars/4 plus 4 of framing,
// the budget and tail from the settings, and rent counted request by request from what each past
// request held.

const msgTokens = (m: ViewMessage) => 4 + m.blocks.reduce((n, b) => n + estimateTokens(b.text.length), 0);
const DIGEST = 80;
const MIN_BLOCK = 256;

interface Expected {
	/** The request index of the first event, and which message it folds from. */
	at: number;
	from: number;
	rewrite: number;
	rent: number;
}

/**
 * The first request (before any fold) at which some event's rent has reached RENT_MULTIPLE times its
 * rewrite, at the read and write rates `ratesOf(request)` gives: rent for a tool result counts each
 * earlier request that re-read it (it was in the request before too) while at least `tail` tokens
 * followed it.
 */
function expectedFirstFold(
	views: readonly ViewMessage[][],
	window: number,
	settings: Settings,
	ratesOf: (request: number) => { read: number; write: number },
): Expected | null {
	const budget = Math.floor(Math.min(settings.budgetCap ?? Number.POSITIVE_INFINITY, settings.budgetFraction * window));
	const tail = Math.min(settings.tail, Math.floor(budget / 2));
	const after = (view: readonly ViewMessage[], i: number) => {
		let t = 0;
		for (let j = i + 1; j < view.length; j++) t += msgTokens(view[j] as ViewMessage);
		return t;
	};
	for (let t = 0; t < views.length; t++) {
		const view = views[t] as ViewMessage[];
		let lastOk = -1;
		view.forEach((m, i) => {
			if (m.role === "assistant") lastOk = i;
		});
		if (lastOk < 0) continue;
		let cachedEnd = 0;
		for (let i = 0; i < lastOk; i++) cachedEnd += msgTokens(view[i] as ViewMessage);
		const candidates: { i: number; offset: number; freed: number; rent: number }[] = [];
		let offset = 0;
		for (let i = 0; i < lastOk; i++) {
			const m = view[i] as ViewMessage;
			const tokens = estimateTokens((m.blocks[0]?.text ?? "").length);
			if (m.role === "toolResult" && after(view, i) >= tail && tokens >= MIN_BLOCK) {
				const freed = tokens - DIGEST;
				let rereads = 0;
				for (let s = 1; s < t; s++) {
					const held = views[s] as ViewMessage[];
					const before = views[s - 1] as ViewMessage[];
					if (i < before.length && after(held, i) >= tail) rereads++;
				}
				candidates.push({ i, offset, freed, rent: freed * rereads });
			}
			offset += msgTokens(m);
		}
		const { read: r, write: w } = ratesOf(t);
		for (let k = 0; k < candidates.length; k++) {
			const rest = candidates.slice(k);
			const L = cachedEnd - (candidates[k] as (typeof candidates)[number]).offset;
			const F = rest.reduce((n, c) => n + c.freed, 0);
			const rent = rest.reduce((n, c) => n + c.rent, 0) * r;
			const rewrite = Math.max(0, L - F) * w - L * r;
			if (rent >= RENT_MULTIPLE * rewrite)
				return { at: t, from: (candidates[k] as (typeof candidates)[number]).i, rewrite, rent };
		}
	}
	return null;
}

const anthropicRates = () => ({ read: 0.3 / 3, write: 3.75 / 3 });

describe("the first priced fold comes at the first request where its rent has reached RENT_MULTIPLE times its rewrite", () => {
	test("a 100k window, results of ~1.7k tokens, Anthropic's prices", () => {
		const run = drive({ turns: 40, window: 200_000, extra: () => ({ prices: ANTHROPIC }) });
		const expected = expectedFirstFold(run.views, 200_000, PRICED, anthropicRates);
		expect(expected).not.toBeNull();
		const at = (expected as Expected).at;
		expect(firstFold(run)).toBe(at);
		// Candidates waited for many requests before (it is not the first chance to fold).
		const firstCandidate = run.plans.findIndex((p) => p.state === "accumulating");
		expect(firstCandidate).toBeGreaterThan(0);
		expect(at - firstCandidate).toBeGreaterThan(5);
		for (const p of run.plans.slice(firstCandidate, at)) {
			expect(p.layer).toBeNull();
			expect(p.pricing.decision.fire).toBe(false);
		}
		const fold = run.plans[at] as FoldPlan;
		expect(fold.pricing.decision.fire && fold.pricing.decision.reason).toBe("rent");
		const d = fold.pricing.decision as Extract<FoldPlan["pricing"]["decision"], { fire: true }>;
		expect(d.event.rewrite).toBeCloseTo((expected as Expected).rewrite, 6);
		expect(d.event.rent).toBeCloseTo((expected as Expected).rent, 6);
		// It folds from the expected message on, and nothing before it.
		const folded = (fold.layer as FrozenLayer).blocks.map((b) =>
			run.views[at]?.findIndex((m) => m.entryId === b.entryId),
		);
		expect(Math.min(...(folded as number[]))).toBe((expected as Expected).from);
	});
	test("the same in a 200k window with larger results", () => {
		const run = drive({ turns: 45, window: 200_000, size: 3_000, extra: () => ({ prices: ANTHROPIC }) });
		const expected = expectedFirstFold(run.views, 200_000, PRICED, anthropicRates);
		expect(firstFold(run)).toBe((expected as Expected).at);
	});
	test("no prompt cache: a fold the first time anything can fold", () => {
		const noCache: PriceSchedule = { input: 2, output: 8, cacheRead: 0, cacheWrite: 0 };
		const run = drive({ turns: 25, window: 200_000, extra: () => ({ prices: noCache }) });
		const firstCandidate = run.plans.findIndex((p) => p.state !== "idle");
		expect(firstFold(run)).toBe(firstCandidate);
		expect(expectedFirstFold(run.views, 200_000, PRICED, () => ({ read: 1, write: 1 }))?.at).toBe(firstCandidate);
		expect(run.plans[firstCandidate]?.pricing.rates).toEqual({ read: 1, write: 1, basis: "model" });
	});
	test("no write premium (OpenAI-style) folds sooner than Anthropic's prices", () => {
		const openai: PriceSchedule = { ...PRICE_PRESETS.openai };
		const a = firstFold(drive({ turns: 40, window: 200_000, extra: () => ({ prices: ANTHROPIC }) }));
		const run = drive({ turns: 40, window: 200_000, extra: () => ({ prices: openai }) });
		const o = firstFold(run);
		expect(o).toBe(
			expectedFirstFold(run.views, 200_000, PRICED, () => ({ read: 0.125 / 1.25, write: 1 }))?.at as number,
		);
		expect(o).toBeLessThan(a);
	});
	test("rent counts only requests that re-read a result, not the one that first sent it", () => {
		// Two results of one parallel call, 3k tokens each, then short turns: in the request that first
		// sent them, 3k tokens already followed the first result, past the 2.5k tail. That request wrote
		// it at the write price; counting it as rent fired the fold one request early.
		const settings = { tail: 2_500 };
		const run = drive({
			turns: 30,
			window: 200_000,
			settings,
			extra: () => ({ prices: ANTHROPIC }),
			results: (turn, ts) =>
				turn === 0
					? [toolResult("rA", ts, filler(3_000, "A")), toolResult("rB", ts + 1, filler(3_000, "B"))]
					: [toolResult(`r${turn}`, ts, "ok")],
		});
		const expected = expectedFirstFold(run.views, 100_000, { ...PRICED, ...settings }, anthropicRates);
		expect(expected).not.toBeNull();
		expect(firstFold(run)).toBe((expected as Expected).at);
		expect((expected as Expected).from).toBe(2);
	});
});

describe("a cold cache folds everything foldable at once", () => {
	const COLD_AT = 20;
	const run = drive({
		turns: 24,
		window: 200_000,
		extra: (turn) => ({ prices: ANTHROPIC, ...(turn === COLD_AT && { cold: "idle" as const }) }),
	});
	test("the cold request folds, before any rent paid", () => {
		expect(firstFold(run)).toBe(COLD_AT);
		const plan = run.plans[COLD_AT] as FoldPlan;
		expect(plan.pricing.cold).toBe("idle");
		expect(plan.pricing.decision.fire && plan.pricing.decision.reason).toBe("cold");
		// Warm, the same request waits: its rent has not reached RENT_MULTIPLE times its rewrite.
		const warm = drive({ turns: COLD_AT, window: 200_000, extra: () => ({ prices: ANTHROPIC }) });
		expect(warm.plans[COLD_AT]?.layer).toBeNull();
	});
	test("it takes every tool result out of the tail that is big enough, and nothing is left to fold", () => {
		const plan = run.plans[COLD_AT] as FoldPlan;
		const view = run.views[COLD_AT] as ViewMessage[];
		const tail = PRICED.tail;
		let after = 0;
		const expected: string[] = [];
		for (let i = view.length - 1; i >= 0; i--) {
			const m = view[i] as ViewMessage;
			if (m.role === "toolResult" && after >= tail && estimateTokens((m.blocks[0]?.text ?? "").length) >= 256)
				expected.unshift(m.entryId as string);
			after += msgTokens(m);
		}
		expect(expected.length).toBeGreaterThan(3);
		expect(plan.layer?.blocks.map((b) => b.entryId)).toEqual(expected);
		expect(plan.mass).toBe(0);
		expect(plan.usageAfter).toBeLessThan(plan.usage.tokens);
	});
	test("its record says cold and why; its rewrite is a saving", () => {
		const layer = (run.plans[COLD_AT] as FoldPlan).layer as FrozenLayer;
		expect(layer.reason).toBe("threshold");
		expect(layer.decision?.rule).toBe("cold");
		expect(layer.decision?.cold).toBe("idle");
		expect(layer.decision?.rewrite).toBeLessThan(0);
		// The rent paid so far is recorded too: short of what a warm rewrite would have cost.
		const d = (run.plans[COLD_AT] as FoldPlan).pricing.decision as Extract<
			FoldPlan["pricing"]["decision"],
			{ fire: true }
		>;
		expect(layer.decision?.rent).toBe(Math.round(d.event.rent));
		expect(layer.decision?.rewrite).toBe(Math.round(d.event.rewrite));
	});
	test("every cold reason folds the same way", () => {
		for (const cold of ["model-change", "uncached", "tools"] as const) {
			const r = drive({ turns: COLD_AT, window: 200_000, extra: (turn) => (turn === COLD_AT ? { cold } : {}) });
			expect(firstFold(r)).toBe(COLD_AT);
			expect(r.plans[COLD_AT]?.layer?.decision?.cold).toBe(cold);
		}
	});
	test("cold with nothing foldable yet: nothing happens", () => {
		const r = drive({ turns: 6, window: 200_000, extra: () => ({ cold: "idle" }) });
		expect(r.plans.every((p) => p.layer === null && p.state === "idle")).toBe(true);
	});
});

describe("prices", () => {
	test("a tier applies from the request whose usage is above it, and changes the decision", () => {
		// Above 30k tokens: no write premium and a dearer read (ratios 0.2 / 1).
		const tiered: PriceSchedule = {
			...ANTHROPIC,
			tiers: [{ above: 30_000, input: 6, output: 30, cacheRead: 1.2, cacheWrite: 6 }],
		};
		const run = drive({ turns: 40, window: 200_000, extra: () => ({ prices: tiered }) });
		for (const p of run.plans) {
			const above = p.usage.tokens > 30_000;
			expect(p.pricing.prices).toEqual(
				above
					? { input: 6, output: 30, cacheRead: 1.2, cacheWrite: 6 }
					: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
			);
			expect(p.pricing.rates.write).toBe(above ? 1 : 1.25);
		}
		const rates = (t: number) =>
			(run.plans[t] as FoldPlan).usage.tokens > 30_000 ? { read: 1.2 / 6, write: 1 } : anthropicRates();
		const at = firstFold(run);
		expect(at).toBe(expectedFirstFold(run.views, 200_000, PRICED, rates)?.at as number);
		const flat = firstFold(drive({ turns: 40, window: 200_000, extra: () => ({ prices: ANTHROPIC }) }));
		expect(at).toBeLessThan(flat);
		expect(run.plans[at]?.layer?.decision?.prices).toEqual({ input: 6, output: 30, cacheRead: 1.2, cacheWrite: 6 });
	});
	test("a tier the session never reaches changes nothing", () => {
		const high: PriceSchedule = {
			...ANTHROPIC,
			tiers: [{ above: 1_000_000, input: 6, output: 30, cacheRead: 6, cacheWrite: 6 }],
		};
		const a = drive({ turns: 35, window: 200_000, extra: () => ({ prices: high }) });
		const b = drive({ turns: 35, window: 200_000, extra: () => ({ prices: ANTHROPIC }) });
		expect(a.plans.map((p) => p.layer)).toEqual(b.plans.map((p) => p.layer));
	});
	test("zero prices, or none: decided in tokens with Anthropic's ratios, and said so", () => {
		const zero = drive({
			turns: 35,
			window: 200_000,
			extra: () => ({ prices: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 } }),
		});
		const none = drive({ turns: 35, window: 200_000, extra: () => ({ prices: null }) });
		const absent = drive({ turns: 35, window: 200_000 });
		const model = drive({ turns: 35, window: 200_000, extra: () => ({ prices: ANTHROPIC }) });
		for (const run of [zero, none, absent]) {
			for (const p of run.plans) {
				expect(p.pricing.rates.basis).toBe("ratios");
				expect(p.pricing.prices).toEqual({ ...PRICE_PRESETS.anthropic });
			}
			expect(firstFold(run)).toBe(firstFold(model));
			const layer = run.plans[firstFold(run)]?.layer as FrozenLayer;
			expect(layer.decision?.basis).toBe("ratios");
			expect(layer.decision?.prices).toEqual({ ...PRICE_PRESETS.anthropic });
		}
		expect(model.plans[firstFold(model)]?.layer?.decision?.basis).toBe("model");
	});
});

describe("the recall tools, declared lazily", () => {
	const TOOLS = { declared: false as const, rebuildsPrefix: false, tokens: 519 };
	// A long first prompt (a pasted spec): the part of the prefix only a rebuilt system prompt rewrites.
	const SPEC = filler(15_000, "spec");
	// A window wide enough that the session stays under the budget until its rent fold comes (for a
	// RENT_MULTIPLE from 1 to 2): the fold held back for the tools is a rent fold, not the budget's.
	const lazy = (rebuildsPrefix: boolean, declareOn: "now" | "soon") => {
		let declaredAt: number | null = null;
		const run = drive({
			turns: 60,
			window: 200_000,
			prompt: SPEC,
			extra: (turn, prev) => {
				if (declaredAt === null && prev !== undefined && (prev.toolsWanted === "now" || prev.toolsWanted === declareOn))
					declaredAt = turn;
				return { prices: ANTHROPIC, ...(declaredAt === null && { tools: { ...TOOLS, rebuildsPrefix } }) };
			},
		});
		return { run, declaredAt: declaredAt as number | null };
	};
	test("a fold that would fire is held back: no layer, the tools wanted now; once declared it goes through", () => {
		const { run, declaredAt } = lazy(false, "now");
		const held = run.plans.findIndex((p) => p.toolsWanted === "now");
		expect(held).toBeGreaterThan(0);
		const plan = run.plans[held] as FoldPlan;
		expect(plan.pricing.decision.fire).toBe(true);
		expect(plan.layer).toBeNull();
		expect(plan.state).toBe("accumulating");
		expect(plan.substitutions).toEqual([]);
		expect(run.plans.slice(0, held + 1).every((p) => p.layer === null)).toBe(true);
		// Declared on the next request, which folds.
		expect(declaredAt).toBe(held + 1);
		expect(run.plans[held + 1]?.layer?.decision?.rule).toBe("rent");
		expect(run.plans[held + 1]?.toolsWanted).toBeNull();
	});
	test("the request before, the event pays within one request: tools wanted soon", () => {
		const { run } = lazy(false, "now");
		const held = run.plans.findIndex((p) => p.toolsWanted === "now");
		expect(run.plans[held - 1]?.toolsWanted).toBe("soon");
		expect(run.plans.slice(0, held - 1).every((p) => p.toolsWanted === null)).toBe(true);
	});
	test("declared on soon, the fold is not held back", () => {
		const { run, declaredAt } = lazy(false, "soon");
		expect(run.plans.some((p) => p.toolsWanted === "now")).toBe(false);
		expect(firstFold(run)).toBe(declaredAt as number);
	});
	test("tools that rebuild the whole prefix wait for more rent than tools appended after it", () => {
		const appended = lazy(false, "now").run.plans.findIndex((p) => p.toolsWanted === "now");
		const rebuilt = lazy(true, "now").run.plans.findIndex((p) => p.toolsWanted === "now");
		expect(rebuilt).toBeGreaterThan(appended);
	});
	test("undeclared, the event is priced a request later, when everything this request holds is cached", () => {
		// The bench's 40-call session: priced on the previous request's cache, the fold looked due at
		// request 23; it could only come at 24, over the 12k-token batch 23 had added, at twice the cost.
		const run = drive({ turns: 40, window: 200_000, extra: () => ({ prices: ANTHROPIC }) });
		const i = run.plans.findIndex(
			(p, k) => k > 5 && p.pricing.decision.fire === false && p.pricing.decision.best !== null,
		);
		expect(i).toBeGreaterThan(0);
		const view = run.views[i] as ViewMessage[];
		const at = (tools?: PlanInput["tools"]) =>
			planFold({
				messages: view,
				index: emptyIndex(),
				settings: PRICED,
				window: 200_000,
				hash: sha256,
				prices: ANTHROPIC,
				...(tools && { tools }),
			});
		const declared = at();
		const undeclared = at({ ...TOOLS, tokens: 0 });
		const d = declared.pricing.decision;
		const u = undeclared.pricing.decision;
		if (d.fire || u.fire || d.best === null || u.best === null) throw new Error("expected both to wait");
		// The tokens after the newest response: written anyway now, cached by the next request.
		let lastOk = -1;
		for (let k = 0; k < view.length; k++) if (view[k]?.role === "assistant") lastOk = k;
		const after = viewTokens(view.slice(lastOk));
		expect(after).toBeGreaterThan(0);
		const { read, write } = declared.pricing.rates;
		expect(u.best.rewrite - d.best.rewrite).toBeCloseTo(after * (write - read), 0);
	});
	test("without anything to fold, the tools are not wanted", () => {
		const run = drive({ turns: 10, window: 200_000, extra: () => ({ tools: TOOLS }) });
		expect(run.plans.every((p) => p.toolsWanted === null)).toBe(true);
	});
});

describe("what a priced layer records", () => {
	// A session long enough for several rent folds.
	const run = drive({ turns: 60, window: 200_000, extra: () => ({ prices: ANTHROPIC }) });
	const layers = run.plans.flatMap((p) => (p.layer === null ? [] : [{ plan: p, layer: p.layer }]));
	test("the old enum's reason: threshold first, step after", () => {
		expect(layers.length).toBeGreaterThanOrEqual(2);
		expect(layers.map((l) => l.layer.reason)).toEqual(["threshold", ...layers.slice(1).map(() => "step" as const)]);
		expect(layers.map((l) => l.layer.seq)).toEqual(layers.map((_, i) => i + 1));
	});
	test("the decision: rule, prices, basis, and the event's amounts rounded", () => {
		for (const { plan, layer } of layers) {
			const d = plan.pricing.decision as Extract<FoldPlan["pricing"]["decision"], { fire: true }>;
			expect(layer.decision).toEqual({
				v: 1,
				rule: "rent",
				prices: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
				basis: "model",
				rewrite: Math.round(d.event.rewrite),
				payback: Math.round(d.event.payback),
				rent: Math.round(d.event.rent),
			});
			expect(d.event.rent).toBeGreaterThanOrEqual(RENT_MULTIPLE * d.event.rewrite);
		}
	});
	test("in a small window a paid fold is held for Pi's compaction ahead, and the plan says what it waits for", () => {
		// Each step adds a 2.5k result that can fold and a 1k message of the user's that cannot. In a 128k
		// window, where Pi compacts at 111,616, the first paid fold would leave the context far above
		// what a compaction keeps, shortly before it: held. The same request in a 200k window is not.
		const results = (turn: number, ts: number) => [
			toolResult(`r${turn}`, ts, filler(2_500, `t${turn}`)),
			user(`n${turn}`, filler(1_000, `n${turn}`), ts + 1),
		];
		const W = 128_000;
		const big = drive({ turns: 60, window: 200_000, results, extra: () => ({ prices: ANTHROPIC }) });
		const small = drive({ turns: 60, window: W, results, extra: () => ({ prices: ANTHROPIC }) });
		const isHeld = (p: FoldPlan) => !p.pricing.decision.fire && p.pricing.decision.held !== undefined;
		const at = small.plans.findIndex(isHeld);
		expect(at).toBeGreaterThan(0);
		// The same request in a 200k window has nothing to hold for: Pi's threshold is far off.
		expect(isHeld(big.plans[at] as FoldPlan)).toBe(false);
		const plan = small.plans[at] as FoldPlan;
		expect(plan.usage.tokens).toBeLessThan(W - 16_384);
		const d = plan.pricing.decision;
		expect(d.fire).toBe(false);
		if (d.fire || d.held === undefined) throw new Error("expected a held decision");
		expect(d.held.threshold).toBe(W - 16_384);
		expect(d.held.context).toBe(plan.usage.tokens);
		expect(d.best?.rent).toBeGreaterThanOrEqual(RENT_MULTIPLE * (d.best?.rewrite ?? 0));
		expect(plan.layer).toBeNull();
		// Past Pi's threshold (its compaction off, or set otherwise) nothing is ahead, and over the budget
		// nothing else brings the context down: the next fold comes at once, by the budget.
		const past = small.plans.findIndex((p) => p.usage.tokens >= W - 16_384);
		expect(past).toBeGreaterThan(at);
		const later = small.plans.slice(past);
		expect(later[0]?.layer?.decision?.rule).toBe("budget");
		expect(later[0]?.layer?.reason).toBe("budget");
		// Held, nothing is due: the recall tools are not declared for it (they would cost on every request).
		expect(small.plans.slice(0, at).every((p) => p.layer === null)).toBe(true);
		const lazy = planFold({
			messages: small.views[at] as ViewMessage[],
			index: emptyIndex(),
			settings: PRICED,
			window: W,
			hash: sha256,
			prices: ANTHROPIC,
			tools: { declared: false, rebuildsPrefix: false, tokens: 519 },
		});
		// Undeclared, the event is priced with the declaration's rewrite: its rent is one request short
		// (it would be "soon"), but once paid it would be held: the tools are not declared for it.
		expect(lazy.pricing.decision.fire).toBe(false);
		expect(requestsToPay((lazy.pricing.decision as { best: PricedEvent }).best)).toBe(1);
		expect(lazy.toolsWanted).toBeNull();
		expect(later.every((p) => p.pricing.decision.fire || !("held" in p.pricing.decision))).toBe(true);
	});
	test("a priced layer reads back whole, and an older reader's fields stay in the old enum", () => {
		for (const { layer } of layers) {
			const stored = JSON.parse(JSON.stringify(layer));
			expect(parseFoldRecord(stored)).toEqual(layer);
		}
	});
	test("a malformed decision is dropped alone: the layer and its blocks stay", () => {
		const layer = (layers[0] as { layer: FrozenLayer }).layer;
		const { decision: _dropped, ...bare } = JSON.parse(JSON.stringify(layer)) as FrozenLayer;
		const good = layer.decision as NonNullable<FrozenLayer["decision"]>;
		const bad: unknown[] = [
			null,
			"rent",
			{ ...good, v: 2 },
			{ ...good, rule: "threshold" },
			{ ...good, rule: 7 },
			{ ...good, prices: null },
			{ ...good, prices: { ...good.prices, cacheWrite: -1 } },
			{ ...good, prices: { ...good.prices, input: "3" } },
			{ ...good, prices: { input: 3, output: 15, cacheRead: 0.3 } },
			{ ...good, rewrite: "big" },
			{ ...good, payback: null },
			{ ...good, rent: Number.NaN },
			{ ...good, cold: "frozen" },
			{ ...good, cold: 1 },
		];
		for (const decision of bad) {
			const parsed = parseFoldRecord({ ...JSON.parse(JSON.stringify(bare)), decision });
			expect(parsed).toEqual(bare);
		}
		// A basis it does not know reads as the model's; a known cold reason is kept.
		const odd = parseFoldRecord({ ...bare, decision: { ...good, basis: "vibes", cold: "uncached" } }) as FrozenLayer;
		expect(odd.decision).toEqual({ ...good, basis: "model", cold: "uncached" });
	});
});

describe("fold points set by hand: the fixed ladder ignores prices and the cold cache", () => {
	test("the same layers whatever the prices and the cache, and no decision record", () => {
		const base = drive({ turns: 40, window: 100_000, settings: FIXED_SETTINGS });
		const priced = drive({
			turns: 40,
			window: 100_000,
			settings: FIXED_SETTINGS,
			extra: (turn) => ({
				prices: { input: 2, output: 8, cacheRead: 0, cacheWrite: 0 },
				...(turn % 3 === 0 && { cold: "idle" as const }),
			}),
		});
		expect(firstFold(base)).toBeGreaterThan(0);
		expect(priced.plans.map((p) => p.layer)).toEqual(base.plans.map((p) => p.layer));
		for (const p of priced.plans) {
			expect(p.fixed).not.toBeNull();
			if (p.layer) expect(p.layer).not.toHaveProperty("decision");
		}
	});
	test("before the fixed threshold a cold cache folds nothing", () => {
		const r = drive({ turns: 16, window: 100_000, settings: FIXED_SETTINGS, extra: () => ({ cold: "idle" }) });
		const p = r.plans[16] as FoldPlan;
		expect(p.usage.tokens).toBeLessThan(FIXED_SETTINGS.foldAt * 100_000);
		expect(p.mass).toBeGreaterThan(0);
		expect(r.plans.every((x) => x.layer === null)).toBe(true);
	});
	test("the tools: a fixed fold that is due is held back just the same", () => {
		const r = drive({
			turns: 40,
			window: 100_000,
			settings: FIXED_SETTINGS,
			extra: () => ({ tools: { declared: false, rebuildsPrefix: false, tokens: 519 } }),
		});
		const base = drive({ turns: 40, window: 100_000, settings: FIXED_SETTINGS });
		expect(r.plans.every((p) => p.layer === null)).toBe(true);
		expect(r.plans[firstFold(base)]?.toolsWanted).toBe("now");
		expect(r.plans.slice(0, firstFold(base)).every((p) => p.toolsWanted === null)).toBe(true);
	});
});

describe("stale blocks inside the protected tail", () => {
	// A read of a file, then the same file read again: the first is superseded and may fold inside the
	// tail. It has paid no rent there (age alone would not fold it), so only a cold cache or the budget
	// folds it while it stays inside.
	const requests = () => {
		const messages: PiMessage[] = [];
		const ids = new Map<PiMessage, string>();
		let t = T0;
		const add = (m: Omit<PiMessage, "timestamp">) => {
			t += 1000;
			const message = { ...m, timestamp: t } as PiMessage;
			messages.push(message);
			ids.set(message, `e${messages.length}`);
		};
		const usage = { input: 10, output: 10, cacheRead: 20_000, cacheWrite: 0 };
		let n = 0;
		const call = (name: string, args: Record<string, unknown>, result: string) => {
			const id = `call_${++n}`;
			add({
				role: "assistant",
				content: [{ type: "toolCall", id, name, arguments: args }],
				usage,
				stopReason: "toolUse",
			});
			add({
				role: "toolResult",
				toolCallId: id,
				toolName: name,
				content: [{ type: "text", text: result }],
				isError: false,
			});
		};
		add({ role: "user", content: [{ type: "text", text: "look" }] });
		call("read", { path: "src/a.ts" }, filler(3_000, "v1"));
		call("read", { path: "src/a.ts" }, filler(3_000, "v2"));
		add({ role: "assistant", content: [{ type: "text", text: "done" }], usage, stopReason: "stop" });
		add({ role: "user", content: [{ type: "text", text: "next" }] });
		const views: ViewMessage[][] = [];
		for (let k = 0; k < 12; k++) {
			call("bash", { command: `ls ${k}` }, `file${k}`);
			views.push(buildView(messages, (m) => ids.get(m) ?? null));
		}
		return views;
	};
	const planOne = (view: ViewMessage[], extra: Partial<PlanInput>) =>
		planFold({ messages: view, index: emptyIndex(), settings: PRICED, window: 100_000, hash: sha256, ...extra });
	test("it is a candidate that never earns rent while inside, and waits", () => {
		for (const view of requests()) {
			const p = planOne(view, { prices: ANTHROPIC });
			expect(p.state).toBe("accumulating");
			expect(p.layer).toBeNull();
			const d = p.pricing.decision;
			expect(d.fire).toBe(false);
			const best = (d as { best: NonNullable<Extract<typeof d, { fire: false }>["best"]> }).best;
			expect(best.freed).toBe(estimateTokens(filler(3_000, "v1").length) - DIGEST);
			expect(best.rent).toBe(0);
			expect(best.rewrite).toBeGreaterThan(0);
		}
	});
	test("a cold cache folds it, inside the tail, and its digest says why", () => {
		const p = planOne(requests()[11] as ViewMessage[], { cold: "idle" });
		expect(p.layer?.decision?.rule).toBe("cold");
		expect(p.layer?.blocks.map((b) => b.entryId)).toEqual(["e3"]);
		expect(p.layer?.blocks[0]?.digest.split("\n")[0]).toContain("superseded by read src/a.ts (call_2)");
	});
});
