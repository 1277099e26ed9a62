// When the recall tools are declared (src/adapters/pi/recall-declaration.ts), against a stand-in for Pi's tool API:
// what reconcile and declare do to the active set, what they record, and how they fail. The e2e side
// (real Pi, both versions) is test/e2e/lazy-tools.test.ts.
import { describe, expect, test } from "bun:test";
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import {
	branchDeclaresTools,
	declarationRebuildsPrefix,
	RecallDeclaration,
	type ToolsApi,
	userSelectsRecallTools,
} from "../../../src/adapters/pi/recall-declaration.ts";
import { registerTools } from "../../../src/adapters/pi/tools.ts";
import { TOOLS_ENTRY_TYPE } from "../../../src/core/recall-tools.ts";

const OURS = ["recall_folded", "unfold"];

/** Pi's tool API in miniature: registered tools (ours with our own schemas), an active list, appended entries. */
function fakePi(options: { active: string[]; registerOurs?: boolean; filter?: (name: string) => boolean }) {
	const registered: Array<{ name: string; parameters?: unknown }> = [
		{ name: "read" },
		{ name: "bash" },
		{ name: "other_ext" },
	];
	if (options.registerOurs !== false) {
		const capture = {
			registerTool: (t: { name: string; parameters: unknown }) =>
				registered.push({ name: t.name, parameters: t.parameters }),
		} as unknown as ExtensionAPI;
		registerTools(capture, { sources: () => ({}) as never, recallTokens: () => 1, commitUnfold: () => {} });
	}
	const state = {
		active: [...options.active],
		sets: [] as string[][],
		entries: [] as Array<{ customType: string; data: unknown }>,
	};
	const api: ToolsApi = {
		getActiveTools: () => [...state.active],
		setActiveTools: (names) => {
			state.sets.push([...names]);
			// Like Pi: unknown names are ignored.
			state.active = names.filter((n) => registered.some((t) => t.name === n) && (options.filter?.(n) ?? true));
		},
		getAllTools: () => registered,
		appendEntry: (customType, data) => state.entries.push({ customType, data }),
	};
	return { api, state };
}

const legacy = { model: { api: "openai-completions" }, sessionManager: {} };
const message = (role: string, extra: Record<string, unknown> = {}) => ({
	type: "message",
	message: { role, ...extra },
});
const note = { type: "custom", customType: TOOLS_ENTRY_TYPE, data: { v: 1, declared: true } };
const answer = message("assistant", { stopReason: "stop" });

describe("who chose the recall tools", () => {
	test("a --tools (-t) list that names one of them, as a name or a +modifier", () => {
		expect(userSelectsRecallTools(["pi", "--tools", "read,recall_folded"], true, undefined)).toBe(true);
		expect(userSelectsRecallTools(["pi", "-t", " read , unfold "], true, undefined)).toBe(true);
		expect(userSelectsRecallTools(["pi", "--tools", "+recall_folded"], true, undefined)).toBe(true);
	});
	test("an allowlist they passed (registered) is a choice; only modifiers, no flag, or a removal is not", () => {
		expect(userSelectsRecallTools(["pi", "--tools", "*"], true, undefined)).toBe(true);
		expect(userSelectsRecallTools(["pi", "--tools", "read,bash"], false, undefined)).toBe(false);
		expect(userSelectsRecallTools(["pi", "--tools", "+grep,-bash"], true, undefined)).toBe(false);
		expect(userSelectsRecallTools(["pi", "--tools", "-unfold"], true, undefined)).toBe(false);
		expect(userSelectsRecallTools(["pi", "-p", "--tools"], true, undefined)).toBe(false);
		expect(userSelectsRecallTools(["pi", "-p", "hello"], true, undefined)).toBe(false);
	});
	test("Pi 1.6.0's defaultTools setting naming them", () => {
		expect(userSelectsRecallTools([], true, { defaultTools: ["read", "unfold"] })).toBe(true);
		expect(userSelectsRecallTools([], true, { defaultTools: ["read"] })).toBe(false);
		expect(userSelectsRecallTools([], true, { defaultTools: "unfold" })).toBe(false);
	});
});

