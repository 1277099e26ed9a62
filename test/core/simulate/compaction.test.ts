// Pi's compaction re-decided on the folded context of an offline replay (context-fold simulate):
// Pi's estimate, the cut point, and when the folded arm compacts or does not.
import { describe, expect, test } from "bun:test";
import { billingModel } from "../../../src/core/billing.ts";
import type { PiEntry, PiMessage } from "../../../src/core/session/view.ts";
import { DEFAULT_SETTINGS } from "../../../src/core/settings.ts";
import { findCutIndex, PI_COMPACTION_DEFAULTS, piMessageTokens } from "../../../src/core/simulate/compaction.ts";
import { assumedSummaryText } from "../../../src/core/simulate/native-summary.ts";
import { replaySession } from "../../../src/core/simulate/replay.ts";
import { billReplay } from "../../../src/core/simulate/summary.ts";
import { filler, sha256, T0 } from "../../helpers/session.ts";

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * A tool loop: each turn one bash call and a result of `resultTokens`, plus `userTokens` of user
 * text every `userEvery` turns. The provider reports the whole prompt (chars/4 of every message so
 * far plus a 1,000-token system prompt), the way the fake model does.
 */
function session(opts: {
	turns: number;
	resultTokens: number;
	userTokens?: number;
	userEvery?: number;
	/** Record a compaction (as Pi did, unfolded) before this turn, keeping from turn `keepFrom`. */
	compactAt?: { turn: number; keepFrom: number };
}): PiEntry[] {
	const entries: PiEntry[] = [];
	let parent: string | null = null;
	let chars = 4_000;
	let t = T0;
	const sizes = new Map<string, number>();
	const push = (id: string, message: PiMessage) => {
		entries.push({ type: "message", id, parentId: parent, timestamp: iso(t), message });
		parent = id;
	};
	const add = (m: PiMessage, id: string) => {
		push(id, m);
		const n = JSON.stringify(m.content).length;
		sizes.set(id, n);
		chars += n;
	};
	add({ role: "user", content: [{ type: "text", text: "start the work" }], timestamp: t }, "u0");
	for (let i = 0; i < opts.turns; i++) {
		t += 10_000;
		if (opts.compactAt?.turn === i) {
			const summary = "an LLM summary of the early work";
			entries.push({
				type: "compaction",
				id: "cmp1",
				parentId: parent,
				timestamp: iso(t),
				summary,
				firstKeptEntryId: `a${opts.compactAt.keepFrom}`,
				tokensBefore: Math.ceil(chars / 4),
			});
			parent = "cmp1";
			// What the provider is sent from now on: the summary and the kept turns.
			chars = 4_000 + summary.length;
			for (const [id, n] of sizes) if (Number(id.slice(1)) >= opts.compactAt.keepFrom) chars += n;
			t += 1_000;
		}
		if (opts.userEvery !== undefined && i > 0 && i % opts.userEvery === 0) {
			add(
				{ role: "user", content: [{ type: "text", text: filler(opts.userTokens ?? 0, `note${i}`) }], timestamp: t },
				`u${i}`,
			);
			t += 1_000;
		}
		const prompt = Math.ceil(chars / 4);
		const call: PiMessage = {
			role: "assistant",
			content: [{ type: "toolCall", id: `c${i}`, name: "bash", arguments: { command: `make step${i}` } }],
			timestamp: t,
			stopReason: "toolUse",
			usage: { input: 0, output: 20, cacheRead: prompt, cacheWrite: 0 },
			provider: "anthropic",
			model: "m",
			api: "anthropic-messages",
		};
		add(call, `a${i}`);
		t += 1_000;
		add(
			{
				role: "toolResult",
				toolCallId: `c${i}`,
				toolName: "bash",
				content: [{ type: "text", text: filler(opts.resultTokens, `out${i}`, { error: `error: step ${i} failed` }) }],
				timestamp: t,
			},
			`r${i}`,
		);
	}
	t += 10_000;
	push("final", {
		role: "assistant",
		content: [{ type: "text", text: "done" }],
		timestamp: t,
		stopReason: "stop",
		usage: { input: 0, output: 5, cacheRead: Math.ceil(chars / 4), cacheWrite: 0 },
		provider: "anthropic",
		model: "m",
		api: "anthropic-messages",
	});
	return entries;
}

