/**
 * Property-based tests of the fold plan over random sessions grown request by request.
 * Invariants: message count preserved; only maskable blocks change; user messages, the protected
 * tail and the fresh result are untouched; frozen substitutions never change bytes; the plan is
 * deterministic; numbers stay finite. Seeds print on failure (fast-check's default report).
 */
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import type { ViewMessage } from "../../src/core/blocks.ts";
import { addRecord, emptyIndex } from "../../src/core/layers.ts";
import { type FoldPlan, planFold } from "../../src/core/plan.ts";
import { DEFAULT_SETTINGS, type Settings } from "../../src/core/settings.ts";
import { protectedTailStart } from "../../src/core/usage.ts";
import { sha256, T0 } from "../helpers/session.ts";

const RUNS = Number(process.env.CF_FUZZ_RUNS ?? 300);

const textArb = fc.oneof(
	{ weight: 3, arbitrary: fc.string({ maxLength: 40 }) },
	{
		weight: 3,
		arbitrary: fc.nat({ max: 6000 }).map((n) => `error: x\n${"line of output\n".repeat(Math.floor(n / 15))}`),
	},
	{ weight: 1, arbitrary: fc.string({ unit: "grapheme", maxLength: 2000 }) },
	{ weight: 1, arbitrary: fc.constant("") },
	{ weight: 1, arbitrary: fc.nat({ max: 3000 }).map((n) => "a\r\nb\u0000c\r\n".repeat(n)) },
);

type Step = { kind: "tool"; text: string; thinking: string | null; signed: boolean } | { kind: "user"; text: string };

const stepArb: fc.Arbitrary<Step> = fc.oneof(
	{
		weight: 6,
		arbitrary: fc.record({
			kind: fc.constant("tool" as const),
			text: textArb,
			thinking: fc.option(textArb, { nil: null }),
			signed: fc.boolean(),
		}),
	},
	{ weight: 1, arbitrary: fc.record({ kind: fc.constant("user" as const), text: fc.string({ maxLength: 200 }) }) },
);

const settingsArb: fc.Arbitrary<Settings> = fc
	.record({
		foldAt: fc.double({ min: 0.05, max: 1, noNaN: true }),
		foldStep: fc.double({ min: 0.01, max: 0.5, noNaN: true }),
		coldFoldAt: fc.double({ min: 0.05, max: 1, noNaN: true }),
		budgetFraction: fc.double({ min: 0.1, max: 1, noNaN: true }),
		tail: fc.nat({ max: 20_000 }),
	})
	.map((s) => ({ ...DEFAULT_SETTINGS, providerCacheIdleMinutes: {}, ...s }));

function grow(steps: Step[], imageEvery: number): ViewMessage[][] {
	const views: ViewMessage[][] = [];
	const view: ViewMessage[] = [
		{ role: "user", entryId: "u", timestamp: T0, blocks: [{ kind: "text", text: "start" }] },
	];
	views.push(view.slice());
	let t = 1;
	for (const [i, step] of steps.entries()) {
		if (step.kind === "user") {
			view.push({ role: "user", entryId: `u${i}`, timestamp: T0 + t++, blocks: [{ kind: "text", text: step.text }] });
		} else {
			const blocks: ViewMessage["blocks"] = [];
			if (step.thinking !== null)
				blocks.push({ kind: "thinking", text: step.thinking, ...(step.signed && { signed: true }) });
			blocks.push({ kind: "toolCall", text: "{}bash" });
			const prompt = view.reduce((n, m) => n + m.blocks.reduce((k, b) => k + b.text.length / 4, 0), 0);
			view.push({
				role: "assistant",
				entryId: `a${i}`,
				timestamp: T0 + t++,
				blocks,
				usage: { input: Math.floor(prompt), output: 5, cacheRead: i % 3, cacheWrite: 0 },
				stopReason: "toolUse",
			});
			const rb: ViewMessage["blocks"] = [{ kind: "text", text: step.text }];
			if (imageEvery > 0 && i % imageEvery === 0) rb.push({ kind: "image", text: "" });
			view.push({
				role: "toolResult",
				entryId: `r${i}`,
				timestamp: T0 + t++,
				toolName: "bash",
				toolCallId: `c${i}`,
				blocks: rb,
			});
		}
		views.push(view.slice());
	}
	return views;
}