describe("what the branch's requests were sent with", () => {
	test("the note, a layer, or a 1.6.0 transcript that added recall_folded and did not remove it", () => {
		expect(branchDeclaresTools([message("user"), note], 0)).toBe("note");
		expect(branchDeclaresTools([note], 2)).toBe("note");
		expect(branchDeclaresTools([message("user")], 1)).toBe("layer");
		const added = message("system", { toolsAdded: [{ name: "read" }, { name: "recall_folded" }] });
		const removed = message("system", { toolsRemoved: [{ name: "recall_folded" }] });
		expect(branchDeclaresTools([added, message("user")], 0)).toBe("transcript");
		expect(branchDeclaresTools([added, removed], 0)).toBeNull();
		expect(branchDeclaresTools([message("system", { toolsAdded: "junk" }), message("user")], 0)).toBeNull();
		expect(branchDeclaresTools([], 0)).toBeNull();
	});
});

describe("whether declaring rewrites the whole prefix", () => {
	const v16 = { buildSessionProjection: () => ({}) };
	const both = { supportsMidConvoToolChanges: true, supportsMidConvoSystemMessages: true };
	test("Pi 0.80.6 (no transcript system messages): always", () => {
		expect(declarationRebuildsPrefix({ model: { api: "anthropic-messages", compat: both }, sessionManager: {} })).toBe(
			true,
		);
	});
	test("Pi 1.6.0: only an Anthropic Messages model that takes mid-conversation tool changes and system messages keeps it", () => {
		expect(declarationRebuildsPrefix({ model: { api: "anthropic-messages", compat: both }, sessionManager: v16 })).toBe(
			false,
		);
		for (const compat of [{ supportsMidConvoToolChanges: true }, { supportsMidConvoSystemMessages: true }, undefined])
			expect(declarationRebuildsPrefix({ model: { api: "anthropic-messages", compat }, sessionManager: v16 })).toBe(
				true,
			);
		expect(declarationRebuildsPrefix({ model: { api: "openai-completions", compat: both }, sessionManager: v16 })).toBe(
			true,
		);
		expect(declarationRebuildsPrefix({ model: undefined, sessionManager: v16 })).toBe(true);
	});
});

describe("reconcile: the active set as the branch was sent", () => {
	test("lazy, nothing on the branch: ours taken out, every other tool kept in its order", () => {
		const { api, state } = fakePi({ active: ["read", "recall_folded", "bash", "unfold", "other_ext"] });
		new RecallDeclaration(api).reconcile(legacy, [message("user")], 0, false);
		expect(state.active).toEqual(["read", "bash", "other_ext"]);
	});
	test("lazy with the note: ours last (where the declaration put them); the unanswered declaration makes the next request cold", () => {
		const { api, state } = fakePi({ active: ["read", "recall_folded", "unfold", "other_ext"] });
		const d = new RecallDeclaration(api);
		// The declaring request's own answer came back; no request has carried the tools yet.
		d.reconcile(legacy, [message("user"), note, answer], 0, false);
		expect(state.active).toEqual(["read", "other_ext", "recall_folded", "unfold"]);
		expect(d.live()).toBe(true);
		expect(d.takeFresh()).toBe(true);
		expect(d.takeFresh()).toBe(false);
		// Two answers after the note: a request already carried them.
		d.reconcile(legacy, [message("user"), note, answer, message("toolResult"), answer], 0, false);
		expect(d.takeFresh()).toBe(false);
	});
	test("lazy with a layer but no note (declared eagerly before): Pi's order is kept, missing ones appended", () => {
		const { api, state } = fakePi({ active: ["read", "recall_folded", "unfold", "other_ext"] });
		new RecallDeclaration(api).reconcile(legacy, [message("user")], 1, false);
		expect(state.sets).toEqual([]);
		const partly = fakePi({ active: ["read", "unfold", "other_ext"] });
		new RecallDeclaration(partly.api).reconcile(legacy, [message("user")], 1, false);
		expect(partly.state.active).toEqual(["read", "unfold", "other_ext", "recall_folded"]);
	});
	test("eager: declared, no reorder, nothing recorded; an unchanged set is not set again", () => {
		const { api, state } = fakePi({ active: ["read", "recall_folded", "unfold", "other_ext"] });
		new RecallDeclaration(api).reconcile(legacy, [], 0, true);
		expect(state.sets).toEqual([]);
		expect(state.entries).toEqual([]);
	});
	test("a throwing API leaves the set alone and the instance usable", () => {
		const { api } = fakePi({ active: ["read"] });
		const broken = {
			...api,
			getActiveTools: () => {
				throw new Error("no session");
			},
		};
		const d = new RecallDeclaration(broken);
		expect(() => d.reconcile(legacy, [], 0, false)).not.toThrow();
		expect(d.live()).toBe(false);
	});
});

