/**
 * Superseded and duplicate folds over random sessions grown request by request through planFold
 * (reads, partial reads, edits that fail, writes, repeated commands, user turns, eager and lazy
 * ladders, tails of every size): a block folds inside the protected tail only when the rules of
 * policy/superseded.ts name it stale (checked against findStaleBlocks on events the test builds from
 * the Pi messages itself), its digest says why exactly when it is stale, and no input and no stale
 * block folds in the tool loop still running or before its result was delivered.
 */
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { isSuccessfulResponse, type ViewMessage } from "../../src/core/blocks.ts";
import { applyFrozenLayers } from "../../src/core/frozen.ts";
import { addRecord, emptyIndex, layerMasks } from "../../src/core/layers.ts";
import { planFold } from "../../src/core/plan.ts";
import { findStaleBlocks, type ToolEvent } from "../../src/core/policy/superseded.ts";
import { buildView, type PiMessage } from "../../src/core/session/view.ts";
import type { Settings } from "../../src/core/settings.ts";
import { protectedTailStart } from "../../src/core/usage.ts";
import { FIXED_SETTINGS, filler, sha256, T0 } from "../helpers/session.ts";

const RUNS = Number(process.env.CF_FUZZ_RUNS ?? 150);

const pathArb = fc.constantFrom("a.ts", "b.ts", "/w/a.ts");
const bodyArb = fc.constantFrom("one", "two", "three").map((s) => `${filler(400, s)}\n`);
type Step =
	| { kind: "user" }
	| { kind: "answer" }
	| { kind: "call"; tool: string; args: Record<string, unknown>; result: string; isError: boolean };

const callArb: fc.Arbitrary<Step> = fc.oneof(
	fc.record({
		kind: fc.constant("call" as const),
		tool: fc.constant("read"),
		args: fc.record({ path: pathArb, offset: fc.constantFrom(undefined, undefined, 5) }),
		result: bodyArb,
		isError: fc.constant(false),
	}),
	fc.record({
		kind: fc.constant("call" as const),
		tool: fc.constant("edit"),
		args: fc.record({ path: pathArb, oldText: bodyArb, newText: fc.constantFrom("x", "y") }),
		result: fc.constantFrom("ok", "oldText not found"),
		isError: fc.boolean(),
	}),
	fc.record({
		kind: fc.constant("call" as const),
		tool: fc.constant("write"),
		args: fc.record({ path: pathArb, content: bodyArb }),
		result: fc.constant("wrote"),
		isError: fc.constant(false),
	}),
	fc.record({
		kind: fc.constant("call" as const),
		tool: fc.constant("bash"),
		args: fc.record({ command: fc.constantFrom("make", "ls") }),
		result: bodyArb,
		isError: fc.boolean(),
	}),
);
const stepArb: fc.Arbitrary<Step> = fc.oneof(
	{ weight: 6, arbitrary: callArb },
	{ weight: 2, arbitrary: fc.constant({ kind: "user" as const }) },
	{ weight: 1, arbitrary: fc.constant({ kind: "answer" as const }) },
);
/**
 * Sessions of medium size: at fast-check's default (small), 85 runs in 100 folded no stale block and
 * the coverage bounds at the end of the test failed 13 seeds in 1,000.
 */
const stepsArb = fc.array(stepArb, { minLength: 4, maxLength: 40, size: "medium" });
const settingsArb: fc.Arbitrary<Settings> = fc
	.record({
		foldStep: fc.constantFrom(0.001, 0.02, 0.1),
		tail: fc.constantFrom(0, 2_000, 20_000, 200_000),
	})
	.map((s) => ({ ...FIXED_SETTINGS, foldAt: 0.01, coldFoldAt: 0.01, ...s }));

const WINDOW = 400_000;

/** Events as the test reads them from the Pi messages: settled by the terms. */
function oracle(messages: readonly PiMessage[], ids: Map<PiMessage, string>, lastUser: number, lastOk: number) {
	const results = new Map<string, { i: number; m: PiMessage }>();
	messages.forEach((m, i) => {
		if (m.role === "toolResult" && m.toolCallId) results.set(m.toolCallId, { i, m });
	});
	const events: ToolEvent[] = [];
	messages.forEach((m, i) => {
		if (m.role !== "assistant" || !Array.isArray(m.content)) return;
		m.content.forEach((part, j) => {
			if (part.type !== "toolCall" || part.id === undefined) return;
			const r = results.get(part.id);
			const text = Array.isArray(r?.m.content) ? (r?.m.content[0]?.text ?? "") : "";
			events.push({
				toolCallId: part.id,
				toolName: String(part.name),
				args: part.arguments,
				callEntryId: ids.get(m) as string,
				callBlockIndex: j,
				...(r && { result: { entryId: ids.get(r.m) as string, text, isError: r.m.isError === true } }),
				settled: r !== undefined && i < lastUser && r.i < Math.min(lastUser, lastOk),
			});
		});
	});
	return findStaleBlocks({ events, cwd: "/w" });
}