function applyPlan(view: readonly ViewMessage[], plan: FoldPlan): ViewMessage[] {
	const out = view.map((m) => ({ ...m, blocks: m.blocks.map((b) => ({ ...b })) }));
	for (const s of plan.substitutions) {
		const b = out[s.messageIndex]?.blocks[s.blockIndex];
		if (!b) throw new Error("substitution out of range");
		b.text = s.text;
	}
	return out;
}

describe("planFold properties", () => {
	test("invariants over random growing sessions", () => {
		let folds = 0;
		fc.assert(
			fc.property(
				fc.array(stepArb, { minLength: 1, maxLength: 40 }),
				settingsArb,
				fc.oneof(
					fc.constant(undefined),
					fc.constant(0),
					fc.constant(1),
					fc.integer({ min: 2000, max: 60_000 }),
					fc.constant(10_000_000),
				),
				fc.nat({ max: 5 }),
				(steps, settings, window, imageEvery) => {
					const index = emptyIndex();
					const frozen = new Map<string, string>();
					for (const view of grow(steps, imageEvery)) {
						const input = { messages: view, index, settings, window, everCacheRead: true, hash: sha256 };
						const plan = planFold(input);
						// Deterministic: a second identical call gives the same bytes.
						expect(JSON.stringify(planFold(input))).toBe(JSON.stringify(plan));
						expect(Number.isFinite(plan.usage.tokens) && plan.usage.tokens >= 0).toBe(true);
						expect(Number.isFinite(plan.mass) && plan.mass >= 0).toBe(true);
						expect(Number.isFinite(plan.usageAfter) && plan.usageAfter >= 0).toBe(true);
						const sent = applyPlan(view, plan);
						expect(sent.length).toBe(view.length);
						const last = view.length - 1;
						for (const s of plan.substitutions) {
							const m = view[s.messageIndex] as ViewMessage;
							const b = m.blocks[s.blockIndex];
							expect(m.role === "toolResult" || m.role === "assistant").toBe(true);
							expect(b?.kind === "text" || b?.kind === "thinking").toBe(true);
							expect(m.blocks.some((x) => x.kind === "image") && m.role === "toolResult").toBe(false);
							expect(s.messageIndex).not.toBe(last);
							expect(s.text.startsWith(`{#${s.code} FOLDED}`)).toBe(true);
							// Frozen: once a block is shown as a digest, its bytes never change.
							const key = `${m.entryId}:${s.blockIndex}`;
							const before = frozen.get(key);
							if (before !== undefined) expect(s.text).toBe(before);
							frozen.set(key, s.text);
						}
						// Raw sizes give a tail no longer than the plan's, so checking it is sound.
						const tokens = view.map(
							(m) => 4 + m.blocks.reduce((k, b) => k + (b.kind === "image" ? 1600 : Math.ceil(b.text.length / 4)), 0),
						);
						const tail = plan.geometry ? protectedTailStart(tokens, plan.geometry.tail) : 0;
						for (let i = 0; i < view.length; i++) {
							if (view[i]?.role === "user" || i >= tail) expect(sent[i]).toEqual(view[i] as ViewMessage);
						}
						if (plan.layer) {
							for (const b of plan.layer.blocks) {
								const m = view.find((x) => x.entryId === b.entryId) as ViewMessage;
								expect(b.sha256).toBe(sha256(m.blocks[b.blockIndex]?.text ?? ""));
							}
							addRecord(index, plan.layer);
							folds++;
						}
					}
				},
			),
			{ numRuns: RUNS },
		);
		// The generator must actually exercise folding, or the properties prove little.
		expect(folds).toBeGreaterThan(RUNS / 10);
	});
});
