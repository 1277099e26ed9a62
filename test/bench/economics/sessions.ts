/**
 * Every session the benchmark replays, and how each one is made:
 * - `recorded`: each trace traces.ts lists, whole;
 * - `cut`: each recorded trace cut after its 15th and 30th user prompt (short and medium sessions of
 *   real work), where it has more;
 * - `generated`: the project's generated session (demo-trace.ts, 136 tool calls), cut after about 40
 *   tool calls and replayed in a 100k and in a 200k window; cut after its four demo phases (the demo
 *   of `npm run demo`); and whole, the long one.
 * A cut keeps the entries before the cut point, so every reply it has is the recording's own; only
 * the session ends sooner. Everything is deterministic: the same sessions, byte for byte, every run.
 */

import { DEMO_NAME, generatedTrace, LONG_NAME } from "./demo-trace.ts";
import { buildPlan, type ReplayPlan } from "./plan.ts";
import { type Trace, type TraceEntry, traceFromEntries } from "./trace-read.ts";
import { listRecordedTraces, loadTrace } from "./traces.ts";

export type SessionKind = "recorded" | "cut" | "generated" | "window";

export interface BenchSession {
	trace: Trace;
	kind: SessionKind;
	/** The model's context window in this session's replays. */
	window: number;
	/** How the session was made, for the report. */
	origin: string;
}

export const HEADLINE_WINDOW = 200_000;
/**
 * The whole recorded traces and the long generated session again in smaller windows: with folding,
 * the headline traces stay within the 150k budget of a 200k window, so early compaction (over the
 * budget with nothing left to fold) can only be measured where the window is smaller (100k, and
 * 128k, a common window).
 */
export const SMALL_WINDOWS = [100_000, 128_000] as const;
export const CUT_PROMPTS = [15, 30] as const;
/** The short generated session: cut after the first tool batch that reaches this many calls. */
export const SHORT_CALLS = 40;
export const SHORT_WINDOWS = [100_000, 200_000] as const;
/** The demo's own session is the generated one's first four prompts. */
export const DEMO_PROMPTS = 4;

const kilo = (n: number) => `${Math.round(n / 1000)}k`;

export interface SessionSet {
	sessions: BenchSession[];
	note: string;
}

/**
 * The sessions whose names contain one of the comma-separated `filter` words (all without one);
 * `quick`: only the first of them. The generated session is recorded only when one of its cuts is wanted.
 */
export async function benchSessions(o: {
	filter?: string;
	quick: boolean;
	bundle: string;
	log: (line: string) => void;
}): Promise<SessionSet> {
	const words = (o.filter ?? "")
		.split(",")
		.map((w) => w.trim())
		.filter(Boolean);
	const wanted = (name: string) => words.length === 0 || words.some((w) => name.includes(w));
	const recorded = listRecordedTraces();
	const sessions: BenchSession[] = [];
	const add = (s: BenchSession | null) => {
		if (s !== null && wanted(s.trace.name) && !(o.quick && sessions.length > 0)) sessions.push(s);
	};
	for (const source of recorded.sources) {
		const names = [
			source.name,
			...CUT_PROMPTS.map((n) => cutName(source.name, n)),
			...SMALL_WINDOWS.map((w) => windowName(source.name, w)),
		];
		if (!names.some(wanted)) continue;
		const trace = loadTrace(source);
		add({ trace, kind: "recorded", window: HEADLINE_WINDOW, origin: "recorded trace, whole" });
		for (const n of CUT_PROMPTS) {
			const cut = cutAfterPrompts(trace, n, cutName(source.name, n));
			add(cut && { trace: cut, kind: "cut", window: HEADLINE_WINDOW, origin: `first ${n} prompts of ${trace.name}` });
		}
		for (const w of SMALL_WINDOWS) add(smallWindow(trace, w, "recorded trace, whole"));
	}
	const generatedNames = [
		...SHORT_WINDOWS.map(shortName),
		DEMO_NAME,
		LONG_NAME,
		...SMALL_WINDOWS.map((w) => windowName(LONG_NAME, w)),
	];
	if (generatedNames.some(wanted) && !(o.quick && sessions.length > 0)) {
		o.log("[economics] recording the generated session through Pi (CONTEXTFOLD=0)…");
		const long = await generatedTrace(o.bundle);
		const short = cutAfterCalls(long, SHORT_CALLS, "generated-40");
		for (const window of SHORT_WINDOWS) {
			add({
				trace: { ...short, name: shortName(window) },
				kind: "generated",
				window,
				origin: `generated: the first ${countCalls(short)} tool calls, ${kilo(window)} window`,
			});
		}
		const demo = cutAfterPrompts(long, DEMO_PROMPTS, DEMO_NAME);
		if (demo === null) throw new Error(`the generated session has no more than ${DEMO_PROMPTS} prompts`);
		add({ trace: demo, kind: "generated", window: HEADLINE_WINDOW, origin: "generated: the demo's four prompts" });
		add({
			trace: long,
			kind: "generated",
			window: HEADLINE_WINDOW,
			origin: `generated: five prompts, ${countCalls(long)} tool calls`,
		});
		for (const w of SMALL_WINDOWS) add(smallWindow(long, w, `generated: five prompts, ${countCalls(long)} tool calls`));
	}
	return { sessions, note: recorded.note };
}

