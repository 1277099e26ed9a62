// Native Pi's compaction as simulate's arm without folding bills it (src/core/simulate/native-summary.ts):
// the conversation serialized as Pi serializes it, the requests Pi 1.6.0 sends (checked against the
// installed Pi's own compact(), with a stream function that records what it is asked), the summary it
// then keeps; and in a replay, each summary request billed as uncached input with the assumed output,
// the arm's context after it, and the totals.
import { describe, expect, test } from "bun:test";
// Pi's own modules, from the installed Pi 1.6.0 (the package's index pulls in more than bun resolves here).
import {
	compact,
	prepareCompaction,
} from "../../../node_modules/@earendil-works/pi-coding-agent/dist/core/compaction/compaction.js";
import { serializeConversation } from "../../../node_modules/@earendil-works/pi-coding-agent/dist/core/compaction/utils.js";
import { convertToLlm } from "../../../node_modules/@earendil-works/pi-coding-agent/dist/core/messages.js";
import { billingModel } from "../../../src/core/billing.ts";
import { ContextTracker } from "../../../src/core/session/context.ts";
import type { PiEntry, PiMessage } from "../../../src/core/session/view.ts";
import { DEFAULT_SETTINGS } from "../../../src/core/settings.ts";
import { findCutIndex } from "../../../src/core/simulate/compaction.ts";
import {
	assumedSummaryText,
	NATIVE_SUMMARY_TOKENS,
	nativeCompaction,
	type PreviousCompaction,
	serializeForSummary,
	summaryPrompts,
	summaryPromptTokens,
} from "../../../src/core/simulate/native-summary.ts";
import { replaySession } from "../../../src/core/simulate/replay.ts";
import { billReplay } from "../../../src/core/simulate/summary.ts";
import { stableStringify } from "../../e2e/harness/cache-model.ts";
import { sha256, T0 } from "../../helpers/session.ts";

const iso = (ms: number) => new Date(ms).toISOString();
const text = (t: string) => [{ type: "text", text: t }];
const call = (id: string, name: string, args: Record<string, unknown>) => ({
	type: "toolCall",
	id,
	name,
	arguments: args,
});

/** A session's entries, one message each, a second apart. */
class Entries {
	readonly list: PiEntry[] = [];
	private parent: string | null = null;
	private t = T0;

	add(id: string, message: PiMessage): this {
		this.t += 1_000;
		this.list.push({
			type: "message",
			id,
			parentId: this.parent,
			timestamp: iso(this.t),
			message: { ...message, timestamp: this.t },
		});
		this.parent = id;
		return this;
	}

	entry(e: Omit<PiEntry, "parentId" | "timestamp">): this {
		this.t += 1_000;
		this.list.push({ ...e, parentId: this.parent, timestamp: iso(this.t) } as PiEntry);
		this.parent = e.id as string;
		return this;
	}
}

const USAGE = {
	input: 0,
	output: 10,
	cacheRead: 0,
	cacheWrite: 0,
	totalTokens: 10,
	cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
};
const assistant = (content: unknown[], stopReason = "toolUse"): PiMessage => ({
	role: "assistant",
	content: content as PiMessage["content"],
	stopReason,
	usage: USAGE,
	provider: "p",
	model: "m",
	api: "openai-completions",
});
const result = (callId: string, body: string): PiMessage => ({
	role: "toolResult",
	toolCallId: callId,
	toolName: "x",
	content: text(body),
});

/** Every message kind Pi serializes for a summary, with the edge cases it handles. */
function allKinds(): PiMessage[] {
	return [
		{ role: "user", content: text("fix the parser") },
		{ role: "user", content: "a plain string prompt" },
		{ role: "user", content: [...text("two "), { type: "image", data: "AAAA" }, ...text("parts")] },
		assistant([
			{ type: "thinking", thinking: "left out of the summary" },
			...text("Reading it."),
			...text("Second text."),
			call("c1", "read", { path: "src/a.ts", offset: 10 }),
			call("c2", "bash", { command: 'grep -n "x" src', timeout: 30 }),
		]),
		result("c1", "short"),
		result("c2", `${"r".repeat(2_500)}tail`),
		// A surrogate pair across the 2,000-character cut: kept whole or not at all.
		result("c3", `${"a".repeat(1_999)}😀${"b".repeat(50)}`),
		{ role: "toolResult", toolCallId: "c4", toolName: "x", content: [] },
		assistant([call("c5", "edit", { path: "src/a.ts", edits: [{ oldText: "a", newText: "b" }] })]),
		assistant([], "aborted"),
		{ role: "bashExecution", command: "ls", output: "a\nb", exitCode: 2, cancelled: false, truncated: false },
		{ role: "bashExecution", command: "sleep 9", output: "", exitCode: null, cancelled: true, truncated: false },
		{
			role: "bashExecution",
			command: "cat big",
			output: "x",
			exitCode: 0,
			cancelled: false,
			truncated: true,
			fullOutputPath: "/tmp/out.txt",
		},
		{ role: "bashExecution", command: "secret", output: "s", exitCode: 0, excludeFromContext: true },
		{ role: "custom", customType: "note", content: "a custom message", display: true },
		{ role: "custom", customType: "note", content: text("custom blocks"), display: false },
		assistant(text("All done."), "stop"),
	];
}

