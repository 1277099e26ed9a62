/**
 * A trace turned into a replay plan: the user inputs to send in order (prompts and `!` bash runs),
 * the assistant message that answers each model request, and what the replay tools return for each
 * call id. Every odd feature of real traces is decided here, once, and counted for the report:
 *
 * - model_change / thinking_level_change: skipped (one fake model serves every request; the fake is
 *   not a reasoning model, so a thinking level would only change request knobs, never the prompt).
 * - compaction entries: skipped. Each arm compacts on its own (Pi at its threshold, or context-fold);
 *   replaying the original run's summaries would bake one policy into every arm.
 * - aborted assistant messages: the request is made, then aborted over RPC while it is in flight, so
 *   Pi records an aborted message (never sent again, as with the original). Errors: an HTTP 500.
 * - bashExecution messages: replayed with RPC `bash`; the replay extension answers `user_bash` with
 *   the recorded output, so nothing runs.
 * - a user message recorded after a complete tool batch: a steer queued while that batch runs, so it
 *   reaches the next request exactly where the session file has it. Two user messages in a row: the
 *   second is a steer queued as the run starts. An assistant reply with no user message since the
 *   previous final answer: the latest steer of that run was really a follow-up, and is delivered as one.
 * - tool calls whose results were never recorded (the user interrupted the tools): the replay tool
 *   answers "No result provided" (what Pi itself puts in place of a missing result) and ends the run.
 * - a trace that stops right after a complete tool batch (a session cut there): the replay tools
 *   serve the recorded results and end the run, so no request is made that the trace has no reply for.
 *
 * It also keeps the recorded time of everything delivered (prompts, results, `!` runs, replies), so
 * the replay can drive context-fold's clock from the recording (replay-clock.ts).
 */
import { type Trace, type TraceEntry, textOf, timeOf } from "./trace-read.ts";

export interface CallSpec {
	id: string;
	name: string;
	args: unknown;
}

/** What the last message of a request must be, to prove the replay is aligned with the trace. */
export type Expect = { role: "user"; text: string } | { role: "tool"; ids: string[] };

export interface ReplyPlan {
	/** Turn request ordinal, from 0. */
	k: number;
	/** Request time (ms): the recorded assistant message's start. */
	t: number;
	kind: "reply" | "abort" | "error";
	text: string;
	thinking: string;
	calls: CallSpec[];
	/** Output tokens billed: the recorded usage when there is one, else characters / 4 of what is sent. */
	outputTokens: number;
	expect: Expect | undefined;
	/** Index of the assistant entry on the branch, for diagnostics. */
	entry: number;
}

export interface BashRecord {
	command: string;
	output: string;
	exitCode: number | undefined;
	cancelled: boolean;
	truncated: boolean;
	excludeFromContext: boolean;
	fullOutputPath?: string;
}

/** A user input, with the index of its entry on the trace's branch. */
export type Step =
	| { kind: "prompt"; text: string; ordinal: number; entry: number }
	| { kind: "bash"; index: number; entry: number };

export interface RecordedResult {
	content: unknown[];
	details: unknown;
	isError: boolean;
}

/** What the replay extension needs, written to a JSON file in the sandbox. */
export interface ToolPlan {
	tools: string[];
	results: Record<string, RecordedResult>;
	/** Calls whose batch ends the run (the recording has no request after it). */
	terminate: string[];
	steerAfter: Record<string, string[]>;
	followUpAfter: Record<string, string[]>;
	/** By prompt ordinal: steers queued as that prompt's run starts. */
	steerAtPrompt: Record<string, string[]>;
	bash: BashRecord[];
	/** Recorded times (ms) of what the replay delivers, for context-fold's replay clock. */
	times: RecordedTimes;
}

export interface RecordedTimes {
	/** Before anything is delivered: the session's first timestamp. */
	start: number;
	/** By prompt ordinal. */
	prompts: number[];
	/** By turn request ordinal: the recorded start of that request. */
	replies: number[];
	/** By call id. */
	results: Record<string, number>;
	/** By `!` run index. */
	bash: number[];
}

export interface TraceFeatures {
	entries: number;
	userMessages: number;
	assistantMessages: number;
	toolResults: number;
	toolCalls: Record<string, number>;
	modelChanges: number;
	thinkingLevelChanges: number;
	compactions: number;
	aborted: number;
	errors: number;
	/** Tool calls inside aborted/errored messages: never executed, as in the original run. */
	callsInFailed: number;
	bashExecutions: number;
	steers: number;
	followUps: number;
	runStartSteers: number;
	/** Calls without a recorded result, answered "No result provided" and ending the run. */
	orphanCalls: number;
	/** Results whose call id no recorded tool call has. */
	strayResults: number;
	/** Assistant messages that no request could produce (no user input since a final answer, no steer to move). */
	unreplayable: number;
	/** Pi 1.6.0 tool-declaration system messages: regenerated by Pi itself, not replayed. */
	systemMessages: number;
	/** The trace stops after a complete tool batch (1) or not (0): that batch ends the run. */
	endsAfterBatch: number;
	thinkingBlocks: number;
	other: Record<string, number>;
}