function replay(entries: PiEntry[], window: number, compaction?: "recorded") {
	return replaySession({
		entries,
		settings: DEFAULT_SETTINGS,
		windowFor: () => window,
		hash: sha256,
		parseTime: (s) => Date.parse(s),
		...(compaction && { compaction }),
	});
}

describe("Pi's estimate and cut point", () => {
	test("chars/4 per message, as Pi counts them: text, thinking, tool calls, images, summaries", () => {
		expect(piMessageTokens({ role: "user", content: "abcdefgh" })).toBe(2);
		expect(
			piMessageTokens({
				role: "user",
				content: [
					{ type: "text", text: "abcde" },
					{ type: "image", data: "x" },
				],
			}),
		).toBe(Math.ceil((5 + 4800) / 4));
		expect(
			piMessageTokens({
				role: "assistant",
				content: [
					{ type: "text", text: "abcd" },
					{ type: "thinking", thinking: "efgh" },
					{ type: "toolCall", name: "bash", arguments: { command: "ls" } },
				],
			}),
		).toBe(Math.ceil((4 + 4 + 4 + JSON.stringify({ command: "ls" }).length) / 4));
		expect(piMessageTokens({ role: "bashExecution", command: "ls", output: "a b" })).toBe(2);
		expect(piMessageTokens({ role: "compactionSummary", summary: "x".repeat(9) })).toBe(3);
		expect(piMessageTokens({ role: "system", content: "ignored" })).toBe(0);
	});

	test("keeps at least the newest `keep` tokens, never starts at a tool result, and cuts nothing when all fits", () => {
		const text = (n: number) => [{ type: "text", text: "x".repeat(n * 4) }];
		const messages: PiMessage[] = [
			{ role: "user", content: text(100) },
			{ role: "assistant", content: text(10) },
			{ role: "toolResult", content: text(500) },
			{ role: "assistant", content: text(10) },
			{ role: "toolResult", content: text(500) },
			{ role: "assistant", content: text(10) },
		];
		const ids = messages.map((_, i) => `e${i}`);
		// 10 + 500 = 510 >= 300 is reached at the tool result (index 4): the kept range starts at the next cut point.
		expect(findCutIndex(messages, ids, 300)).toBe(5);
		// 10 + 500 + 10 + 500 = 1020 >= 900 at index 2 (a tool result): moved forward to the assistant at 3.
		expect(findCutIndex(messages, ids, 900)).toBe(3);
		expect(findCutIndex(messages, ids, 10_000)).toBe(-1);
		// A message without an entry id cannot be pointed at: the next one that has one is used.
		expect(findCutIndex(messages, ["e0", "e1", "e2", null, "e4", "e5"], 900)).toBe(5);
	});
});

describe("the folded arm compacts by Pi's rule, not by the recording's", () => {
	test("folding keeps the context under Pi's threshold: the recorded compaction does not happen with folding", () => {
		// 40 turns of 3k-token results on a 128k window: unfolded, the context passes 128k - 16,384.
		// The recording compacted (as Pi did, unfolded) at turn 28, keeping the last four turns.
		const entries = session({ turns: 40, resultTokens: 3_000, compactAt: { turn: 28, keepFrom: 24 } });
		const r = replay(entries, 128_000);
		expect(r.requests.filter((q) => q.compacted)).toHaveLength(1);
		expect(r.armCompactions).toBe(0);
		expect(r.requests.some((q) => q.armCompacted)).toBe(false);
		expect(r.layers.length).toBeGreaterThan(0);
		// Kept as recorded, the folded arm has the recorded compaction too.
		const kept = replay(entries, 128_000, "recorded");
		expect(kept.compaction).toBe("recorded");
		expect(kept.armCompactions).toBe(0);
	});

	test("user text no fold can take out: the folded arm compacts once it passes window - reserve, deterministically", () => {
		// Every turn adds 2k of user text (never folded) and a 500-token result: folding cannot keep up.
		const entries = session({ turns: 60, resultTokens: 500, userTokens: 2_000, userEvery: 1 });
		const r = replay(entries, 100_000);
		expect(r.armCompactions).toBeGreaterThan(0);
		const first = r.requests.findIndex((q) => q.armCompacted);
		const before = r.requests[first - 1];
		const at = r.requests[first];
		expect(before).toBeDefined();
		expect(at).toBeDefined();
		// Pi's rule: the request before did not compact because the estimate was still under 100k - 16,384.
		expect(before?.usage ?? 0).toBeLessThanOrEqual(100_000 - 16_384);
		// After the compaction the request is a summary plus the kept ~20k tokens.
		const foldedChars = (at?.foldedParts ?? []).join("").length;
		expect(foldedChars / 4).toBeLessThan(40_000);
		expect(foldedChars / 4).toBeGreaterThan(20_000);
		expect(at?.foldedParts[0]).toContain("Earlier history was compacted by context-fold");
		// The baseline (as recorded, no compaction) keeps everything.
		expect((at?.baseParts ?? []).join("").length).toBeGreaterThan(foldedChars * 2);
		// Deterministic: the same replay twice gives the same bytes.
		const again = replay(entries, 100_000);
		expect(again.requests.map((q) => q.foldedParts.join(""))).toEqual(r.requests.map((q) => q.foldedParts.join("")));
	});
});