describe("the conversation as Pi serializes it for a summary", () => {
	test("character for character, every message kind (Pi 1.6.0's serializeConversation after convertToLlm)", () => {
		const messages = allKinds();
		const pi = serializeConversation(convertToLlm(messages as never));
		expect(serializeForSummary(messages)).toBe(pi);
		// The cases it handles are there: the truncation note, the pair kept out, thinking left out.
		expect(pi).toContain("\n\n[... 504 more characters truncated]");
		expect(pi).toContain(`${"a".repeat(1_999)}\n\n[... 51 more characters truncated]`);
		expect(pi).not.toContain("left out of the summary");
	});

	test("a branch summary: Pi's wrapper stood in for, as long as JSON", () => {
		const messages: PiMessage[] = [{ role: "branchSummary", summary: "what the branch did", fromId: "x" }];
		const pi = serializeConversation(convertToLlm(messages as never));
		const mine = serializeForSummary(messages);
		expect(mine).not.toBe(pi);
		expect(JSON.stringify(mine).length).toBe(JSON.stringify(pi).length);
		expect(mine).toContain("what the branch did");
	});
});

describe("a summary request's prompt tokens, by the replay's measure", () => {
	test("openai-json: chars/4 of the tools (none) and messages the benchmark's fake model is sent", () => {
		const system = "You summarize.";
		const user = 'line one\nsays "hi"';
		// As the fake model measures a request body (test/bench/economics/replay-model.ts).
		const body = [
			{ role: "system", content: system },
			{ role: "user", content: [{ type: "text", text: user }] },
		];
		const chars = stableStringify([]).length + stableStringify(body).length;
		expect(summaryPromptTokens("openai-json", system, user)).toBe(Math.ceil(chars / 4));
		expect(chars).toBe(123);
	});

	test("content: both messages as the biller serializes a message, one separator each", () => {
		// ["system",null,["text","S"]] and ["user",null,["text","U"]]: 28 + 1 + 26 + 1 characters.
		expect(summaryPromptTokens("content", "S", "U")).toBe(Math.ceil(56 / 4));
	});

	test("the assumed summary: NATIVE_SUMMARY_TOKENS by chars/4, lines of plain words", () => {
		expect(NATIVE_SUMMARY_TOKENS).toBe(1_500);
		const s = assumedSummaryText();
		expect(s.length).toBe(6_000);
		expect(s.split("\n").length).toBeGreaterThan(50);
		expect(s).toBe(assumedSummaryText());
	});
});

/** What Pi 1.6.0 itself sends and keeps when it compacts these entries (keep: keepRecentTokens). */
async function piCompaction(entries: readonly PiEntry[], keep: number) {
	const prep = prepareCompaction(entries as never, { enabled: true, reserveTokens: 0, keepRecentTokens: keep });
	if (prep === undefined) return null;
	const asked: Array<{ system: string; user: string }> = [];
	const textOf = (c: unknown) =>
		typeof c === "string" ? c : (c as Array<{ text?: string }>).map((b) => b.text ?? "").join("");
	const streamFn = async (_model: unknown, context: { messages: Array<{ role: string; content: unknown }> }) => {
		const system = context.messages.find((m) => m.role === "system");
		const user = context.messages.find((m) => m.role === "user");
		asked.push({ system: textOf(system?.content), user: textOf(user?.content) });
		return {
			result: async () => ({
				role: "assistant",
				content: text(assumedSummaryText()),
				stopReason: "stop",
				usage: USAGE,
				timestamp: 0,
			}),
		};
	};
	const model = { id: "m", provider: "p", api: "openai-completions", reasoning: false };
	const out = await compact(prep, model as never, "key", undefined, undefined, undefined, undefined, streamFn as never);
	return { prep, out, asked };
}