export interface ReplayPlan {
	steps: Step[];
	replies: ReplyPlan[];
	tools: ToolPlan;
	features: TraceFeatures;
}

const CHARS_PER_TOKEN = 4;

export function buildPlan(trace: Trace): ReplayPlan {
	const f: TraceFeatures = {
		entries: trace.entries.length,
		userMessages: 0,
		assistantMessages: 0,
		toolResults: 0,
		toolCalls: {},
		modelChanges: 0,
		thinkingLevelChanges: 0,
		compactions: 0,
		aborted: 0,
		errors: 0,
		callsInFailed: 0,
		bashExecutions: 0,
		steers: 0,
		followUps: 0,
		runStartSteers: 0,
		orphanCalls: 0,
		strayResults: 0,
		unreplayable: 0,
		systemMessages: 0,
		endsAfterBatch: 0,
		thinkingBlocks: 0,
		other: {},
	};
	const tools: ToolPlan = {
		tools: [],
		results: {},
		terminate: [],
		steerAfter: {},
		followUpAfter: {},
		steerAtPrompt: {},
		bash: [],
		times: { start: startOf(trace), prompts: [], replies: [], results: {}, bash: [] },
	};
	const steps: Step[] = [];
	const replies: ReplyPlan[] = [];
	const toolNames = new Set<string>();

	let inRun = false;
	let prompts = 0;
	/** The run's current prompt ordinal and whether a request was made since it was sent. */
	let runPrompt = -1;
	let requestSinceInput = false;
	let batch: string[] = [];
	let pending = new Set<string>();
	let lastAdded: Expect | undefined;
	/** The latest steer of this run, in case a later reply shows it was a follow-up. */
	let lastSteer: { callId: string; text: string; batchIds: string[]; reply: ReplyPlan | undefined } | undefined;
	let lastSteerOpen = false;

	const endBatchAsInterrupted = () => {
		if (pending.size === 0) return;
		f.orphanCalls += pending.size;
		for (const id of batch) tools.terminate.push(id);
		pending = new Set();
	};
	const other = (key: string) => {
		f.other[key] = (f.other[key] ?? 0) + 1;
	};

	trace.entries.forEach((entry: TraceEntry, index) => {
		switch (entry.type) {
			case "model_change":
				f.modelChanges++;
				return;
			case "thinking_level_change":
				f.thinkingLevelChanges++;
				return;
			case "compaction":
				f.compactions++;
				return;
			case "message":
				break;
			default:
				other(entry.type);
				return;
		}
		const m = entry.message;
		if (m === undefined) {
			other("message without body");
			return;
		}
		switch (m.role) {
			case "user": {
				f.userMessages++;
				const text = textOf(m.content);
				if (inRun && pending.size > 0) {
					// Tools never answered: the user interrupted the run, and this is a new prompt.
					endBatchAsInterrupted();
					inRun = false;
				}
				if (!inRun) {
					steps.push({ kind: "prompt", text, ordinal: prompts, entry: index });
					tools.times.prompts.push(timeOf(entry));
					runPrompt = prompts;
					prompts++;
					inRun = true;
					batch = [];
					lastSteer = undefined;
				} else if (!requestSinceInput && runPrompt >= 0 && batch.length === 0) {
					// Two user messages before any reply: the second joins the run as it starts.
					push(tools.steerAtPrompt, String(runPrompt), text);
					f.runStartSteers++;
				} else {
					const callId = batch.at(-1);
					if (callId === undefined) {
						other("user message mid-run without a tool batch");
						return;
					}
					push(tools.steerAfter, callId, text);
					f.steers++;
					lastSteer = { callId, text, batchIds: batch.slice(), reply: undefined };
					lastSteerOpen = true;
				}
				requestSinceInput = false;
				lastAdded = { role: "user", text };
				return;
			}
			case "assistant": {
				f.assistantMessages++;
				const blocks = Array.isArray(m.content) ? (m.content as Array<Record<string, unknown>>) : [];
				const calls: CallSpec[] = [];
				let text = "";
				let thinking = "";
				for (const b of blocks) {
					if (b.type === "text" && typeof b.text === "string") text += b.text;
					else if (b.type === "thinking" && typeof b.thinking === "string" && b.redacted !== true) {
						if (b.thinking.trim().length > 0) f.thinkingBlocks++;
						thinking += (thinking ? "\n\n" : "") + b.thinking;
					} else if (b.type === "toolCall" && typeof b.id === "string" && typeof b.name === "string") {
						calls.push({ id: b.id, name: b.name, args: b.arguments ?? {} });
					}
				}
				const failed = m.stopReason === "aborted" || m.stopReason === "error";
				if (!inRun) {
					// A reply after a final answer, with no user message since: the latest steer was a follow-up.
					if (lastSteer === undefined || !lastSteerOpen) {
						f.unreplayable++;
						return;
					}
					const s = lastSteer;
					remove(tools.steerAfter, s.callId, s.text);
					push(tools.followUpAfter, s.callId, s.text);
					f.steers--;
					f.followUps++;
					if (s.reply !== undefined) s.reply.expect = { role: "tool", ids: s.batchIds };
					lastAdded = { role: "user", text: s.text };
					lastSteerOpen = false;
					inRun = true;
				}
				const reply: ReplyPlan = {
					k: replies.length,
					t: timeOf(entry),
					kind: m.stopReason === "aborted" ? "abort" : m.stopReason === "error" ? "error" : "reply",
					text,
					thinking,
					calls: failed ? [] : calls,
					outputTokens: recordedOutput(m.usage?.output, text, thinking, calls),
					expect: lastAdded,
					entry: index,
				};
				if (lastSteer !== undefined && lastSteer.reply === undefined && lastAdded?.role === "user") {
					lastSteer.reply = reply;
				}
				replies.push(reply);
				tools.times.replies.push(reply.t);
				requestSinceInput = true;
				if (failed) {
					if (m.stopReason === "aborted") f.aborted++;
					else f.errors++;
					f.callsInFailed += calls.length;
					inRun = false;
					return;
				}
				for (const c of calls) {
					f.toolCalls[c.name] = (f.toolCalls[c.name] ?? 0) + 1;
					toolNames.add(c.name);
				}
				if (calls.length > 0) {
					batch = calls.map((c) => c.id);
					pending = new Set(batch);
				} else {
					inRun = false;
				}
				return;
			}
			case "toolResult": {
				f.toolResults++;
				const id = m.toolCallId;
				if (typeof id !== "string" || !pending.has(id)) {
					f.strayResults++;
					return;
				}
				pending.delete(id);
				tools.results[id] = {
					content: Array.isArray(m.content) ? m.content : [{ type: "text", text: textOf(m.content) }],
					details: m.details,
					isError: m.isError === true,
				};
				tools.times.results[id] = timeOf(entry);
				lastAdded = { role: "tool", ids: batch.slice() };
				return;
			}
			case "bashExecution": {
				f.bashExecutions++;
				if (inRun && pending.size > 0) {
					endBatchAsInterrupted();
					inRun = false;
				}
				tools.bash.push({
					command: String(m.command ?? ""),
					output: String(m.output ?? ""),
					exitCode: typeof m.exitCode === "number" ? m.exitCode : undefined,
					cancelled: m.cancelled === true,
					truncated: m.truncated === true,
					excludeFromContext: m.excludeFromContext === true,
					...(typeof m.fullOutputPath === "string" && { fullOutputPath: m.fullOutputPath }),
				});
				steps.push({ kind: "bash", index: tools.bash.length - 1, entry: index });
				tools.times.bash.push(timeOf(entry));
				return;
			}
			case "system":
				f.systemMessages++;
				return;
			default:
				other(`message:${m.role}`);
		}
	});
	if (inRun && pending.size === 0 && batch.length > 0 && lastAdded?.role === "tool") {
		// The trace stops after a complete batch: serve it, then end the run there.
		f.endsAfterBatch = 1;
		for (const id of batch) tools.terminate.push(id);
	}
	endBatchAsInterrupted();
	tools.tools = [...toolNames].sort();
	return { steps, replies, tools, features: f };
}

/** The session's first recorded time: the first entry that has one, else the header's. */
function startOf(trace: Trace): number {
	for (const e of trace.entries) {
		const t = timeOf(e);
		if (Number.isFinite(t)) return t;
	}
	const header = typeof trace.header?.timestamp === "string" ? Date.parse(trace.header.timestamp) : Number.NaN;
	return Number.isFinite(header) ? header : 0;
}

function recordedOutput(recorded: number | undefined, text: string, thinking: string, calls: CallSpec[]): number {
	if (typeof recorded === "number" && Number.isFinite(recorded) && recorded > 0) return recorded;
	const chars =
		text.length + thinking.length + calls.reduce((n, c) => n + c.name.length + JSON.stringify(c.args).length, 0);
	return Math.ceil(chars / CHARS_PER_TOKEN);
}

function push(map: Record<string, string[]>, key: string, value: string): void {
	const list = map[key] ?? [];
	list.push(value);
	map[key] = list;
}

function remove(map: Record<string, string[]>, key: string, value: string): void {
	const list = map[key];
	if (list === undefined) return;
	const i = list.lastIndexOf(value);
	if (i >= 0) list.splice(i, 1);
	if (list.length === 0) delete map[key];
}
