// Which messages a fold record indexes: its masked blocks, the calls that produced them, and the user
// messages since the previous fold, by one rule that the extension and simulate share.
import { describe, expect, test } from "bun:test";
import type { ViewMessage } from "../../../src/core/blocks.ts";
import { FOLD_STATE_VERSION, type FrozenLayer } from "../../../src/core/layers.ts";
import { pickFoldMessages, userMessagesSince } from "../../../src/core/seed/pick.ts";

const user = (id: string, t: number, text: string): ViewMessage => ({
	role: "user",
	entryId: id,
	timestamp: t,
	blocks: [{ kind: "text", text }],
});
const reply = (id: string, t: number): ViewMessage => ({
	role: "assistant",
	entryId: id,
	timestamp: t,
	blocks: [{ kind: "text", text: "ok" }],
	stopReason: "stop",
});

function layer(seq: number, lastResponseAt: number): FrozenLayer {
	return {
		type: "layer",
		v: FOLD_STATE_VERSION,
		seq,
		reason: "threshold",
		lastResponseAt,
		usageBefore: 10,
		usageAfter: 5,
		blocks: [],
	};
}

/** Prompt 1 (t=100), reply (200); prompt 2 (300) is the request that folded (layer 1, newest reply 200),
 * answered at 400; prompt 3 (500), reply (600); prompt 4 (700) is the request of the second fold. */
const VIEW: ViewMessage[] = [
	user("u1", 100, "first prompt"),
	reply("a1", 200),
	user("u2", 300, "prompt of the first fold's request"),
	reply("a2", 400),
	user("u3", 500, "third prompt"),
	reply("a3", 600),
	user("u4", 700, "prompt of the second fold's request"),
];
const users = (picked: ViewMessage[]) => picked.filter((v) => v.role === "user").map((v) => v.entryId);

describe("a fold record's user messages", () => {
	test("the first fold indexes every user message in its request", () => {
		expect(users(pickFoldMessages(layer(1, 200), undefined, VIEW.slice(0, 3)).view)).toEqual(["u1", "u2"]);
	});

	test("the next fold indexes only those sent after the first fold's request was answered: none twice", () => {
		const first = layer(1, 200);
		const second = layer(2, 600);
		expect(userMessagesSince(first, VIEW)).toBe(400);
		// u2 was in the first fold's request (its record has it); the second record starts after a2.
		expect(users(pickFoldMessages(second, first, VIEW).view)).toEqual(["u3", "u4"]);
	});

	test("every user message is indexed exactly once over a session's folds", () => {
		const first = layer(1, 200);
		const second = layer(2, 600);
		const once = [
			...users(pickFoldMessages(first, undefined, VIEW.slice(0, 3)).view),
			...users(pickFoldMessages(second, first, VIEW).view),
		];
		expect(once).toEqual(["u1", "u2", "u3", "u4"]);
	});

	test("with no response after the previous fold in view (compacted away), its newest response is the bound", () => {
		expect(userMessagesSince(layer(1, 650), VIEW)).toBe(650);
	});
});
