// `simulate` against what real Pi did: a scripted session runs through real Pi (0.80.6 and 1.6.0)
// with context-fold on the offline fake model, which reports prompt-cache usage the Anthropic way.
// The replay of that session file must commit the very layers the extension committed, and its
// prompt-token totals must be within 5 % of what the fake recorded; its no-folding arm must be
// within 5 % of the same script run without the extension. Both fold rules: the priced one users get,
// and the fixed ladder (fold points pinned by hand; here the test seam, which the CLI reads too).
import { afterEach, beforeAll, describe, expect, test } from "bun:test";
import { bigOutputCommand, ensureBundle } from "../e2e/cf.ts";
import {
	bash,
	expectSuccess,
	forEachPiVersion,
	type RecordedRequest,
	replySequence,
	runPrint,
	type Scenario,
	startScenario,
	text,
} from "../e2e/harness/index.ts";
import { memIo, runCli } from "./helpers.ts";

const TIMEOUT = 180_000;
const TURNS = 24;
let bundle = "";
beforeAll(() => {
	bundle = ensureBundle();
});

const scenarios: Scenario[] = [];
afterEach(async () => {
	for (const s of scenarios.splice(0)) await s.dispose();
});

/** A tool loop of bash calls with outputs of varying size, then an answer. */
function script() {
	const replies = [];
	for (let i = 0; i < TURNS; i++)
		replies.push(bash(bigOutputCommand(`s${i}`, 1200 + ((i * 7) % 5) * 700), `call_s${i}`));
	replies.push(text("all done"));
	return replySequence(replies);
}

type FoldRuleOption = "priced" | "fixed";

async function run(
	version: typeof import("../e2e/harness/index.ts")["PI_VERSIONS"][number],
	withExtension: boolean,
	foldRule: FoldRuleOption,
) {
	const s = await startScenario({
		fake: { script: script() },
		model: { contextWindow: 40_000 },
		compaction: { enabled: false },
		foldRule,
	});
	scenarios.push(s);
	expectSuccess(
		await runPrint({
			version,
			sandbox: s.sandbox,
			prompt: "run the checks",
			...(withExtension ? { extensions: [bundle] } : { noExtensions: true }),
		}),
	);
	return s;
}

function promptOf(r: RecordedRequest): number {
	const u = r.reportedUsage;
	return u === undefined ? 0 : u.input + u.cacheRead + u.cacheWrite;
}

const sum = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0);

forEachPiVersion((version) => {
	describe(`pi ${version}: simulate agrees with what real Pi did`, () => {
		test.each(["priced", "fixed"] as const)(
			"%s rule: same fold events as the extension, prompt totals within 5 % of the fake's, both arms",
			async (foldRule) => {
				const folded = await run(version, true, foldRule);
				const plain = await run(version, false, foldRule);
				const file = folded.sandbox.latestSessionFile();
				// The sandbox's models.json gives the window (40k), as Pi had it; its environment, the rule.
				const r = await runCli(
					["simulate", "--json", file],
					memIo({ env: { ...folded.sandbox.env, PI_CODING_AGENT_DIR: folded.sandbox.agentDir } }),
				);
				expect(r.stderr).toBe("");
				const sim = JSON.parse(r.stdout).sessions[0];
				expect(sim.window).toBe(40_000);
				expect(sim.windowSource).toBe("from models.json");

				const turns = folded.fake.turnRequests();
				expect(turns).toHaveLength(TURNS + 1);
				expect(sim.summary.requests).toBe(TURNS + 1);
				// The fold events are the extension's: the same layers, byte for byte, at the same requests.
				expect(sim.summary.foldEvents).toBeGreaterThanOrEqual(2);
				expect(sim.summary.recorded.layers).toBe(sim.summary.foldEvents);
				expect(sim.summary.recorded.identicalLayers).toBe(sim.summary.foldEvents);

				const fakeFolded = sum(turns.map(promptOf));
				const fakeRead = sum(turns.map((t) => t.reportedUsage?.cacheRead ?? 0));
				const fakePlain = sum(plain.fake.turnRequests().map(promptOf));
				expect(sim.summary.recorded.prompt).toBe(fakeFolded);
				const agreement = {
					version,
					foldRule,
					foldEvents: sim.summary.foldEvents,
					foldedArm: sim.summary.folded.prompt,
					fakeWithExtension: fakeFolded,
					foldedError: sim.summary.folded.prompt / fakeFolded - 1,
					cacheReadArm: sim.summary.folded.cacheRead,
					fakeCacheRead: fakeRead,
					baselineArm: sim.summary.baseline.prompt,
					fakeWithoutExtension: fakePlain,
					baselineError: sim.summary.baseline.prompt / fakePlain - 1,
				};
				console.log(`[simulate vs pi] ${JSON.stringify(agreement)}`);
				expect(Math.abs(agreement.foldedError)).toBeLessThan(0.05);
				expect(Math.abs(agreement.baselineError)).toBeLessThan(0.05);
				expect(Math.abs(sim.summary.folded.cacheRead / fakeRead - 1)).toBeLessThan(0.05);
				// Per request, too: every folded-arm prompt within 5 % of what the fake saw.
				sim.requests.forEach((q: { folded: { prompt: number } | null }, i: number) => {
					const real = promptOf(turns[i] as RecordedRequest);
					expect(Math.abs((q.folded?.prompt ?? 0) / real - 1)).toBeLessThan(0.05);
				});
			},
			TIMEOUT,
		);
	});
});
