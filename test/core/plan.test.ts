import { describe, expect, test } from "bun:test";
import { messageTokens, type ViewMessage } from "../../src/core/blocks.ts";
import { addRecord, emptyIndex } from "../../src/core/layers.ts";
import { planFold } from "../../src/core/plan.ts";
import { MIN_FOLD_TOKENS, selectCandidates } from "../../src/core/policy/select.ts";
import type { Settings } from "../../src/core/settings.ts";
import { protectedTailStart } from "../../src/core/usage.ts";
import {
	assistantCall,
	FIXED_SETTINGS,
	filler,
	runGrowth,
	sha256,
	T0,
	toolResult,
	user,
	viewTokens,
} from "../helpers/session.ts";

const S: Settings = FIXED_SETTINGS;

describe("the ladder in a growing tool chain", () => {
	const window = 100_000;
	const budget = Math.min(S.budgetCap ?? Infinity, S.budgetFraction * window);
	const step = S.foldStep * window;

	test("nothing folds below the threshold", () => {
		const run = runGrowth({ turns: 6, resultTokens: 4000, window });
		expect(run.plans.every((p) => p.layer === null && p.substitutions.length === 0)).toBe(true);
		expect(run.prompts.at(-1)).toBeLessThan(S.foldAt * window);
	});

	test("the first fold fires once usage crosses fold-at, and frees well below it", () => {
		const run = runGrowth({ turns: 16, resultTokens: 4000, window });
		const first = run.plans.findIndex((p) => p.layer !== null);
		expect(first).toBeGreaterThan(0);
		const plan = run.plans[first];
		expect(plan?.usage.tokens).toBeGreaterThanOrEqual(S.foldAt * window);
		expect(run.plans.slice(0, first).every((p) => p.usage.tokens < S.foldAt * window || p.mass < step)).toBe(true);
		expect(plan?.layer?.reason).toBe("threshold");
		expect(plan?.usageAfter).toBeLessThan(S.foldAt * window * 0.75);
		expect(run.prompts[first]).toBeLessThan(S.foldAt * window * 0.75);
	});

	test("60 turns of 4k outputs: events stay rare, never back to back, under budget, far below baseline", () => {
		const run = runGrowth({ turns: 60, resultTokens: 4000, window });
		const baseline = viewTokens(run.view) + 1000;
		const events = run.plans.map((p, i) => (p.layer ? i : -1)).filter((i) => i >= 0);
		const first = events[0] as number;
		expect(events.length).toBeGreaterThan(1);
		// Maskable growth after the first fold: every result that landed after it.
		const growth = (60 - first) * 4000;
		expect(events.length).toBeLessThanOrEqual(Math.ceil(growth / step) + 1);
		for (let k = 1; k < events.length; k++) {
			const gap = (events[k] as number) - (events[k - 1] as number);
			if (gap === 1) expect(run.plans[events[k] as number]?.layer?.reason).toBe("budget");
		}
		for (let i = 0; i < run.prompts.length; i++) {
			if ((run.plans[i]?.mass ?? 0) > 0 || run.plans[i]?.state !== "floor")
				expect(run.prompts[i]).toBeLessThanOrEqual(budget);
		}
		expect(baseline).toBeGreaterThan(240_000);
		expect(run.prompts.at(-1)).toBeLessThan(baseline / 4);
	});

	test("between fold events the outgoing context is append-only; frozen layers never change", () => {
		const run = runGrowth({ turns: 60, resultTokens: 4000, window });
		for (let i = 1; i < run.requests.length; i++) {
			const prev = run.requests[i - 1] as ViewMessage[];
			const cur = run.requests[i] as ViewMessage[];
			const plan = run.plans[i];
			const firstNew = plan?.layer
				? Math.min(
						...plan.substitutions
							.filter((s) => plan.layer?.blocks.some((b) => b.code === s.code))
							.map((s) => s.messageIndex),
					)
				: prev.length;
			// Everything before the first block this request newly masks is byte-identical.
			expect(JSON.stringify(cur.slice(0, Math.min(firstNew, prev.length)))).toBe(
				JSON.stringify(prev.slice(0, Math.min(firstNew, prev.length))),
			);
		}
	});

	test("message count, user messages, and the protected tail are untouched; fresh results go out in full", () => {
		const run = runGrowth({ turns: 40, resultTokens: 3000, window });
		for (let i = 0; i < run.requests.length; i++) {
			const sent = run.requests[i] as ViewMessage[];
			const input = run.view.slice(0, sent.length);
			expect(sent.length).toBe(input.length);
			const plan = run.plans[i];
			const tokens = input.map((m) => 4 + m.blocks.reduce((t, b) => t + Math.ceil(b.text.length / 4), 0));
			const tail = protectedTailStart(tokens, Math.min(S.tail, (plan?.geometry?.budget ?? 0) / 2));
			for (let k = 0; k < sent.length; k++) {
				const m = input[k] as ViewMessage;
				if (m.role === "user" || k >= tail) expect(sent[k]).toEqual(m);
			}
			// The newest result has not been answered yet: always in full.
			expect(sent.at(-1)).toEqual(input.at(-1) as ViewMessage);
		}
	});

	test("error lines of masked results reach the model verbatim", () => {
		const run = runGrowth({ turns: 30, resultTokens: 3000, window, errorEvery: 3 });
		const last = run.requests.at(-1) as ViewMessage[];
		const masked = run.plans.at(-1)?.substitutions ?? [];
		expect(masked.length).toBeGreaterThan(3);
		for (const s of masked) {
			const original = run.view[s.messageIndex]?.blocks[s.blockIndex]?.text ?? "";
			const err = original.split("\n").find((l) => l.startsWith("error: unique failure"));
			if (err) expect(last[s.messageIndex]?.blocks[s.blockIndex]?.text).toContain(err);
		}
	});

	test("the cold threshold applies while no cache read was ever reported", () => {
		// A small tail and step, so the entry threshold (not the step) decides when the first fold fires.
		const settings = { tail: 2000, foldStep: 0.02 };
		const warm = runGrowth({ turns: 30, resultTokens: 1000, window, cache: true, settings });
		const cold = runGrowth({ turns: 30, resultTokens: 1000, window, cache: false, settings });
		const firstWarm = warm.plans.findIndex((p) => p.layer !== null);
		const firstCold = cold.plans.findIndex((p) => p.layer !== null);
		expect(firstCold).toBeGreaterThan(0);
		expect(firstCold < firstWarm || firstWarm === -1).toBe(true);
		expect(cold.plans[firstCold]?.fixed?.thresholdFraction).toBe(S.coldFoldAt);
		expect(cold.plans[firstCold]?.usage.tokens).toBeGreaterThanOrEqual(S.coldFoldAt * window);
		expect(cold.plans[firstCold]?.usage.tokens).toBeLessThan(S.foldAt * window);
		expect(warm.plans[firstWarm]?.usage.tokens).toBeGreaterThanOrEqual(S.foldAt * window);
	});

	test("crossing the budget folds at once, even the request right after a fold", () => {
		// Huge single outputs force the budget path.
		const run = runGrowth({ turns: 8, resultTokens: (t) => (t < 2 ? 500 : 40_000), window, settings: { tail: 2000 } });
		const budgetEvents = run.plans.filter((p) => p.layer?.reason === "budget");
		expect(budgetEvents.length).toBeGreaterThan(0);
		for (const p of budgetEvents) expect(p.usage.tokens).toBeGreaterThan(budget);
		const events = run.plans.map((p, i) => (p.layer ? i : -1)).filter((i) => i >= 0);
		expect(events.some((e, k) => k > 0 && e - (events[k - 1] as number) === 1)).toBe(true);
	});
});

