// Early compaction in `context-fold simulate`: the folded arm asks the extension's question
// (core/early-compaction.ts) at the first request of each run, on the context as the previous run
// left it, and compacts deterministically when the rule fires; `off` and pinned fold points never do.
import { describe, expect, test } from "bun:test";
import { earlyCompaction } from "../../../src/core/early-compaction.ts";
import { addRecord, emptyIndex } from "../../../src/core/layers.ts";
import { planFold } from "../../../src/core/plan.ts";
import { buildView, type PiEntry, type PiMessage } from "../../../src/core/session/view.ts";
import { DEFAULT_SETTINGS, type Settings } from "../../../src/core/settings.ts";
import { replaySession } from "../../../src/core/simulate/replay.ts";
import { filler, sha256, T0 } from "../../helpers/session.ts";

const iso = (ms: number) => new Date(ms).toISOString();
const WINDOW = 40_000;
const PI = { reserveTokens: 2_000, keepRecentTokens: 2_000 };

/**
 * Runs like the end-to-end test's: long answers (which never fold) bring the context over the 30k
 * budget, then a run of `loop` small tool calls re-reads it on every request, then one more prompt.
 * The provider reports the whole prompt (chars/4 of every message so far plus 1,000 of system prompt).
 */
function session(loop: number): PiEntry[] {
	const entries: PiEntry[] = [];
	let parent: string | null = null;
	let chars = 4_000;
	let t = T0;
	let n = 0;
	const add = (m: PiMessage) => {
		const id = `e${n++}`;
		entries.push({ type: "message", id, parentId: parent, timestamp: iso(t), message: m });
		parent = id;
		chars += JSON.stringify(m.content).length;
		t += 1_000;
	};
	const answer = (content: PiMessage["content"], stopReason: string) => {
		const text = JSON.stringify(content).length;
		add({
			role: "assistant",
			content,
			timestamp: t,
			stopReason,
			usage: { input: 0, output: Math.ceil(text / 4), cacheRead: Math.ceil(chars / 4), cacheWrite: 0 },
			provider: "anthropic",
			model: "m",
			api: "anthropic-messages",
		});
	};
	const prompt = (text: string) => add({ role: "user", content: [{ type: "text", text }], timestamp: t });
	for (let run = 1; run <= 5; run++) {
		prompt(`run ${run}`);
		answer([{ type: "text", text: filler(run === 5 ? 7_000 : 6_000, `answer${run}`) }], "stop");
	}
	prompt("run 6");
	for (let i = 0; i < loop; i++) {
		answer([{ type: "toolCall", id: `c${i}`, name: "bash", arguments: { command: `echo small-${i}` } }], "toolUse");
		add({
			role: "toolResult",
			toolCallId: `c${i}`,
			toolName: "bash",
			content: [{ type: "text", text: `small-${i}` }],
			timestamp: t,
		});
	}
	answer([{ type: "text", text: "loop done" }], "stop");
	prompt("run 7");
	answer([{ type: "text", text: "ok" }], "stop");
	return entries;
}

function replay(entries: PiEntry[], settings: Partial<Settings> = {}) {
	return replaySession({
		entries,
		settings: { ...DEFAULT_SETTINGS, ...settings },
		windowFor: () => WINDOW,
		hash: sha256,
		parseTime: (s) => Date.parse(s),
		compaction: PI,
	});
}

describe("simulate: early compaction", () => {
	test("a run of requests over the budget pays the rent: the arm compacts before the next run, deterministically", () => {
		const r = replay(session(12));
		const compacted = r.requests.filter((q) => q.armCompacted);
		expect(compacted).toHaveLength(1);
		// Before run 7's request, the first after the loop's final answer; and never Pi's threshold.
		expect(compacted[0]?.index).toBe(r.requests.length - 1);
		expect(r.armCompactions).toBe(1);
		const last = r.requests.at(-1);
		const before = r.requests.at(-2);
		expect(last?.usage).toBeLessThan((before?.usage ?? 0) / 2);
	});
	test("too short a loop: the rent is short, nothing compacts", () => {
		const r = replay(session(2));
		expect(r.requests.some((q) => q.armCompacted)).toBe(false);
	});
	test.each<[string, Partial<Settings>]>([
		["CONTEXTFOLD_EARLY_COMPACT=off", { earlyCompact: "off" }],
		["CONTEXTFOLD_COMPACT=native", { compact: "native" }],
		["fold points pinned by hand", { fixedFolds: true }],
	])("%s: never an early compaction", (_name, settings) => {
		const r = replay(session(12), settings);
		expect(r.requests.some((q) => q.armCompacted)).toBe(false);
	});
	test("a fold over the budget does not restart the rent: the excess re-read before it still counts", () => {
		// The context after run 6, with an (empty) fold layer committed in the middle of its tool loop.
		const entries = session(12).slice(0, -2);
		const messages = entries.map((e) => (e as { message: PiMessage }).message);
		const byMessage = new Map(messages.map((m, i) => [m, entries[i]?.id ?? null]));
		const view = buildView(messages, (m) => byMessage.get(m) ?? null);
		const responses = messages.filter((m) => m.role === "assistant");
		const mid = responses[responses.length - 4]?.timestamp as number;
		const index = emptyIndex();
		addRecord(index, {
			type: "layer",
			v: 1,
			seq: 1,
			reason: "budget",
			lastResponseAt: mid,
			usageBefore: 0,
			usageAfter: 0,
			blocks: [],
		});
		const plan = planFold({ messages: view, index, settings: DEFAULT_SETTINGS, window: WINDOW, hash: sha256 });
		const withFold = earlyCompaction({ plan, messages, view, index, thinking: "unsigned-only", pi: PI });
		const without = earlyCompaction({
			plan,
			messages,
			view,
			index: emptyIndex(),
			thinking: "unsigned-only",
			pi: PI,
		});
		expect(withFold?.decision.rent).toBe(without?.decision.rent as number);
		expect(withFold?.decision).toMatchObject({ fire: true, reason: "rent" });
	});
	test("the decision simulate makes is the extension's: the same function on the same context", () => {
		// The context after run 6, as the extension sees it at agent_settled.
		const entries = session(12).slice(0, -2);
		const messages = entries.map((e) => (e as { message: PiMessage }).message);
		const byMessage = new Map(messages.map((m, i) => [m, entries[i]?.id ?? null]));
		const view = buildView(messages, (m) => byMessage.get(m) ?? null);
		const index = emptyIndex();
		const plan = planFold({ messages: view, index, settings: DEFAULT_SETTINGS, window: WINDOW, hash: sha256 });
		const early = earlyCompaction({ plan, messages, view, index, thinking: "unsigned-only", pi: PI });
		expect(early?.decision).toMatchObject({ fire: true, reason: "rent" });
		expect(plan.state).toBe("floor");
		// Every request of run 6 was over the budget and paid its excess over what the compaction keeps.
		const d = early?.decision;
		if (d === undefined) throw new Error("no decision");
		expect(d.rent).toBeGreaterThanOrEqual(1.5 * d.rewrite);
		expect(d.kept).toBeLessThan(d.context);
	});
});
