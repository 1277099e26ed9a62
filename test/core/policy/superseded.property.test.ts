/**
 * Superseded and duplicate blocks over random branches (a few files, the built-in tools, repeated
 * outputs, failures, truncated and partial reads, calls still in the tool loop): findStaleBlocks
 * reports exactly the blocks the rules of issue 13 name, each with the newest later call that makes
 * it stale, and nothing else. The rules are restated below directly from the issue, as an oracle.
 */
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { findStaleBlocks, type ToolEvent } from "../../../src/core/policy/superseded.ts";

const RUNS = Number(process.env.CF_FUZZ_RUNS ?? 300);

const path = fc.constantFrom("a.ts", "b.ts", "c.ts");
const out = fc.constantFrom("one", "two", "one\n", "");
const callArb = fc.oneof(
	fc.record({
		tool: fc.constant("read"),
		args: fc.record({
			path,
			offset: fc.constantFrom(undefined, undefined, 1, 50),
			limit: fc.constantFrom(undefined, undefined, 20),
		}),
	}),
	fc.record({
		tool: fc.constant("edit"),
		args: fc.record({ path, oldText: fc.constantFrom("x", "y"), newText: fc.constant("z") }),
	}),
	fc.record({ tool: fc.constant("write"), args: fc.record({ path, content: fc.constantFrom("c1", "c2") }) }),
	fc.record({ tool: fc.constant("bash"), args: fc.record({ command: fc.constantFrom("ls", "make") }) }),
	fc.record({ tool: fc.constant("grep"), args: fc.record({ pattern: fc.constant("x"), path }) }),
);
const eventArb = fc.record({
	call: callArb,
	result: fc.option(fc.record({ text: out, isError: fc.boolean(), truncated: fc.boolean() }), {
		nil: undefined,
		freq: 6,
	}),
	settled: fc.boolean(),
});

type RawEvent = typeof eventArb extends fc.Arbitrary<infer T> ? T : never;
const branchArb = fc.array(eventArb, { minLength: 2, maxLength: 14, size: "large" });

function build(raw: RawEvent[]): ToolEvent[] {
	return raw.map((r, i) => {
		// Drop undefined optional arguments, as JSON arguments never carry them.
		const args = JSON.parse(JSON.stringify(r.call.args)) as Record<string, unknown>;
		return {
			toolCallId: `call_${i}`,
			toolName: r.call.tool,
			args,
			callEntryId: `a${i}`,
			callBlockIndex: 0,
			...(r.result !== undefined && {
				result: {
					entryId: `r${i}`,
					text: r.result.text,
					isError: r.result.isError,
					truncated: r.call.tool === "read" && r.result.truncated,
				},
			}),
			settled: r.settled,
		};
	});
}

// ---- The rules, restated from the issue ----
const ok = (e: ToolEvent) => e.result !== undefined && !e.result.isError;
const pathOf = (e: ToolEvent) => (e.args as { path?: string }).path;
const samePath = (a: ToolEvent, b: ToolEvent) => pathOf(a) !== undefined && pathOf(a) === pathOf(b);
const sortedJson = (v: unknown): string =>
	JSON.stringify(v, (_k, x) =>
		x && typeof x === "object" && !Array.isArray(x) ? Object.fromEntries(Object.entries(x).sort()) : x,
	);
function readInFull(e: ToolEvent): boolean {
	const a = e.args as { offset?: number; limit?: number };
	return (
		e.toolName === "read" && ok(e) && a.offset === undefined && a.limit === undefined && e.result?.truncated !== true
	);
}
/** A read of a file later read again in full, or changed by edit or write. */
const readSuperseded = (e: ToolEvent, l: ToolEvent) =>
	e.toolName === "read" &&
	samePath(e, l) &&
	(readInFull(l) || ((l.toolName === "edit" || l.toolName === "write") && ok(l)));
/** A failed call followed by a successful call of the same tool on the same path. */
const failureSuperseded = (e: ToolEvent, l: ToolEvent) =>
	e.result?.isError === true && l.toolName === e.toolName && samePath(e, l) && ok(l);
/** A tool result byte-identical to a later one from the same tool with the same arguments. */
const duplicate = (e: ToolEvent, l: ToolEvent) =>
	e.result !== undefined &&
	l.result !== undefined &&
	l.toolName === e.toolName &&
	sortedJson(l.args) === sortedJson(e.args) &&
	l.result.text === e.result.text;