describe("the arm without folding under a measure other than content", () => {
	const measured = (entries: PiEntry[], window: number, baseline?: "recorded") =>
		replaySession({
			entries,
			settings: DEFAULT_SETTINGS,
			windowFor: () => window,
			hash: sha256,
			parseTime: (s) => Date.parse(s),
			measure: "openai-json",
			overhead: 1_000,
			...(baseline && { baseline }),
		});

	test("a compaction the recording made on the provider's counts is re-decided on the measure: here it never comes", () => {
		const entries = session({ turns: 12, resultTokens: 1_000, compactAt: { turn: 10, keepFrom: 8 } });
		const r = measured(entries, 200_000);
		expect(r.baseline).toEqual(PI_COMPACTION_DEFAULTS);
		expect(r.requests.filter((q) => q.compacted)).toHaveLength(1);
		expect(r.requests.some((q) => q.baseCompacted)).toBe(false);
		// Nothing dropped: the last request carries every message before it (none is an aborted response).
		const last = r.requests.at(-1);
		const before = entries.findIndex((e) => e.id === last?.entryId);
		expect(last?.baseParts).toHaveLength(entries.slice(0, before).filter((e) => e.type === "message").length);
		const sim = billReplay(r, billingModel("anthropic"));
		expect(sim.summary.compactions).toMatchObject({ recorded: 1, baseline: 0, baselineBy: "pi-rule" });
		// Asked to keep the recording's, it does; so does the content measure by default.
		const kept = billReplay(measured(entries, 200_000, "recorded"), billingModel("anthropic"));
		expect(kept.summary.compactions).toMatchObject({ recorded: 1, baseline: 1, baselineBy: "recorded" });
		expect(billReplay(replay(entries, 200_000), billingModel("anthropic")).summary.compactions).toMatchObject({
			baseline: 1,
			baselineBy: "recorded",
		});
	});

	test("a context past window - reserve on the measure compacts without folding too, and stays under the window", () => {
		// No compaction recorded: the provider's window was larger than this one.
		const entries = session({ turns: 40, resultTokens: 3_000 });
		const window = 100_000;
		const asRecorded = billReplay(replay(entries, window), billingModel("anthropic"));
		expect(asRecorded.summary.compactions.baseline).toBe(0);
		expect(asRecorded.summary.baseline.peak).toBeGreaterThan(window - PI_COMPACTION_DEFAULTS.reserveTokens);
		const r = measured(entries, window);
		const sim = billReplay(r, billingModel("anthropic"));
		expect(sim.summary.compactions.baseline).toBeGreaterThan(0);
		expect(sim.summary.baseline.peak).toBeLessThanOrEqual(window);
		const first = r.requests.findIndex((q) => q.baseCompacted);
		// Answered as native Pi answers it: summary requests to the model, and a summary of the assumed size.
		expect(r.requests[first]?.baseParts[0]).toContain(JSON.stringify(assumedSummaryText()).slice(1, -1));
		expect(r.requests[first]?.baseSummaries.length).toBeGreaterThan(0);
		// The request before it was under the threshold by the measure the responses reported.
		expect(sim.rows[first - 1]?.baseline?.prompt ?? Number.POSITIVE_INFINITY).toBeLessThanOrEqual(
			window - PI_COMPACTION_DEFAULTS.reserveTokens,
		);
	});
});
