/**
 * One seeded workload whose every output is hashed: random sessions through the request hook, random
 * digests, random plans. Bun runs it in process and Node runs an esbuild bundle of the same code
 * (determinism-main.ts); the digests must be equal, byte for byte, or the core depends on its runtime.
 */
import fc from "fast-check";
import { renderDigest } from "../../src/core/digest.ts";
import { emptyIndex } from "../../src/core/layers.ts";
import { planFold } from "../../src/core/plan.ts";
import { resolveSettings } from "../../src/core/resolved-settings.ts";
import { apiArb, opsArb, settingsEnvArb, textArb, windowArb } from "./gen.ts";
import { runSession } from "./mini-pi.ts";
import { sha } from "./oracles.ts";

export interface DeterminismResult {
	/** Hash of every generated input (tells a generator difference from an output difference). */
	inputs: string;
	/** Hash of every output. */
	outputs: string;
	sessions: number;
	digests: number;
	plans: number;
}

export function determinismDigest(seed: number, sessions: number, texts: number): DeterminismResult {
	const inputs: string[] = [];
	const outputs: string[] = [];
	const sessionArb = fc.record({ ops: opsArb(), window: windowArb, env: settingsEnvArb, api: apiArb });
	for (const s of chunked(sessionArb, seed, sessions)) {
		inputs.push(sha(fc.stringify(s)));
		outputs.push(runSession({ ...s, check: false }).digest);
	}
	const textCase = fc.tuple(textArb(), fc.stringMatching(/^[0-9a-f]{6}$/));
	for (const [text, code] of chunked(textCase, seed + 1, texts)) {
		inputs.push(sha(text));
		outputs.push(sha(renderDigest({ code, kind: "toolResult", toolName: "bash", text }).digest));
	}
	const planCase = fc.tuple(fc.array(textArb(), { minLength: 1, maxLength: 8 }), windowArb, settingsEnvArb);
	for (const [results, window, env] of chunked(planCase, seed + 2, texts)) {
		inputs.push(sha(fc.stringify([results, window, env])));
		const messages = results.flatMap((text, i) => [
			{
				role: "assistant",
				entryId: `a${i}`,
				timestamp: i * 10,
				blocks: [{ kind: "toolCall" as const, text: "{}bash" }],
				usage: { input: i * 900, output: 10, cacheRead: i * 300, cacheWrite: 0 },
				stopReason: "toolUse",
			},
			{
				role: "toolResult",
				entryId: `r${i}`,
				timestamp: i * 10 + 1,
				toolName: "bash",
				blocks: [{ kind: "text" as const, text }],
			},
		]);
		const plan = planFold({
			messages,
			index: emptyIndex(),
			settings: resolveSettings({ env, file: undefined }).settings,
			window,
			everCacheRead: true,
			hash: sha,
		});
		outputs.push(sha(JSON.stringify(plan)));
	}
	return {
		inputs: sha(inputs.join("\n")),
		outputs: sha(outputs.join("\n")),
		sessions,
		digests: texts,
		plans: texts,
	};
}

/** Samples in chunks of 1,000 (each with its own derived seed), so a long run never holds them all. */
function* chunked<T>(arb: fc.Arbitrary<T>, seed: number, total: number): Generator<T> {
	for (let done = 0, k = 0; done < total; k++) {
		const n = Math.min(1_000, total - done);
		yield* fc.sample(arb, { seed: seed + k * 7_919, numRuns: n });
		done += n;
	}
}
