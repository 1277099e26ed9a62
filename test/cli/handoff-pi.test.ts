// `context-fold handoff` writes the very file `/fold-handoff` writes: a session folded in real Pi
// (0.80.6 and 1.6.0), then the seed written both ways, compared byte for byte.
import { afterEach, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { bigOutputCommand, ensureBundle } from "../e2e/cf.ts";
import {
	bash,
	expectSuccess,
	forEachPiVersion,
	replySequence,
	runPrint,
	type Scenario,
	startScenario,
	text,
} from "../e2e/harness/index.ts";
import { memIo, runCli } from "./helpers.ts";

const TIMEOUT = 120_000;
let bundle = "";
beforeAll(() => {
	bundle = ensureBundle();
});
const scenarios: Scenario[] = [];
afterEach(async () => {
	for (const s of scenarios.splice(0)) await s.dispose();
});

forEachPiVersion((version) => {
	describe(`pi ${version}`, () => {
		test(
			"the CLI's handoff seed is byte for byte the one /fold-handoff wrote",
			async () => {
				const replies = [];
				for (let i = 0; i < 14; i++) replies.push(bash(bigOutputCommand(`h${i}`, 2500), `call_h${i}`));
				replies.push(text("done"));
				const s = await startScenario({
					fake: { script: replySequence(replies) },
					model: { contextWindow: 40_000 },
					compaction: { enabled: false },
				});
				scenarios.push(s);
				expectSuccess(await runPrint({ version, sandbox: s.sandbox, prompt: "go", extensions: [bundle] }));
				const file = s.sandbox.latestSessionFile();
				const goal = "finish the parser and add tests";
				const pi = expectSuccess(
					await runPrint({
						version,
						sandbox: s.sandbox,
						prompt: `/fold-handoff ${goal}`,
						extensions: [bundle],
						continue: true,
					}),
				);
				const piSeed = /Seed written: (\S+\.md)/.exec(pi.stderr)?.[1];
				expect(piSeed).toBeDefined();
				const r = await runCli(
					["handoff", file, "--goal", goal, "--json"],
					memIo({ env: { PI_CODING_AGENT_DIR: s.sandbox.agentDir } }),
				);
				expect(r.code).toBe(0);
				const cli = JSON.parse(r.stdout) as { path: string; records: number };
				expect(cli.records).toBeGreaterThan(0);
				expect(cli.path).not.toBe(piSeed);
				expect(readFileSync(cli.path, "utf8")).toBe(readFileSync(piSeed as string, "utf8"));
			},
			TIMEOUT,
		);
	});
});