/** A session replayed in one of SMALL_WINDOWS instead of its own window. */
function smallWindow(trace: Trace, window: number, what: string): BenchSession {
	return {
		trace: { ...trace, name: windowName(trace.name, window) },
		kind: "window",
		window,
		origin: `${what}, in a ${kilo(window)} window`,
	};
}

function windowName(name: string, window: number): string {
	return `${name}-w${kilo(window)}`;
}

export function cutName(trace: string, prompts: number): string {
	return `${trace}-p${prompts}`;
}

function shortName(window: number): string {
	return `generated-${SHORT_CALLS}-${kilo(window)}`;
}

/**
 * The trace up to (not including) its (n+1)-th user prompt, as the replay counts prompts (a user
 * message that starts a run; steers and follow-ups belong to the run they join). Null when it has no
 * more than n prompts: the cut would be the whole trace.
 */
export function cutAfterPrompts(
	trace: Trace,
	n: number,
	name: string,
	plan: ReplayPlan = buildPlan(trace),
): Trace | null {
	const prompts = plan.steps.filter((s) => s.kind === "prompt");
	const next = prompts[n];
	if (next === undefined) return null;
	return derive(trace, name, trace.entries.slice(0, next.entry), `first ${n} prompts`);
}

/**
 * The trace up to the end of the first tool batch at which its executed tool calls reach `n` (calls in
 * aborted or errored replies never ran). The replay ends the run after that batch (plan.ts).
 */
export function cutAfterCalls(trace: Trace, n: number, name: string): Trace {
	let calls = 0;
	for (let i = 0; i < trace.entries.length; i++) {
		calls += executedCalls(trace.entries[i] as TraceEntry);
		if (calls < n) continue;
		let end = i + 1;
		while (trace.entries[end]?.message?.role === "toolResult") end++;
		return derive(trace, name, trace.entries.slice(0, end), `first ${calls} tool calls`);
	}
	throw new Error(`${trace.name} has only ${calls} tool calls, fewer than ${n}`);
}

/** Tool calls the session executed. */
export function countCalls(trace: Trace): number {
	return trace.entries.reduce((n, e) => n + executedCalls(e), 0);
}

function executedCalls(e: TraceEntry): number {
	const m = e.message;
	if (e.type !== "message" || m?.role !== "assistant" || m.stopReason === "aborted" || m.stopReason === "error") {
		return 0;
	}
	return Array.isArray(m.content) ? m.content.filter((b) => (b as { type?: string }).type === "toolCall").length : 0;
}

function derive(trace: Trace, name: string, entries: TraceEntry[], what: string): Trace {
	const header = trace.header ? [trace.header] : [];
	return traceFromEntries(name, [...header, ...entries], `${trace.path}, ${what}`);
}