describe("superseded and duplicate folds (property)", () => {
	test("inside the tail only stale blocks fold; a digest says why exactly when its block is stale", () => {
		let staleFolds = 0;
		let tailFolds = 0;
		let inputFolds = 0;
		fc.assert(
			fc.property(stepsArb, settingsArb, (steps, settings) => {
				const messages: PiMessage[] = [];
				const ids = new Map<PiMessage, string>();
				let t = T0;
				const add = (m: Omit<PiMessage, "timestamp">) => {
					t += 1000;
					const msg = { ...m, timestamp: t } as PiMessage;
					messages.push(msg);
					ids.set(msg, `e${messages.length}`);
				};
				const usage = () => ({ input: 10, output: 10, cacheRead: 40_000 + messages.length * 500, cacheWrite: 0 });
				add({ role: "user", content: [{ type: "text", text: "go" }] });
				const index = emptyIndex();
				let n = 0;
				for (const step of steps) {
					if (step.kind === "user") add({ role: "user", content: [{ type: "text", text: "more" }] });
					else if (step.kind === "answer")
						add({ role: "assistant", content: [{ type: "text", text: "ok" }], usage: usage(), stopReason: "stop" });
					else {
						const id = `call_${++n}`;
						add({
							role: "assistant",
							content: [{ type: "toolCall", id, name: step.tool, arguments: step.args }],
							usage: usage(),
							stopReason: "toolUse",
						});
						add({
							role: "toolResult",
							toolCallId: id,
							toolName: step.tool,
							content: [{ type: "text", text: step.result }],
							isError: step.isError,
						});
					}
					const view: ViewMessage[] = buildView(messages, (m) => ids.get(m) ?? null);
					const frozen = applyFrozenLayers(view, index, "unsigned-only");
					const plan = planFold({
						messages: view,
						index,
						settings,
						window: WINDOW,
						everCacheRead: true,
						hash: sha256,
						cwd: "/w",
					});
					if (plan.layer === null) continue;
					const tail = protectedTailStart(frozen.tokensPerMessage, plan.geometry?.tail ?? 0);
					let lastUser = -1;
					let lastOk = -1;
					view.forEach((m, i) => {
						if (m.role === "user") lastUser = i;
						if (isSuccessfulResponse(m)) lastOk = i;
					});
					const stale = oracle(messages, ids, lastUser, lastOk);
					const staleResult = new Map(stale.filter((s) => s.block === "result").map((s) => [s.entryId, s.reason]));
					const staleInput = new Map(
						stale.filter((s) => s.block === "input").map((s) => [`${s.entryId}:${s.blockIndex}`, s.reason]),
					);
					const at = new Map(view.map((m, i) => [m.entryId, i]));
					for (const b of layerMasks(plan.layer)) {
						const i = at.get(b.entryId) as number;
						const reason =
							b.kind === "input"
								? staleInput.get(`${b.entryId}:${b.blockIndex}`)
								: b.kind === "toolResult"
									? staleResult.get(b.entryId)
									: undefined;
						const header = b.digest.split("\n")[0] as string;
						if (reason !== undefined) {
							expect(header).toContain(`· ${reason}`);
							staleFolds++;
						} else expect(header).not.toMatch(/· (superseded by|same as) /);
						if (i >= tail) {
							expect(reason).toBeDefined();
							tailFolds++;
						}
						if (b.kind === "input") {
							inputFolds++;
							// Outside the tool loop still running, its result delivered.
							expect(i).toBeLessThan(lastUser);
							const resultAt = view.findIndex((m) => m.role === "toolResult" && m.toolCallId === b.toolCallId);
							expect(resultAt).toBeGreaterThan(i);
							expect(resultAt).toBeLessThan(lastOk);
						}
						if (reason !== undefined) expect(i).toBeLessThan(lastUser);
					}
					addRecord(index, plan.layer);
				}
			}),
			{ numRuns: RUNS },
		);
		// The generators must reach the interesting cases. Over 600 seeds of 150 runs: stale folds 108..391
		// (median 237), folds in the tail 59..338 (median 168), input folds 88..292 (median 195). With small
		// sessions they were 27..106, 16..85 and 18..100 (1,000 seeds), and a bound failed 13 seeds in 1,000.
		expect(staleFolds).toBeGreaterThan(RUNS / 5);
		expect(tailFolds).toBeGreaterThan(RUNS / 10);
		expect(inputFolds).toBeGreaterThan(RUNS / 5);
	});
});