/** The same compaction as simulate's arm without folding makes it, on the context the entries build. */
function mine(entries: readonly PiEntry[], keep: number, previous: PreviousCompaction | null) {
	const context = new ContextTracker((s) => Date.parse(s));
	for (const e of entries) context.consume(e);
	const ids = new Map(entries.map((e) => [e.message, e.id]));
	const messages = context.messages;
	const cut = findCutIndex(
		messages,
		messages.map((m) => ids.get(m) ?? null),
		keep,
	);
	if (cut < 0) return null;
	return {
		firstKept: ids.get(messages[cut]),
		prompts: summaryPrompts(messages, cut, previous),
		native: nativeCompaction(messages, cut, previous, "openai-json"),
	};
}

/** Two prompts, five tool calls in the second; reads, edits and a write to list; results of 1,000+ tokens. */
function work(): Entries {
	const e = new Entries();
	const big = (n: number) => `${n} `.repeat(2_100);
	e.add("u0", { role: "user", content: text("fix the parser in src/a.ts") });
	e.add("a0", assistant([...text("Reading."), call("c0", "read", { path: "src/a.ts" })]));
	e.add("r0", result("c0", big(0)));
	e.add("a1", assistant([call("c1", "edit", { path: "src/a.ts", oldText: "x", newText: "y" })]));
	e.add("r1", result("c1", "edited"));
	e.add("a2", assistant(text("Fixed."), "stop"));
	e.add("u1", { role: "user", content: text(`now the tests: ${"details ".repeat(250)}`) });
	for (let i = 3; i < 8; i++) {
		e.add(`a${i}`, assistant([call(`c${i}`, i === 5 ? "write" : "read", { path: `test/t${i}.ts`, content: "" })]));
		e.add(`r${i}`, result(`c${i}`, big(i)));
	}
	e.add("a8", assistant(text("Tests pass."), "stop"));
	return e;
}

describe("the requests Pi 1.6.0 sends to compact, and the summary it keeps (against the installed Pi)", () => {
	test("every kind of cut: at a prompt (one request), inside a turn (history and turn start), inside the first turn (turn start only)", async () => {
		const entries = work().list;
		const shapes = new Set<string>();
		for (let keep = 250; keep <= 8_000; keep += 250) {
			const pi = await piCompaction(entries, keep);
			const m = mine(entries, keep, null);
			if (pi === null || m === null) {
				// Everything fits in what Pi keeps: no compaction either way.
				expect([pi, m]).toEqual([null, null]);
				shapes.add("none");
				continue;
			}
			expect(m.firstKept).toBe(pi.prep.firstKeptEntryId);
			expect(m.prompts.prompts.map((p) => p.kind)).toHaveLength(pi.asked.length);
			m.prompts.prompts.forEach((p, i) => {
				const asked = pi.asked[i] as { system: string; user: string };
				// Pi's fixed texts are stood in for: the same length as JSON, everything else the same text.
				expect(JSON.stringify(p.system).length).toBe(JSON.stringify(asked.system).length);
				expect(JSON.stringify(p.user).length).toBe(JSON.stringify(asked.user).length);
				const own = p.user.indexOf("[Pi's ");
				expect(asked.user.slice(0, own)).toBe(p.user.slice(0, own));
				expect(m.native.requests[i]).toEqual({
					kind: p.kind,
					prompt: summaryPromptTokens("openai-json", asked.system, asked.user),
					output: NATIVE_SUMMARY_TOKENS,
				});
			});
			// The summary Pi keeps, byte for byte, when its model writes the assumed summary.
			expect(m.native.summary).toBe(pi.out.summary);
			expect(m.native.files).toEqual(pi.out.details as never);
			shapes.add(m.prompts.prompts.map((p) => p.kind).join("+"));
		}
		expect([...shapes].sort()).toEqual(["history", "history+turn-prefix", "none", "turn-prefix"]);
	});

	test("a second compaction updates the previous summary and carries its file lists", async () => {
		const e = work();
		const first = await piCompaction(e.list, 3_000);
		if (first === null) throw new Error("Pi finds nothing to compact");
		const own = mine(e.list, 3_000, null);
		if (own === null) throw new Error("nothing to compact");
		e.entry({
			type: "compaction",
			id: "cmp1",
			summary: first.out.summary,
			firstKeptEntryId: first.out.firstKeptEntryId,
			tokensBefore: first.out.tokensBefore,
			details: first.out.details,
		});
		e.add("u2", { role: "user", content: text("and the docs") });
		for (let i = 9; i < 12; i++) {
			e.add(`a${i}`, assistant([call(`c${i}`, "read", { path: `docs/d${i}.md` })]));
			e.add(`r${i}`, result(`c${i}`, `${i} `.repeat(2_100)));
		}
		e.add("a12", assistant(text("Docs read."), "stop"));
		const second = await piCompaction(e.list, 2_000);
		if (second === null) throw new Error("Pi finds nothing to compact");
		expect(second.prep.previousSummary).toBe(first.out.summary);
		const m = mine(e.list, 2_000, { summary: own.native.summary, ...own.native.files });
		if (m === null) throw new Error("nothing to compact");
		expect(m.firstKept).toBe(second.prep.firstKeptEntryId);
		expect(m.prompts.prompts.map((p) => p.kind)).toEqual(["history", "turn-prefix"]);
		m.prompts.prompts.forEach((p, i) => {
			const asked = second.asked[i] as { system: string; user: string };
			expect(JSON.stringify(p.user).length).toBe(JSON.stringify(asked.user).length);
		});
		// The update instructions and the previous summary are in the history request.
		expect(m.prompts.prompts[0]?.user).toContain(`<previous-summary>\n${first.out.summary}\n</previous-summary>`);
		expect(m.native.summary).toBe(second.out.summary);
		expect(m.native.files.modifiedFiles).toEqual(["src/a.ts", "test/t5.ts"]);
		expect(m.native.files.readFiles).toContain("docs/d9.md");
	});
});

