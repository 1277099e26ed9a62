// The benchmark's cut sessions and the plan's handling of a session that stops after a tool batch,
// on a small synthetic trace (exact entries), and on the recorded traces when they are present.
import { describe, expect, test } from "bun:test";
import { buildPlan } from "./plan.ts";
import { countCalls, cutAfterCalls, cutAfterPrompts, cutName } from "./sessions.ts";
import { TraceBuilder } from "./trace-builder.ts";
import type { Trace } from "./trace-read.ts";
import { listRecordedTraces, loadTrace } from "./traces.ts";

const T0 = Date.UTC(2025, 0, 1);

/** Three prompts; the second run has a steer after its first batch and an aborted reply with calls. */
function trace(): Trace {
	const b = new TraceBuilder(T0, "s");
	let t = T0;
	const at = () => (t += 1000);
	b.user(at(), "one"); // e1
	b.calls(at(), ["a1", "a2"]); // e2
	b.result(at(), "a1");
	b.result(at(), "a2");
	b.answer(at(), "done one"); // e5
	b.user(at(), "two"); // e6
	b.calls(at(), ["b1"]); // e7
	b.result(at(), "b1");
	b.user(at(), "a steer"); // e9
	b.calls(at(), ["x1", "x2", "x3"], { stopReason: "aborted" }); // e10: never ran
	b.user(at(), "three"); // e11
	b.calls(at(), ["c1", "c2", "c3"]); // e12
	b.result(at(), "c1");
	b.result(at(), "c2");
	b.result(at(), "c3");
	b.answer(at(), "done three"); // e16
	return b.build("t", "t.jsonl");
}

describe("cut sessions", () => {
	test("after n prompts: every entry before the next prompt; none when there is no next prompt", () => {
		const t = trace();
		const one = cutAfterPrompts(t, 1, "t-p1") as Trace;
		expect(one.entries.map((e) => e.id)).toEqual(["e1", "e2", "e3", "e4", "e5"]);
		expect(one.header?.id).toBe("s");
		expect(one.path).toBe("t.jsonl, first 1 prompts");
		expect(one.fromFile).toBe(false);
		// The steer joins the second run; the aborted reply's user message is the third prompt.
		const two = cutAfterPrompts(t, 2, "t-p2") as Trace;
		expect(two.entries.at(-1)?.id).toBe("e10");
		expect(buildPlan(two).steps.map((s) => s.kind === "prompt" && s.text)).toEqual(["one", "two"]);
		expect(cutAfterPrompts(t, 3, "t-p3")).toBeNull();
		expect(cutName("large-session", 15)).toBe("large-session-p15");
	});

	test("after n tool calls: to the end of the batch that reaches n, aborted calls not counted; the run ends there", () => {
		const t = trace();
		expect(countCalls(t)).toBe(6);
		const three = cutAfterCalls(t, 3, "t-c3");
		expect(three.entries.at(-1)?.id).toBe("e8");
		expect(countCalls(three)).toBe(3);
		const four = cutAfterCalls(t, 4, "t-c4");
		expect(four.entries.at(-1)?.id).toBe("e15");
		expect(countCalls(four)).toBe(6);
		const plan = buildPlan(four);
		expect(plan.features.endsAfterBatch).toBe(1);
		expect(plan.tools.terminate).toEqual(["c1", "c2", "c3"]);
		expect(() => cutAfterCalls(t, 7, "t-c7")).toThrow("t has only 6 tool calls, fewer than 7");
	});

	test("a whole session ending in a final answer terminates nothing; the recorded times are kept for the clock", () => {
		const plan = buildPlan(trace());
		expect(plan.features.endsAfterBatch).toBe(0);
		expect(plan.tools.terminate).toEqual([]);
		const at = (i: number) => T0 + i * 1000;
		expect(plan.tools.times).toEqual({
			start: at(1),
			prompts: [at(1), at(6), at(11)],
			replies: [at(2), at(5), at(7), at(10), at(12), at(16)],
			results: { a1: at(3), a2: at(4), b1: at(8), c1: at(13), c2: at(14), c3: at(15) },
			bash: [],
		});
		expect(plan.steps.map((s) => s.entry)).toEqual([0, 5, 10]);
	});

	test("the recorded traces: cuts hold exactly their first prompts", () => {
		for (const source of listRecordedTraces().sources) {
			const whole = loadTrace(source);
			const plan = buildPlan(whole);
			for (const n of [15, 30]) {
				const cut = cutAfterPrompts(whole, n, cutName(source.name, n)) as Trace;
				const cutPlan = buildPlan(cut);
				expect(cutPlan.steps.filter((s) => s.kind === "prompt")).toHaveLength(n);
				expect(cutPlan.features.endsAfterBatch).toBe(0);
				// A prefix of the whole session's replies, in the same order.
				expect(cutPlan.replies.map((r) => r.t)).toEqual(plan.replies.slice(0, cutPlan.replies.length).map((r) => r.t));
			}
		}
	});
});
