// The CLI reads a branch into the same state the extension keeps (BranchState), and its replay runs
// the extension's planFold: equal state, reproducible layers, deterministic and fast.
import { afterAll, describe, expect, test } from "bun:test";
import { copyFileSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { RECALL_CHURN as ADAPTER_CHURN } from "../../src/adapters/pi/runtime.ts";
import { BranchState, CUSTOM_TYPE } from "../../src/adapters/pi/state.ts";
import { RECALL_CHURN } from "../../src/cli/commands/status.ts";
import { billingModel } from "../../src/core/billing.ts";
import { branchPath, parseSessionText } from "../../src/core/session/entries.ts";
import { BranchReplay, FOLD_ENTRY_TYPE } from "../../src/core/session/replay.ts";
import type { PiEntry } from "../../src/core/session/view.ts";
import { DEFAULT_SETTINGS } from "../../src/core/settings.ts";
import { replaySession } from "../../src/core/simulate/replay.ts";
import { billReplay } from "../../src/core/simulate/summary.ts";
import { sha256Hex } from "../../src/store/originals.ts";
import { parseIsoTime } from "../../src/store/session-file.ts";
import { agentDir, TRACE, withFoldRecords } from "./helpers.ts";

const sandbox = agentDir();
afterAll(() => sandbox.cleanup());

function branchOf(path: string) {
	return branchPath(parseSessionText(readFileSync(path, "utf8")).entries);
}

function replayOf(path: string) {
	return replaySession({
		entries: branchOf(path),
		settings: DEFAULT_SETTINGS,
		windowFor: () => 200_000,
		hash: sha256Hex,
		parseTime: parseIsoTime,
	});
}

describe("BranchReplay equals the extension's BranchState", () => {
	test("the constants the CLI mirrors are the extension's", () => {
		expect(FOLD_ENTRY_TYPE).toBe(CUSTOM_TYPE);
		expect(RECALL_CHURN).toBe(ADAPTER_CHURN);
	});

	for (const name of ["largeV3", "compactV3", "largeV1"] as const) {
		test(`${name}, with fold records, an unfold and a bad record added`, () => {
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

describe("replay", () => {
	test("a session recorded with context-fold replays to the very same layers", () => {
		const path = join(sandbox.root, "recorded.jsonl");
		const written = withFoldRecords(TRACE.compactV3, path);
		const replay = replayOf(path);
		expect(written.layers).toBeGreaterThan(1);
		expect(replay.recordedLayers).toHaveLength(written.layers);
		expect(replay.layers).toEqual(replay.recordedLayers);
		const sim = billReplay(replay, billingModel("anthropic"));
		expect(sim.summary.recorded).toMatchObject({ layers: written.layers, identicalLayers: written.layers });
	});

	test("v1 and v3 of a trace replay to the same fold events and totals", () => {
		for (const [v1, v3] of [
			[TRACE.largeV1, TRACE.largeV3],
			[TRACE.compactV1, TRACE.compactV3],
		] as const) {
			const a = billReplay(replayOf(v1), billingModel("anthropic")).summary;
			const b = billReplay(replayOf(v3), billingModel("anthropic")).summary;
			expect(a).toEqual(b);
		}
	});

	test("the traces: the ladder fires as documented, and the same way every time", () => {
		for (const path of [TRACE.largeV3, TRACE.compactV3]) {
			const a = replayOf(path);
			const b = replayOf(path);
			expect(b.layers).toEqual(a.layers);
			const folds = a.requests.filter((r) => r.fold !== null);
			expect(folds.length).toBeGreaterThan(0);
			expect(folds[0]?.fold?.reason).toBe("threshold");
			for (const r of folds) {
				const f = r.fold as NonNullable<typeof r.fold>;
				expect(["threshold", "step", "budget"]).toContain(f.reason);
				// Armed (at or past the entry threshold) and it took something out.
				expect(f.usageBefore).toBeGreaterThanOrEqual(r.threshold ?? 0);
				expect(f.usageAfter).toBeLessThan(f.usageBefore);
			}
			// Never two events on consecutive requests, unless the second is a budget fold.
			for (let i = 1; i < folds.length; i++) {
				const gap = (folds[i]?.index ?? 0) - (folds[i - 1]?.index ?? 0);
				if (gap === 1) expect(folds[i]?.fold?.reason).toBe("budget");
			}
		}
	});

	// Its speed is test/bench/cli.ts's to measure: a timed assertion fails on a busy machine.
	test("a 484-request trace replays and bills every request", () => {
		const sim = billReplay(replayOf(TRACE.compactV3), billingModel("openai", "1h"));
		expect(sim.rows).toHaveLength(484);
	});
});
