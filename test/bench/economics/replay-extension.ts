/**
 * Pi extension fixture for the economics replay: the tools of the trace, declared exactly as Pi's
 * built-ins declare them (same schema, description and prompt lines, so the request is the one real
 * Pi sends), but answering each call id with the recorded result. Nothing is executed. It also
 * answers `!` bash runs (RPC `bash`) with the recorded output, and queues the recorded steers and
 * follow-ups at the moment the session file shows them. And it keeps the recording's clock
 * (replay-clock.ts), which context-fold reads under CONTEXTFOLD_TEST_CLOCK=replay.
 *
 * Input: CF_ECON_PLAN names a JSON ToolPlan (see plan.ts). Output: CF_ECON_LOG, one JSON line per
 * served call or bash run, so the harness can prove every recorded result was used, and one per
 * `context` event with the turn request it was counted as, so it can prove the clock was aligned.
 */
import { appendFileSync, readFileSync } from "node:fs";
import {
	createBashToolDefinition,
	createEditToolDefinition,
	createFindToolDefinition,
	createGrepToolDefinition,
	createLsToolDefinition,
	createReadToolDefinition,
	createWriteToolDefinition,
	type ExtensionAPI,
	type ToolDefinition,
} from "@earendil-works/pi-coding-agent";
import { Type } from "typebox";
import type { ToolPlan } from "./plan.ts";
import { ReplayClock } from "./replay-clock.ts";

type Factory = (cwd: string) => ToolDefinition;

const BUILT_IN: Record<string, Factory> = {
	bash: (cwd) => createBashToolDefinition(cwd) as unknown as ToolDefinition,
	read: (cwd) => createReadToolDefinition(cwd) as unknown as ToolDefinition,
	edit: (cwd) => createEditToolDefinition(cwd) as unknown as ToolDefinition,
	write: (cwd) => createWriteToolDefinition(cwd) as unknown as ToolDefinition,
	grep: (cwd) => createGrepToolDefinition(cwd) as unknown as ToolDefinition,
	find: (cwd) => createFindToolDefinition(cwd) as unknown as ToolDefinition,
	ls: (cwd) => createLsToolDefinition(cwd) as unknown as ToolDefinition,
};

const NO_RESULT = "No result provided";

export default function replayTools(pi: ExtensionAPI): void {
	const planPath = process.env.CF_ECON_PLAN;
	if (!planPath) return;
	const plan = JSON.parse(readFileSync(planPath, "utf8")) as ToolPlan;
	const logPath = process.env.CF_ECON_LOG;
	const log = (record: Record<string, unknown>) => {
		if (logPath) appendFileSync(logPath, `${JSON.stringify(record)}\n`);
	};
	const terminate = new Set(plan.terminate);
	const cwd = process.cwd();
	const times = plan.times;
	const clock = new ReplayClock(times.start);
	clock.install();

	for (const name of new Set(["bash", "read", "edit", "write", ...plan.tools])) {
		const base: ToolDefinition = BUILT_IN[name]?.(cwd) ?? {
			name,
			label: name,
			description: `Recorded tool ${name}`,
			parameters: Type.Object({}, { additionalProperties: true }),
			async execute() {
				return { content: [], details: undefined };
			},
		};
		pi.registerTool({
			...base,
			name,
			async execute(toolCallId: string) {
				const recorded = plan.results[toolCallId];
				clock.mark(times.results[toolCallId] ?? Number.NaN);
				for (const text of plan.steerAfter[toolCallId] ?? []) pi.sendUserMessage(text, { deliverAs: "steer" });
				for (const text of plan.followUpAfter[toolCallId] ?? []) pi.sendUserMessage(text, { deliverAs: "followUp" });
				log({ call: toolCallId, name, served: recorded !== undefined });
				const end = terminate.has(toolCallId) ? { terminate: true } : {};
				if (recorded === undefined) {
					return { content: [{ type: "text", text: NO_RESULT }], details: undefined, isError: true, ...end };
				}
				return {
					content: recorded.content as never,
					details: recorded.details as never,
					...(recorded.isError && { isError: true }),
					...end,
				};
			},
		} as ToolDefinition);
	}

	let prompts = 0;
	pi.on("before_agent_start", () => {
		const ordinal = prompts++;
		clock.mark(times.prompts[ordinal] ?? Number.NaN);
		for (const text of plan.steerAtPrompt[String(ordinal)] ?? []) pi.sendUserMessage(text, { deliverAs: "steer" });
	});

	// Request k is made after k assistant messages (replies, aborts and errors alike). This extension
	// loads before context-fold, so its context handler runs first: context-fold's hook for request k
	// reads the recorded start of request k.
	let assistants = 0;
	pi.on("message_end", (event) => {
		if ((event as { message?: { role?: string } }).message?.role === "assistant") assistants++;
	});
	pi.on("context", () => {
		clock.mark(times.replies[assistants] ?? Number.NaN);
		log({ context: assistants });
	});

	let bashRuns = 0;
	pi.on("user_bash", (event) => {
		clock.mark(times.bash[bashRuns] ?? Number.NaN);
		const recorded = plan.bash[bashRuns++];
		log({ bash: event.command, served: recorded?.command === event.command });
		if (recorded === undefined) {
			return { result: { output: NO_RESULT, exitCode: 1, cancelled: false, truncated: false } };
		}
		return {
			result: {
				output: recorded.output,
				exitCode: recorded.exitCode,
				cancelled: recorded.cancelled,
				truncated: recorded.truncated,
				...(recorded.fullOutputPath !== undefined && { fullOutputPath: recorded.fullOutputPath }),
			},
		};
	});
}
