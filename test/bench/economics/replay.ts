/**
 * One arm on one trace: real Pi 1.6.0 over RPC, headless and offline, against the replay model, with
 * the replay-tools extension (and context-fold's bundle when the arm loads it). User inputs go in
 * their recorded order; the run ends when the plan is exhausted. What comes back is the per-request
 * record from the model and the facts Pi wrote to its session file.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ChatMessage } from "../../e2e/harness/requests.ts";
import { type PiRpc, startRpc } from "../../e2e/harness/rpc.ts";
import { createSandbox, type SessionEntry } from "../../e2e/harness/sandbox.ts";
import { type ArmSpec, PI_COMPACTION, WINDOW } from "./arms.ts";
import type { BillingModel } from "./billing.ts";
import type { ReplayPlan } from "./plan.ts";
import { type RequestRecord, startReplayModel } from "./replay-model.ts";

export const REPLAY_EXTENSION = join(import.meta.dir, "replay-extension.ts");
export const PI_VERSION = "1.6.0" as const;

export interface CompactionFact {
	/** Turn request ordinal the compaction came before (assistant messages written before it). */
	beforeRequest: number;
	fromHook: boolean;
	tokensBefore: number | null;
}

export interface LayerFact {
	seq: number;
	reason: string;
	/** Code → tokens the digest saves (block tokens minus digest tokens, context-fold's own estimate). */
	saved: Record<string, number>;
}

export interface ArmRun {
	arm: ArmSpec;
	records: RequestRecord[];
	compactions: CompactionFact[];
	layers: LayerFact[];
	unfolds: number;
	/** Everything that went wrong: misaligned requests, unserved results, Pi errors. Must be empty. */
	problems: string[];
	wallMs: number;
}

export interface ReplayOptions {
	plan: ReplayPlan;
	arm: ArmSpec;
	billing: BillingModel;
	bundle: string;
	/** The model's context window (default: the headline's 200k). */
	window?: number;
	observe?: (messages: ChatMessage[], record: RequestRecord) => void;
	/** Deadline for one user input's run. */
	timeoutMs?: number;
	/** More extensions, loaded after the arm's, and environment for Pi (tests: a probe of the replay clock). */
	extensions?: string[];
	env?: Record<string, string>;
}

export async function replayArm(o: ReplayOptions): Promise<ArmRun> {
	const started = performance.now();
	let rpc: PiRpc | undefined;
	const model = await startReplayModel({
		plan: o.plan,
		billing: o.billing,
		observe: o.observe,
		onAbort: async () => {
			if (!rpc) throw new Error("abort requested before Pi started");
			return rpc.send({ type: "abort" });
		},
	});
	const sandbox = createSandbox({
		fakeUrl: model.url,
		// The extension prices its folds with what the model declares: the billed prices and lifetime.
		model: {
			contextWindow: o.window ?? WINDOW,
			cost: { ...o.billing.prices },
			promptCache: { short: o.billing.lifetimeMs / 1000, long: o.billing.lifetimeMs / 1000 },
		},
		compaction: { enabled: o.arm.compaction, ...PI_COMPACTION },
		foldRule: "priced",
		env: o.arm.env,
	});
	const problems: string[] = [];
	try {
		const planPath = join(sandbox.root, "plan.json");
		const logPath = join(sandbox.root, "served.jsonl");
		writeFileSync(planPath, JSON.stringify(o.plan.tools));
		writeFileSync(logPath, "");
		rpc = await startRpc({
			version: PI_VERSION,
			sandbox,
			extensions: [REPLAY_EXTENSION, ...(o.arm.contextFold ? [o.bundle] : []), ...(o.extensions ?? [])],
			// context-fold's clock follows the recording (replay-clock.ts), as the billing does.
			env: { ...o.env, CF_ECON_PLAN: planPath, CF_ECON_LOG: logPath, CONTEXTFOLD_TEST_CLOCK: "replay" },
			timeoutMs: o.timeoutMs ?? 300_000,
		});
		const state = await rpc.getState();
		for (const step of o.plan.steps) {
			if (step.kind === "bash") {
				const bash = o.plan.tools.bash[step.index];
				const r = await rpc.send({ type: "bash", command: bash?.command ?? "" });
				if (!r.success) problems.push(`bash #${step.index} failed: ${r.error}`);
				continue;
			}
			const since = rpc.cursor();
			const r = await rpc.prompt(step.text);
			if (!r.success) {
				problems.push(`prompt #${step.ordinal} rejected: ${r.error}`);
				continue;
			}
			if (r.data?.disposition === "handled") {
				problems.push(`prompt #${step.ordinal} was handled as a command: ${step.text.slice(0, 40)}`);
				continue;
			}
			await rpc.waitForIdle({ since, timeoutMs: o.timeoutMs ?? 300_000 });
		}
		await rpc.close();
		const file = typeof state.sessionFile === "string" ? state.sessionFile : sandbox.latestSessionFile();
		const facts = sessionFacts(sandbox.readSession(file));
		problems.push(...model.problems, ...rpc.problems);
		problems.push(...checkServed(o.plan, readFileSync(logPath, "utf8")));
		if (model.served() !== o.plan.replies.length) {
			problems.push(`served ${model.served()} of ${o.plan.replies.length} recorded replies`);
		}
		for (const r of model.records) if (r.misaligned) problems.push(`request ${r.k}: ${r.misaligned}`);
		return { arm: o.arm, records: model.records, ...facts, problems, wallMs: performance.now() - started };
	} finally {
		if (rpc) await rpc.close();
		await model.close();
		sandbox.cleanup();
	}
}

