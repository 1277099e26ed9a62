/**
 * MessageIndex finds a message's entry by role, timestamp and tool call id without building a key
 * string. It must answer exactly what a map keyed by `role|timestamp|toolCallId` would: the one entry
 * with that key, null for a key two entries share, null for an unknown key.
 */
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { MessageIndex } from "../../../src/core/session/message-index.ts";

const RUNS = Number(process.env.CF_FUZZ_RUNS ?? 300);

/** The reference: the string key the index replaced. */
function stringKey(m: { role: unknown; timestamp?: unknown; toolCallId?: unknown }): string {
	return `${m.role}|${typeof m.timestamp === "number" ? m.timestamp : "?"}|${m.toolCallId ?? ""}`;
}

const message = fc.record(
	{
		role: fc.constantFrom("user", "assistant", "toolResult", "custom", "bashExecution"),
		timestamp: fc.oneof(
			fc.constantFrom(0, -0, 1, 1_700_000_000_000, 1_700_000_000_001, Number.NaN, 1.5),
			fc.constant(undefined),
			fc.constant("1700000000000"),
		),
		toolCallId: fc.oneof(fc.constant(undefined), fc.constant(null), fc.constantFrom("", "call_1", "call_2")),
	},
	{ requiredKeys: ["role"] },
);

describe("MessageIndex", () => {
	test("answers exactly as a map by the string key (unique, shared, unknown)", () => {
		fc.assert(
			fc.property(fc.array(message, { maxLength: 30 }), fc.array(message, { maxLength: 10 }), (held, asked) => {
				const index = new MessageIndex();
				const reference = new Map<string, string | null>();
				held.forEach((m, i) => {
					index.add(m, `e${i}`);
					const key = stringKey(m);
					reference.set(key, reference.has(key) ? null : `e${i}`);
				});
				expect(index.size).toBe(reference.size);
				for (const m of [...held, ...asked]) expect(index.get(m)).toBe(reference.get(stringKey(m)) ?? null);
			}),
			{ numRuns: RUNS },
		);
	});

	test("the cases by hand", () => {
		const index = new MessageIndex();
		index.add({ role: "assistant", timestamp: 5 }, "a");
		index.add({ role: "toolResult", timestamp: 5, toolCallId: "c1" }, "r1");
		index.add({ role: "toolResult", timestamp: 5, toolCallId: "c2" }, "r2");
		index.add({ role: "user", timestamp: 7 }, "u1");
		index.add({ role: "user", timestamp: 7 }, "u2");
		index.add({ role: "custom" }, "x");
		expect(index.get({ role: "assistant", timestamp: 5 })).toBe("a");
		expect(index.get({ role: "toolResult", timestamp: 5, toolCallId: "c2" })).toBe("r2");
		// Two entries share the key: never mask either.
		expect(index.get({ role: "user", timestamp: 7 })).toBeNull();
		// No numeric timestamp: the key is "?".
		expect(index.get({ role: "custom", timestamp: undefined })).toBe("x");
		expect(index.get({ role: "assistant", timestamp: 6 })).toBeNull();
		expect(index.get({ role: "toolResult", timestamp: 5 })).toBeNull();
		expect(index.size).toBe(5);
	});
});