/** The input of a write to a file later read back or written again. */
const writeSuperseded = (e: ToolEvent, l: ToolEvent) =>
	e.toolName === "write" && samePath(e, l) && ok(l) && (l.toolName === "read" || l.toolName === "write");

function oracle(events: ToolEvent[]): string[] {
	const found: string[] = [];
	events.forEach((e, i) => {
		if (!e.settled) return;
		const later = events.slice(i + 1);
		if (e.result !== undefined) {
			const j = later.findLastIndex((l) => readSuperseded(e, l) || failureSuperseded(e, l) || duplicate(e, l));
			const l = later[j];
			if (l !== undefined) {
				const kind = readSuperseded(e, l) || failureSuperseded(e, l) ? "superseded" : "duplicate";
				found.push(`result ${e.toolCallId} ${kind} by ${l.toolCallId}`);
			}
		}
		const l = later.findLast((x) => writeSuperseded(e, x) || failureSuperseded(e, x));
		if (l !== undefined) found.push(`input ${e.toolCallId} superseded by ${l.toolCallId}`);
	});
	return found;
}

function actual(events: ToolEvent[]): string[] {
	return findStaleBlocks({ events }).map((b) => `${b.block} ${b.toolCallId} ${b.kind} by ${b.byToolCallId}`);
}

describe("superseded and duplicate blocks (property)", () => {
	test("exactly the blocks the rules name, each with the newest later call that makes it stale", () => {
		let fired = 0;
		fc.assert(
			fc.property(branchArb, (raw) => {
				const events = build(raw);
				const expected = oracle(events);
				expect(actual(events)).toEqual(expected);
				fired += expected.length;
			}),
			{ numRuns: RUNS },
		);
		// The generator must make the rules fire often, or the equality above proves little. Over 1,000
		// seeds of 300 runs each, the blocks found per run ranged from 0.45 to 0.83 (median 0.63): a
		// bound of 1/2 failed about one seed in a hundred (CI did), so the bound is 1/4, well below.
		expect(fired).toBeGreaterThan(RUNS / 4);
	});

	test("every rule fires somewhere in the runs", () => {
		const seen = new Set<string>();
		fc.assert(
			fc.property(branchArb, (raw) => {
				const events = build(raw);
				for (const b of findStaleBlocks({ events })) {
					const e = events.find((x) => x.toolCallId === b.toolCallId) as ToolEvent;
					seen.add(`${b.block}:${b.kind}:${e.toolName}${e.result?.isError ? ":failed" : ""}`);
				}
			}),
			// Four times the runs. Each kind below shows up in 2.6 (a duplicate bash result) to 8.2 runs in a
			// hundred, so at 300 runs the rarest was seen only 1 to 19 times (median 8, 1,000 seeds) and went
			// unseen about 1 seed in 2,000; at 1,200 runs it was seen 15 to 52 times (median 33), and a kind
			// goes unseen in fewer than 1 seed in 10^13.
			{ numRuns: 4 * RUNS },
		);
		for (const kind of [
			"result:superseded:read",
			"result:duplicate:bash",
			"result:superseded:edit:failed",
			"input:superseded:write",
			"input:superseded:edit:failed",
		])
			expect(seen.has(kind)).toBe(true);
	});

	test("reason text names the later call; unsettled calls never appear; an unrelated call changes nothing", () => {
		fc.assert(
			fc.property(branchArb, (raw) => {
				const events = build(raw);
				const blocks = findStaleBlocks({ events });
				for (const b of blocks) {
					expect(b.reason.startsWith(b.kind === "duplicate" ? "same as " : "superseded by ")).toBe(true);
					expect(b.reason.endsWith(`(${b.byToolCallId})`)).toBe(true);
					expect(events.find((e) => e.toolCallId === b.toolCallId)?.settled).toBe(true);
				}
				const unrelated: ToolEvent = {
					toolCallId: "call_x",
					toolName: "ls",
					args: { path: "elsewhere" },
					callEntryId: "ax",
					callBlockIndex: 0,
					result: { entryId: "rx", text: "one", isError: false },
					settled: true,
				};
				expect(findStaleBlocks({ events: [...events, unrelated] })).toEqual(blocks);
				expect(findStaleBlocks({ events: JSON.parse(JSON.stringify(events)) })).toEqual(blocks);
			}),
			{ numRuns: RUNS },
		);
	});
});
