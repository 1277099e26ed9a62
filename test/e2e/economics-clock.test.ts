// The economics replay drives context-fold's clock from the recorded timestamps (CONTEXTFOLD_TEST_CLOCK=
// replay), on real Pi 1.6.0: in the `context` hook of request k, now() is the recorded start of request
// k, and the wall-clock stamp Pi put on an earlier reply maps back to that reply's recorded start. So
// "idle longer than the cache lifetime since the last response" is the recorded gap, the one the billing
// uses: a session replayed in seconds is judged as it was lived.
import { describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DEFAULTS } from "../bench/economics/arms.ts";
import { billAll, billingModel, FIVE_MINUTES } from "../bench/economics/billing.ts";
import { buildPlan } from "../bench/economics/plan.ts";
import { checkServed, replayArm } from "../bench/economics/replay.ts";
import { TraceBuilder } from "../bench/economics/trace-builder.ts";
import { ensureBundle } from "./cf.ts";

const bundle = ensureBundle();
const PROBE = join(import.meta.dir, "fixtures/clock-probe.ts");
const T0 = Date.UTC(2025, 10, 20, 9, 0, 0);
const MIN = 60_000;

/** A four-prompt session: gaps of 30 min, 2 min and 7 min between prompts, and one aborted request. */
function trace() {
	const b = new TraceBuilder(T0, "clock");
	const output = `${Array.from({ length: 120 }, (_, i) => `line ${i} of a recorded tool output`).join("\n")}\n`;
	const call = (t: number, id: string) => {
		b.calls(t, [id], { usage: { output: 20 } });
		b.result(t + 4000, id, output);
	};
	b.user(T0, "first");
	call(T0 + 2000, "call_a");
	call(T0 + 9000, "call_b");
	b.answer(T0 + 15_000, "done one");
	b.user(T0 + 30 * MIN, "second");
	call(T0 + 30 * MIN + 3000, "call_c");
	b.answer(T0 + 30 * MIN + 9000, "done two");
	b.user(T0 + 32 * MIN, "third");
	b.add(T0 + 32 * MIN + 2000, { role: "assistant", content: [], stopReason: "aborted" });
	b.user(T0 + 39 * MIN, "fourth");
	b.answer(T0 + 39 * MIN + 2000, "done four");
	return b.build("clock");
}

describe("pi 1.6.0: the economics replay drives context-fold's clock", () => {
	test("now() is each request's recorded start; earlier replies map to theirs; idle gaps are the billed ones", async () => {
		const plan = buildPlan(trace());
		const dir = mkdtempSync(join(tmpdir(), "cf-clock-"));
		try {
			const log = join(dir, "probe.jsonl");
			const billing = billingModel("anthropic", { lifetimeMs: FIVE_MINUTES });
			const run = await replayArm({
				plan,
				arm: DEFAULTS,
				billing,
				bundle,
				extensions: [PROBE],
				env: { CF_CLOCK_PROBE_LOG: log },
			});
			expect(run.problems).toEqual([]);
			const starts = plan.replies.map((r) => r.t);
			expect(starts).toEqual([
				T0 + 2000,
				T0 + 9000,
				T0 + 15_000,
				T0 + 30 * MIN + 3000,
				T0 + 30 * MIN + 9000,
				T0 + 32 * MIN + 2000,
				T0 + 39 * MIN + 2000,
			]);
			const probes = readFileSync(log, "utf8")
				.trim()
				.split("\n")
				.map((l) => JSON.parse(l) as { now: number; assistants: Array<{ at: number; stopReason: string | null }> });
			expect(probes.map((p) => p.now)).toEqual(starts);
			// Each reply Pi keeps in the context (the aborted one too) maps to its own recorded start.
			const s = (k: number) => starts[k] as number;
			expect(probes.map((p) => p.assistants.map((a) => a.at))).toEqual([
				[],
				[s(0)],
				[s(0), s(1)],
				[s(0), s(1), s(2)],
				[s(0), s(1), s(2), s(3)],
				[s(0), s(1), s(2), s(3), s(4)],
				[s(0), s(1), s(2), s(3), s(4), s(5)],
			]);
			expect(probes[6]?.assistants.at(-1)?.stopReason).toBe("aborted");
			// Idle since the last response (as the advisories read it: aborted ones do not count), on this
			// clock: the recorded gaps, not the replay's milliseconds.
			const idle = probes.map((p) => {
				const last = p.assistants.filter((a) => a.stopReason !== "aborted").at(-1);
				return last === undefined ? null : p.now - last.at;
			});
			expect(idle).toEqual([null, 7000, 6000, 30 * MIN - 12_000, 6000, 2 * MIN - 7000, 9 * MIN - 7000]);
			// Longer than the lifetime exactly where the billing found the cache expired.
			const expired = billAll(run.records, billing).map((b) => b.expired);
			expect(expired).toEqual([false, false, false, true, false, false, true]);
			expect(idle.map((t) => t !== null && t > FIVE_MINUTES)).toEqual(expired);
		} finally {
			rmSync(dir, { recursive: true, force: true });
		}
	}, 120_000);

	test("a replay clock that counted the requests differently from the model is a replay problem", () => {
		const plan = buildPlan(trace());
		const results = Object.keys(plan.tools.results).map((id) => JSON.stringify({ call: id, served: true }));
		const contexts = (ks: number[]) => [...results, ...ks.map((k) => JSON.stringify({ context: k }))].join("\n");
		expect(checkServed(plan, contexts([0, 1, 2, 3, 4, 5, 6]))).toEqual([]);
		expect(checkServed(plan, contexts([0, 1, 2, 2, 4, 5, 6]))).toEqual([
			"replay clock: context event 3 was counted as request 2",
		]);
		expect(checkServed(plan, contexts([0, 1, 2, 3, 4, 5]))).toEqual([
			"replay clock: 6 context events for 7 recorded requests",
		]);
	});
});