describe("declare: for the next request, on record", () => {
	test("adds ours to the active set, keeps the others, appends the note, and the next live request is cold", () => {
		const { api, state } = fakePi({ active: ["read", "other_ext"] });
		const d = new RecallDeclaration(api);
		expect(d.live()).toBe(false);
		expect(d.declare(legacy)).toBe(true);
		expect(state.active).toEqual(["read", "other_ext", ...OURS]);
		expect(state.entries).toEqual([{ customType: TOOLS_ENTRY_TYPE, data: { v: 1, declared: true } }]);
		expect(d.live()).toBe(true);
		expect(d.takeFresh()).toBe(true);
	});
	test("a declaration that keeps the prefix (mid-conversation tool changes) does not make the next request cold", () => {
		const { api } = fakePi({ active: ["read"] });
		const d = new RecallDeclaration(api);
		const target = {
			model: {
				api: "anthropic-messages",
				compat: { supportsMidConvoToolChanges: true, supportsMidConvoSystemMessages: true },
			},
			sessionManager: { buildSessionProjection: () => ({}) },
		};
		expect(d.declare(target)).toBe(true);
		expect(d.takeFresh()).toBe(false);
	});
	test("fails, recording nothing, when ours are not registered, another extension owns the names, Pi filters them, it throws, or the fault seam says so", () => {
		const unregistered = fakePi({ active: ["read"], registerOurs: false });
		expect(new RecallDeclaration(unregistered.api).declare(legacy)).toBe(false);
		expect(unregistered.state.sets).toEqual([]);

		const foreign = fakePi({ active: ["read"], registerOurs: false });
		const foreignApi = {
			...foreign.api,
			getAllTools: () => [
				{ name: "recall_folded", parameters: {} },
				{ name: "unfold", parameters: {} },
			],
		};
		expect(new RecallDeclaration(foreignApi).declare(legacy)).toBe(false);

		const filtered = fakePi({ active: ["read"], filter: (n) => n !== "unfold" });
		expect(new RecallDeclaration(filtered.api).declare(legacy)).toBe(false);
		expect(filtered.state.entries).toEqual([]);

		const throwing = fakePi({ active: ["read"] });
		const throwingApi = {
			...throwing.api,
			setActiveTools: () => {
				throw new Error("busy");
			},
		};
		expect(new RecallDeclaration(throwingApi).declare(legacy)).toBe(false);
		expect(throwing.state.entries).toEqual([]);

		const faulted = fakePi({ active: ["read"] });
		expect(new RecallDeclaration(faulted.api).declare(legacy, "tools")).toBe(false);
		expect(faulted.state.active).toEqual(["read"]);
		expect(faulted.state.entries).toEqual([]);
	});
});
