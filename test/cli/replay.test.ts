// The CLI reads a branch into the same state the extension keeps (BranchState): equal state and the
// same constants. (The replay's own tests are in test/core/simulate/replay.test.ts.)
import { afterAll, describe, expect, test } from "bun:test";
import { copyFileSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { RECALL_CHURN as ADAPTER_CHURN } from "../../src/adapters/pi/runtime.ts";
import { BranchState, CUSTOM_TYPE } from "../../src/adapters/pi/state.ts";
import { RECALL_CHURN } from "../../src/cli/commands/status.ts";
import { branchPath, parseSessionText } from "../../src/core/session/entries.ts";
import { BranchReplay, FOLD_ENTRY_TYPE } from "../../src/core/session/replay.ts";
import type { PiEntry } from "../../src/core/session/view.ts";
import { parseIsoTime } from "../../src/store/session-file.ts";
import { agentDir, HAVE_TRACES, TRACE, withFoldRecords } from "./helpers.ts";

const sandbox = agentDir();
afterAll(() => sandbox.cleanup());

function branchOf(path: string) {
	return branchPath(parseSessionText(readFileSync(path, "utf8")).entries);
}

describe("BranchReplay equals the extension's BranchState", () => {
	test("the constants the CLI mirrors are the extension's", () => {
		expect(FOLD_ENTRY_TYPE).toBe(CUSTOM_TYPE);
		expect(RECALL_CHURN).toBe(ADAPTER_CHURN);
	});

	for (const name of ["largeV3", "compactV3", "largeV1"] as const) {
		test.skipIf(!HAVE_TRACES)(`${name}, with fold records, an unfold and a bad record added`, () => {
			const path = join(sandbox.root, `${name}.jsonl`);
			if (name === "largeV1") {
				// v1 cannot carry fold records (Pi migrates a file before anything appends to it).
				copyFileSync(TRACE[name], path);
			} else {
				withFoldRecords(TRACE[name], path);
			}
			const branch = branchOf(path);
			const firstLayer = branch.find((e) => e.type === "custom")?.data as
				| { blocks: Array<{ code: string }> }
				| undefined;
			const unfoldCodes: string[] = firstLayer?.blocks[0] !== undefined ? [firstLayer.blocks[0].code] : [];
			const extras: PiEntry[] =
				name === "largeV1"
					? []
					: [
							{
								type: "custom",
								customType: CUSTOM_TYPE,
								id: "u1",
								parentId: "x",
								data: { type: "unfold", v: 1, codes: unfoldCodes },
							},
							{ type: "custom", customType: CUSTOM_TYPE, id: "u2", parentId: "u1", data: { type: "layer", v: 99 } },
						];
			const all = [...branch, ...extras];
			const state = new BranchState();
			state.sync(all);
			const replay = new BranchReplay(parseIsoTime);
			for (const e of all) replay.consume(e);
			expect(replay.accounting()).toEqual(state.accounting());
			expect(replay.everCacheRead).toBe(state.everCacheRead);
			expect(replay.lastResponseAt).toBe(state.lastResponseAt);
			expect(replay.invalidRecords).toBe(state.invalidRecords);
			expect(replay.index.layers).toEqual(state.index.layers);
			expect([...replay.index.byKey.keys()]).toEqual([...state.index.byKey.keys()]);
			expect([...replay.index.unfolded]).toEqual([...state.index.unfolded]);
			for (const e of all) {
				if (e.type === "message" && e.message) expect(replay.lookup(e.message)).toBe(state.lookup(e.message));
			}
			if (name !== "largeV1") {
				expect(replay.index.layers.length).toBeGreaterThan(0);
				expect(replay.invalidRecords).toBe(1);
			}
		});
	}
});