describe("simulate's arm without folding bills native Pi's summary requests", () => {
	const WINDOW = 12_000;
	const PI = { reserveTokens: 2_000, keepRecentTokens: 2_500 };
	const RESULT = (i: number) => `result ${i} ${"y".repeat(4_400)}`;

	/** Two prompts; the second's tool loop passes window - reserve on the measure. */
	function entries(): PiEntry[] {
		const e = new Entries();
		e.add("u0", { role: "user", content: text("start") });
		e.add("a0", assistant([call("c0", "read", { path: "src/f0.ts" })]));
		e.add("r0", result("c0", RESULT(0)));
		e.add("a1", assistant(text("ok"), "stop"));
		e.add("u1", { role: "user", content: text("next") });
		for (let i = 2; i < 12; i++) {
			e.add(`a${i}`, assistant([call(`c${i}`, "read", { path: `src/f${i}.ts` })]));
			e.add(`r${i}`, result(`c${i}`, RESULT(i)));
		}
		e.add("a12", assistant(text("done"), "stop"));
		return e.list;
	}

	const replay = () =>
		replaySession({
			entries: entries(),
			settings: DEFAULT_SETTINGS,
			windowFor: () => WINDOW,
			hash: sha256,
			parseTime: (s) => Date.parse(s),
			measure: "openai-json",
			overhead: 500,
			baseline: PI,
		});

	test("each request billed as uncached input of its prompt plus the assumed output; the context carries the assumed summary", () => {
		const r = replay();
		const sim = billReplay(r, billingModel("anthropic"));
		const at = r.requests.findIndex((q) => q.baseCompacted);
		expect(r.requests.filter((q) => q.baseCompacted)).toHaveLength(1);
		const q = r.requests[at];
		// a10's: the context before it (500 + ~1,120 per tool result, 9 of them) is past 12,000 - 2,000.
		expect(q?.entryId).toBe("a10");
		// By Pi's estimate (1,103 per result, 6 per call) the newest 2,500 tokens reach back to r7; the
		// first message that can start the kept range after it is a8.
		const kept = 8;
		const truncatedResult = (i: number) =>
			`[Tool result]: ${RESULT(i).slice(0, 2_000)}\n\n[... ${RESULT(i).length - 2_000} more characters truncated]`;
		const history = [
			"[User]: start",
			'[Assistant tool calls]: read(path="src/f0.ts")',
			truncatedResult(0),
			"[Assistant]: ok",
		].join("\n\n");
		const prefix = ["[User]: next"];
		for (let i = 2; i < kept; i++) prefix.push(`[Assistant tool calls]: read(path="src/f${i}.ts")`, truncatedResult(i));
		// The body Pi sends (tools "[]", a system and a user message), its fixed texts at their lengths
		// as JSON: system prompt 312, first-summary instructions 914, turn-start instructions 677.
		const wrapper = `[][{"role":"system","content":""},{"role":"user","content":[{"type":"text","text":""}]}]`.length;
		const json = (s: string) => JSON.stringify(s).length - 2;
		const historyTokens = Math.ceil(
			(wrapper + 312 + json(`<conversation>\n${history}\n</conversation>\n\n`) + 914) / 4,
		);
		const prefixTokens = Math.ceil(
			(wrapper + 312 + json(`# Conversation\n${prefix.join("\n\n")}\n\n# Instructions\n`) + 677) / 4,
		);
		expect(q?.baseSummaries).toEqual([
			{ kind: "history", prompt: historyTokens, output: 1_500 },
			{ kind: "turn-prefix", prompt: prefixTokens, output: 1_500 },
		]);
		const row = sim.rows[at];
		// Anthropic's preset: $3 per Mtok of input, $15 of output; nothing read from or written to cache.
		expect(row?.baselineSummaries.map((b) => ({ ...b, cost: Number(b.cost.toFixed(9)) }))).toEqual(
			[historyTokens, prefixTokens].map((prompt) => ({
				input: prompt,
				output: 1_500,
				cacheRead: 0,
				cacheWrite: 0,
				prompt,
				cost: Number(((prompt * 3 + 1_500 * 15) / 1e6).toFixed(9)),
				prefixBreak: false,
				expired: false,
			})),
		);
		// The arm's context after it: the summary Pi keeps (both assumed summaries, the files read), then a4 on.
		const summary = `${assumedSummaryText()}\n\n---\n\n**Turn Context (split turn):**\n\n${assumedSummaryText()}\n\n<read-files>\n${[0, 2, 3, 4, 5, 6, 7].map((i) => `src/f${i}.ts`).join("\n")}\n</read-files>`;
		expect(q?.baseParts[0]).toBe(JSON.stringify({ role: "user", content: [{ type: "text", text: summary }] }));
		expect(q?.baseParts[1]).toContain('"arguments":"{\\"path\\":\\"src/f8.ts\\"}"');
		expect(q?.baseParts).toHaveLength(1 + 2 * (10 - kept));
		// Totals: the arm's prompt and cost include the summary requests; the folded arm sends none.
		const s = sim.summary;
		const cost = (row?.baselineSummaries ?? []).reduce((n, b) => n + b.cost, 0);
		expect(s.baseline.summaries).toEqual({
			requests: 2,
			prompt: historyTokens + prefixTokens,
			output: 3_000,
			cost,
		});
		const turns = sim.rows.reduce((n, x) => n + (x.baseline?.cost ?? 0), 0);
		expect(s.baseline.cost).toBeCloseTo(turns + cost, 12);
		expect(s.baseline.prompt).toBe(
			sim.rows.reduce((n, x) => n + (x.baseline?.prompt ?? 0), 0) + historyTokens + prefixTokens,
		);
		expect(s.folded.summaries).toEqual({ requests: 0, prompt: 0, output: 0, cost: 0 });
	});

	test("the summary requests leave the conversation's cache as it was: every request's own bill is unchanged", () => {
		const r = replay();
		const sim = billReplay(r, billingModel("anthropic"));
		const without = billReplay(
			{ ...r, requests: r.requests.map((q) => ({ ...q, baseSummaries: [] })) },
			billingModel("anthropic"),
		);
		expect(sim.rows.map((x) => x.baseline)).toEqual(without.rows.map((x) => x.baseline));
		expect(sim.summary.baseline.cost - without.summary.baseline.cost).toBeCloseTo(
			sim.summary.baseline.summaries.cost,
			12,
		);
		expect(without.summary.baseline.summaries.requests).toBe(0);
	});

	test("keeping the recorded compactions (the content measure's default), nothing is billed for them", () => {
		const r = replaySession({
			entries: entries(),
			settings: DEFAULT_SETTINGS,
			windowFor: () => WINDOW,
			hash: sha256,
			parseTime: (s) => Date.parse(s),
		});
		expect(r.baseline).toBe("recorded");
		expect(r.requests.every((q) => q.baseSummaries.length === 0)).toBe(true);
		expect(billReplay(r, billingModel("anthropic")).summary.baseline.summaries.requests).toBe(0);
	});
});