/** Compactions (Pi's or a hook's) and context-fold's fold records, from the session file Pi wrote. */
export function sessionFacts(entries: SessionEntry[]): Pick<ArmRun, "compactions" | "layers" | "unfolds"> {
	const compactions: CompactionFact[] = [];
	const layers: LayerFact[] = [];
	let unfolds = 0;
	let assistants = 0;
	for (const e of entries) {
		if (e.type === "message" && e.message?.role === "assistant") assistants++;
		else if (e.type === "compaction") {
			compactions.push({
				beforeRequest: assistants,
				fromHook: e.fromHook === true,
				tokensBefore: typeof e.tokensBefore === "number" ? e.tokensBefore : null,
			});
		} else if (e.type === "custom" && e.customType === "context-fold") {
			const data = e.data as
				| { type?: string; seq?: number; reason?: string; blocks?: unknown[]; inputs?: { blocks?: unknown[] } }
				| undefined;
			if (data?.type === "layer" && Array.isArray(data.blocks)) {
				const saved: Record<string, number> = {};
				// A layer's folded tool-call inputs are blocks too (stored beside them).
				const masks = [...data.blocks, ...(Array.isArray(data.inputs?.blocks) ? data.inputs.blocks : [])];
				for (const b of masks as Array<{ code?: string; tokens?: number; digest?: string }>) {
					if (typeof b.code !== "string") continue;
					saved[b.code] = Math.max(0, (b.tokens ?? 0) - Math.ceil((b.digest?.length ?? 0) / 4));
				}
				layers.push({ seq: data.seq ?? layers.length + 1, reason: String(data.reason ?? "?"), saved });
			} else if (data?.type === "unfold") unfolds++;
		}
	}
	return { compactions, layers, unfolds };
}

/**
 * Every recorded result and `!` run was served by the replay tools, and nothing else was asked for;
 * and the replay clock counted the `context` events as the model counted the requests (0, 1, 2, …).
 */
export function checkServed(plan: ReplayPlan, log: string): string[] {
	const problems: string[] = [];
	const served = new Set<string>();
	let bash = 0;
	let contexts = 0;
	for (const line of log.split("\n")) {
		if (!line) continue;
		const r = JSON.parse(line) as { call?: string; bash?: string; served: boolean; context?: number };
		if (r.context !== undefined) {
			if (r.context !== contexts) {
				problems.push(`replay clock: context event ${contexts} was counted as request ${r.context}`);
			}
			contexts++;
		} else if (r.call !== undefined) {
			served.add(r.call);
			if (!r.served && !plan.tools.terminate.includes(r.call)) problems.push(`call ${r.call} has no recorded result`);
		} else {
			bash++;
			if (!r.served) problems.push(`bash run "${r.bash}" did not match the recording`);
		}
	}
	for (const id of Object.keys(plan.tools.results)) if (!served.has(id)) problems.push(`result ${id} never served`);
	if (bash !== plan.tools.bash.length) problems.push(`served ${bash} of ${plan.tools.bash.length} bash runs`);
	if (contexts !== plan.replies.length) {
		problems.push(`replay clock: ${contexts} context events for ${plan.replies.length} recorded requests`);
	}
	return problems;
}