describe("planFold edge cases", () => {
	const window = 20_000;
	const settings: Settings = { ...S, tail: 1000, foldStep: 0.02 };

	function session(extra: ViewMessage[] = []): ViewMessage[] {
		return [
			user("u0", "go", T0),
			assistantCall("a0", T0 + 1, { input: 100, cacheRead: 50, cacheWrite: 0, output: 10 }, filler(600, "think")),
			toolResult("r0", T0 + 2, filler(3000, "big")),
			assistantCall("a1", T0 + 3, { input: 9000, cacheRead: 3000, cacheWrite: 0, output: 10 }),
			toolResult("r1", T0 + 4, filler(3000, "big2")),
			assistantCall("a2", T0 + 5, { input: 10000, cacheRead: 3000, cacheWrite: 0, output: 10 }),
			toolResult("r2", T0 + 6, "ok"),
			...extra,
		];
	}

	test("folds stale results and thinking; the tail (r1 onward) and the fresh result stay", () => {
		const plan = planFold({
			messages: session(),
			index: emptyIndex(),
			settings,
			window,
			everCacheRead: true,
			hash: sha256,
		});
		expect(plan.state).toBe("fold");
		expect(plan.layer?.blocks.map((b) => [b.entryId, b.blockIndex, b.kind])).toEqual([
			["a0", 0, "thinking"],
			["r0", 0, "toolResult"],
		]);
		const r0 = plan.layer?.blocks[1];
		const original = filler(3000, "big");
		expect(r0?.sha256).toBe(sha256(original));
		expect(r0?.chars).toBe(original.length);
		expect(r0?.bytes).toBe(Buffer.byteLength(original));
		expect(r0?.digest.startsWith(`{#${r0?.code} FOLDED} bash \`make test\``)).toBe(true);
	});

	test.each([
		["drop-signature", true, true],
		["keep-signature", true, false],
		["unsigned-only", false, false],
		["skip", false, false],
	] as const)("signed thinking under %s: folds=%p, drops signature=%p", (thinking, folds, drops) => {
		const msgs = [
			...session(),
			user("u1", "next", T0 + 7),
			assistantCall("a3", T0 + 8, { input: 10_000, cacheRead: 500, cacheWrite: 0, output: 1 }),
		];
		const a0 = msgs[1] as ViewMessage;
		(a0.blocks[0] as { signed?: boolean }).signed = true;
		const plan = planFold({
			messages: msgs,
			index: emptyIndex(),
			settings,
			window,
			everCacheRead: true,
			hash: sha256,
			thinking,
		});
		const sub = plan.substitutions.find((s) => s.messageIndex === 1);
		expect(sub !== undefined).toBe(folds);
		if (sub) expect(sub.dropSignature).toBe(drops);
	});

	test("opaque (JSON) signatures never fold under keep-signature", () => {
		const msgs = [
			...session(),
			user("u1", "next", T0 + 7),
			assistantCall("a3", T0 + 8, { input: 10_000, cacheRead: 500, cacheWrite: 0, output: 1 }),
		];
		Object.assign((msgs[1] as ViewMessage).blocks[0] as object, { signed: true, opaqueSignature: true });
		const plan = planFold({
			messages: msgs,
			index: emptyIndex(),
			settings,
			window,
			everCacheRead: true,
			hash: sha256,
			thinking: "keep-signature",
		});
		expect(plan.substitutions.some((s) => s.messageIndex === 1)).toBe(false);
	});

	test("signed thinking in the tool loop still running (after the last user message) never folds", () => {
		const msgs = session();
		((msgs[1] as ViewMessage).blocks[0] as { signed?: boolean }).signed = true;
		const plan = planFold({
			messages: msgs,
			index: emptyIndex(),
			settings,
			window,
			everCacheRead: true,
			hash: sha256,
			thinking: "drop-signature",
		});
		expect(plan.substitutions.some((s) => s.messageIndex === 1)).toBe(false);
		// Unsigned thinking in the same place may fold.
		((msgs[1] as ViewMessage).blocks[0] as { signed?: boolean }).signed = false;
		const plan2 = planFold({
			messages: msgs,
			index: emptyIndex(),
			settings,
			window,
			everCacheRead: true,
			hash: sha256,
			thinking: "drop-signature",
		});
		expect(plan2.substitutions.some((s) => s.messageIndex === 1)).toBe(true);
	});

	test("redacted thinking and text rewritten by another extension never fold", () => {
		const msgs = session();
		((msgs[1] as ViewMessage).blocks[0] as { redacted?: boolean }).redacted = true;
		((msgs[2] as ViewMessage).blocks[0] as { foreign?: boolean }).foreign = true;
		const plan = planFold({ messages: msgs, index: emptyIndex(), settings, window, everCacheRead: true, hash: sha256 });
		expect(plan.substitutions).toEqual([]);
	});

	test("a result carrying an image is never folded", () => {
		const msgs = session();
		(msgs[2] as ViewMessage).blocks.push({ kind: "image", text: "" });
		const plan = planFold({ messages: msgs, index: emptyIndex(), settings, window, everCacheRead: true, hash: sha256 });
		expect(plan.substitutions.some((s) => s.messageIndex === 2)).toBe(false);
	});

	test("unmapped messages and small blocks are never folded", () => {
		const msgs = session();
		(msgs[2] as ViewMessage).entryId = null;
		(msgs[4] as ViewMessage).blocks[0] = { kind: "text", text: "x".repeat(MIN_FOLD_TOKENS * 4 - 4) };
		const plan = planFold({ messages: msgs, index: emptyIndex(), settings, window, everCacheRead: true, hash: sha256 });
		expect(plan.substitutions.map((s) => s.messageIndex)).toEqual([1]);
	});

	test("frozen layers re-apply byte-identically, and unfold pins a block for good", () => {
		const index = emptyIndex();
		const first = planFold({ messages: session(), index, settings, window, everCacheRead: true, hash: sha256 });
		if (!first.layer) throw new Error("expected a layer");
		addRecord(index, first.layer);
		const again = planFold({ messages: session(), index, settings, window, everCacheRead: true, hash: sha256 });
		expect(again.layer).toBeNull();
		expect(again.substitutions).toEqual(first.substitutions);
		const code = first.layer.blocks[1]?.code as string;
		addRecord(index, { type: "unfold", v: 1, codes: [code] });
		const after = planFold({ messages: session(), index, settings, window, everCacheRead: true, hash: sha256 });
		expect(after.substitutions.map((s) => s.code)).not.toContain(code);
		expect(after.layer?.blocks.map((b) => b.code) ?? []).not.toContain(code);
	});

	test("usage reported before the latest compaction is not trusted", () => {
		const msgs: ViewMessage[] = [
			{ role: "compactionSummary", entryId: "c1", timestamp: T0 + 10, blocks: [{ kind: "other", text: "summary" }] },
			assistantCall("a9", T0 + 5, { input: 150_000, cacheRead: 0, cacheWrite: 0, output: 10 }),
			toolResult("r9", T0 + 6, "ok"),
		];
		const plan = planFold({
			messages: msgs,
			index: emptyIndex(),
			settings,
			window: 200_000,
			everCacheRead: true,
			hash: sha256,
		});
		expect(plan.usage.source).toBe("estimate");
		expect(plan.usage.tokens).toBeLessThan(100);
	});

	test.each([undefined, 0, -5, Number.NaN, Number.POSITIVE_INFINITY])("window %p: no decisions, no NaN", (w) => {
		const plan = planFold({
			messages: session(),
			index: emptyIndex(),
			settings,
			window: w,
			everCacheRead: true,
			hash: sha256,
		});
		expect(plan.state).toBe("no-window");
		expect(plan.layer).toBeNull();
		expect(Number.isFinite(plan.usage.tokens)).toBe(true);
		expect(Number.isFinite(plan.mass)).toBe(true);
	});

	test("the floor: over budget with nothing left to fold", () => {
		const msgs = [
			user("u0", "x".repeat(80_000), T0),
			assistantCall("a0", T0 + 1, { input: 20_000, cacheRead: 0, cacheWrite: 0, output: 5 }),
		];
		const plan = planFold({ messages: msgs, index: emptyIndex(), settings, window, everCacheRead: true, hash: sha256 });
		expect(plan.state).toBe("floor");
		expect(plan.layer).toBeNull();
	});

	test("deterministic: the same input gives a byte-identical plan", () => {
		const a = planFold({
			messages: session(),
			index: emptyIndex(),
			settings,
			window,
			everCacheRead: true,
			hash: sha256,
		});
		const b = planFold({
			messages: session(),
			index: emptyIndex(),
			settings,
			window,
			everCacheRead: true,
			hash: sha256,
		});
		expect(JSON.stringify(a)).toBe(JSON.stringify(b));
	});
});

