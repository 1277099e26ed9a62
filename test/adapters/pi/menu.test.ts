// The /context-fold command against a stand-in Pi: what a retained-images discard and the shortcuts say.
import { describe, expect, test } from "bun:test";
import type { ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent";
import { registerMenu } from "../../../src/adapters/pi/menu.ts";
import { Runtime } from "../../../src/adapters/pi/runtime.ts";

interface Command {
	handler: (args: string, ctx: ExtensionContext) => Promise<void>;
	getArgumentCompletions?: (prefix: string) => Array<{ value: string }> | null;
}

function setup(answers: Array<string | undefined> = []) {
	let command: Command | undefined;
	const pi = {
		registerCommand: (_name: string, options: Command) => {
			command = options;
		},
	} as unknown as ExtensionAPI;
	const rt = new Runtime(pi, {});
	registerMenu(pi, rt);
	const notes: string[] = [];
	const selects: string[][] = [];
	const ctx = {
		hasUI: true,
		ui: {
			notify: (message: string) => notes.push(message),
			select: async (_title: string, options: string[]) => {
				selects.push(options);
				return answers.shift();
			},
		},
	} as unknown as ExtensionContext;
	if (!command) throw new Error("no command registered");
	return { rt, ctx, notes, selects, command };
}

describe("/context-fold", () => {
	test("discard-images empties the runtime's retained images and counts them", async () => {
		const { rt, ctx, notes, command } = setup();
		const kept = [{ type: "image" }, { type: "image" }];
		rt.retainedImages = kept;
		await command.handler("discard-images", ctx);
		expect(rt.retainedImages).toEqual([]);
		// The old array is left alone: whoever holds it still owns what it had.
		expect(kept).toHaveLength(2);
		await command.handler(" Discard-Images ", ctx);
		expect(notes).toEqual(["context-fold: Discarded 2 retained image(s).", "context-fold: No retained images."]);
	});
	test("the menu item does the same, then closes", async () => {
		const { rt, ctx, notes, selects, command } = setup(["Discard retained images"]);
		rt.retainedImages = [{ type: "image" }];
		await command.handler("", ctx);
		expect(selects).toEqual([["Status", "Settings", "Discard retained images", "Close"]]);
		expect(notes).toEqual(["context-fold: Discarded 1 retained image(s)."]);
	});
	test("argument completions offer the shortcuts by prefix", () => {
		const { command } = setup();
		expect(command.getArgumentCompletions?.("")?.map((i) => i.value)).toEqual([
			"status",
			"config",
			"settings",
			"discard-images",
		]);
		expect(command.getArgumentCompletions?.("s")?.map((i) => i.value)).toEqual(["status", "settings"]);
		expect(command.getArgumentCompletions?.("x")).toBeNull();
	});
});
