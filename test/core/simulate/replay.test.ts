// The replay runs the extension's planFold over a recorded branch: a session recorded with
// context-fold replays to its own layers, v1 and v3 of a trace agree, and the ladder fires as
// documented, deterministically and fast.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { billingModel } from "../../../src/core/billing.ts";
import { branchPath, parseSessionText } from "../../../src/core/session/entries.ts";
import { DEFAULT_SETTINGS } from "../../../src/core/settings.ts";
import { replaySession } from "../../../src/core/simulate/replay.ts";
import { billReplay } from "../../../src/core/simulate/summary.ts";
import { sha256 } from "../../../src/store/hash.ts";
import { parseIsoTime } from "../../../src/store/session-file.ts";
import { TRACE, withFoldRecords } from "../../helpers/traces.ts";

const root = mkdtempSync(join(tmpdir(), "cf-replay-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function branchOf(path: string) {
	return branchPath(parseSessionText(readFileSync(path, "utf8")).entries);
}

function replayOf(path: string) {
	return replaySession({
		entries: branchOf(path),
		settings: DEFAULT_SETTINGS,
		windowFor: () => 200_000,
		hash: sha256,
		parseTime: parseIsoTime,
	});
}

describe("replay", () => {
	test("a session recorded with context-fold replays to the very same layers", () => {
		const path = join(root, "recorded.jsonl");
		const written = withFoldRecords(TRACE.compactV3, path);
		const replay = replayOf(path);
		expect(written.layers).toBeGreaterThan(1);
		expect(replay.recordedLayers).toHaveLength(written.layers);
		expect(replay.layers).toEqual(replay.recordedLayers);
		const sim = billReplay(replay, billingModel("anthropic"));
		expect(sim.summary.recorded).toMatchObject({ layers: written.layers, identicalLayers: written.layers });
	});

	test("the recall tools, as the extension declares them: from the request after a plan wants them, which folds on a rewrite it pays anyway", () => {
		const replay = replayOf(TRACE.largeV3);
		const first = replay.requests.findIndex((r) => r.toolsDeclared);
		const firstFold = replay.requests.findIndex((r) => r.fold !== null);
		expect(first).toBeGreaterThan(0);
		// Declared one request before the first digest goes out, never after one.
		expect(firstFold).toBe(first);
		expect(replay.requests.slice(0, first).every((r) => !r.toolsDeclared && r.fold === null)).toBe(true);
		expect(replay.requests.slice(first).every((r) => r.toolsDeclared)).toBe(true);
		// The fixed prefix grows by the tools at that request, so the biller reads nothing from cache there.
		const sim = billReplay(replay, billingModel("anthropic"));
		expect(sim.rows[first]?.folded?.cacheRead).toBe(0);
		expect(sim.rows[first + 1]?.folded?.cacheRead).toBeGreaterThan(0);
		// Under the fixed ladder every request carries them.
		const pinned = replaySession({
			entries: branchOf(TRACE.largeV3),
			settings: { ...DEFAULT_SETTINGS, fixedFolds: true },
			windowFor: () => 200_000,
			hash: sha256,
			parseTime: parseIsoTime,
		});
		expect(pinned.requests.every((r) => r.toolsDeclared)).toBe(true);
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
			// The first event arms the ladder at the entry threshold; later ones need only a step of mass.
			expect(folds[0]?.fold?.usageBefore).toBeGreaterThanOrEqual(folds[0]?.threshold ?? 0);
			for (const r of folds) {
				const f = r.fold as NonNullable<typeof r.fold>;
				expect(["threshold", "step", "budget"]).toContain(f.reason);
				// It took something out.
				expect(f.usageAfter).toBeLessThan(f.usageBefore);
			}
			// Never two events on consecutive requests, unless the second is a budget fold.
			for (let i = 1; i < folds.length; i++) {
				const gap = (folds[i]?.index ?? 0) - (folds[i - 1]?.index ?? 0);
				if (gap === 1) expect(folds[i]?.fold?.reason).toBe("budget");
			}
		}
	});

	// How fast it runs is measured by the benchmarks (npm run bench), never asserted in a test.
	test("a 484-request trace replays and bills every request", () => {
		const sim = billReplay(replayOf(TRACE.compactV3), billingModel("openai", "1h"));
		expect(sim.rows).toHaveLength(484);
	});
});