describe("a response Pi never sends again (aborted, errored)", () => {
	const window = 20_000;
	const settings: Settings = { ...S, tail: 0, foldStep: 0.02 };
	const r1 = toolResult("r1", T0 + 4, "ok");
	const u1 = user("u1", "go on", T0 + 6);
	const before = [
		user("u0", "go", T0),
		assistantCall("a0", T0 + 1, { input: 1000, cacheRead: 0, cacheWrite: 0, output: 10 }),
		toolResult("r0", T0 + 2, filler(500, "big")),
		assistantCall("a1", T0 + 3, { input: 9000, cacheRead: 0, cacheWrite: 0, output: 10 }),
		r1,
	];
	const plan = (messages: ViewMessage[]) =>
		planFold({ messages, index: emptyIndex(), settings, window, everCacheRead: true, hash: sha256 });

	test.each(["aborted", "error"])(
		"%s: weighs nothing in the usage the ladder reads, and is never folded (pi-ai drops it from every request)",
		(stopReason) => {
			// Streamed thinking and a call before it stopped: in the session, never on the wire.
			const cut: ViewMessage = { ...assistantCall("x", T0 + 5, undefined, filler(2000, "half")), stopReason };
			const p = plan([...before, cut, u1]);
			expect(p.usage).toEqual({ tokens: 9000 + 10 + messageTokens(r1) + messageTokens(u1), source: "reported" });
			expect(p.usage).toEqual(plan([...before, u1]).usage);
			expect(p.layer?.blocks.map((b) => b.entryId)).toEqual(["r0"]);
		},
	);

	test.each(["aborted", "error"])(
		"%s: its blocks are never fold candidates, even with responses after it",
		(stopReason) => {
			const cut: ViewMessage = { ...assistantCall("x", T0 + 1, undefined, filler(2000, "half")), stopReason };
			const messages = [
				user("u0", "go", T0),
				cut,
				user("u1", "again", T0 + 2),
				assistantCall("a1", T0 + 3, { input: 9000, cacheRead: 0, cacheWrite: 0, output: 10 }, filler(1000, "think")),
				toolResult("r1", T0 + 4, filler(1000, "out")),
				assistantCall("a2", T0 + 5, { input: 10_000, cacheRead: 0, cacheWrite: 0, output: 10 }),
				user("u2", "and?", T0 + 6),
			];
			const { candidates } = selectCandidates({
				messages,
				index: emptyIndex(),
				protectedFrom: messages.length,
				deliveredBefore: 5,
				thinking: "unsigned-only",
				lastUser: 6,
			});
			expect(candidates.map((c) => messages[c.messageIndex]?.entryId)).toEqual(["a1", "r1"]);
		},
	);
});
