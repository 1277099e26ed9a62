/**
 * The project's own generated session as a trace. test/demo generates a long deterministic coding
 * session and plays it through real Pi (tools really run, in a sandbox, against replay shims); here it
 * is played once without folding (CONTEXTFOLD=0), with the demo's optional fifth phase (136 tool
 * calls in all), and the session file Pi wrote becomes a trace like the recorded ones. It is recorded
 * in the 200k window it is replayed in, so Pi compacts once during the fifth phase, as a recorded
 * session would show (every arm of the benchmark skips that entry and compacts on its own; simulate's
 * no-folding side keeps it). The shorter generated sessions are cuts of it (sessions.ts), all before
 * that compaction: the first four phases are exactly the session `npm run demo` plays. Its timestamps are those of a 6-second offline run, so it is re-timed
 * deterministically: 20 s per model request, plus 6 minutes of user think time before every prompt
 * after the first (longer than the 5-minute cache lifetime, shorter than 1 hour). What varies between
 * recordings (entry ids, the sandbox path, response ids, durations) is normalized, so the trace, and
 * its checksum, are the same on every run.
 */
import type { Trace, TraceEntry } from "./trace-read.ts";
import { traceFromEntries } from "./trace-read.ts";

export const DEMO_NAME = "generated-demo";
export const LONG_NAME = "generated-long";
const RECORD_WINDOW = 200_000;
export const REQUEST_SECONDS = 20;
export const THINK_MINUTES = 6;
const T0 = Date.UTC(2026, 0, 5, 9, 0, 0);

export async function generatedTrace(bundle: string): Promise<Trace> {
	const { generateSession } = await import("../../demo/session.ts");
	const { runArm } = await import("../../demo/arm.ts");
	const session = generateSession({ followUp: true });
	const arm = await runArm({ session, bundle, version: "1.6.0", window: RECORD_WINDOW, fold: false });
	if (arm.problems.length > 0) throw new Error(`generated session: ${arm.problems.join("; ")}`);
	return traceFromEntries(LONG_NAME, retime(normalize(arm.entries as TraceEntry[])));
}

export const DEMO_CWD = "/home/dev/ledgerline";

/** Sequential ids, a fixed project path, no per-run response ids or durations. */
export function normalize(entries: readonly TraceEntry[]): TraceEntry[] {
	const header = entries.find((e) => e.type === "session");
	const cwd = typeof header?.cwd === "string" ? header.cwd : undefined;
	const ids = new Map<string, string>();
	const idOf = (id: string) => {
		let mapped = ids.get(id);
		if (mapped === undefined) {
			mapped = `e${String(ids.size + 1).padStart(7, "0")}`;
			ids.set(id, mapped);
		}
		return mapped;
	};
	return entries.map((e) => {
		let text = JSON.stringify(e);
		if (cwd) text = text.split(cwd).join(DEMO_CWD);
		const out = JSON.parse(text) as TraceEntry;
		if (out.type === "session") out.id = "generated-demo";
		if (typeof out.id === "string" && out.type !== "session") out.id = idOf(out.id);
		if (typeof out.parentId === "string") out.parentId = idOf(out.parentId);
		if (out.message) {
			delete out.message.responseId;
			delete out.message.durationMs;
		}
		return out;
	});
}

/** Rewrites every timestamp on a fixed clock, so billing never depends on how fast the recording ran. */
export function retime(entries: readonly TraceEntry[]): TraceEntry[] {
	let t = T0;
	let prompts = 0;
	return entries.map((e) => {
		const m = e.message;
		if (m?.role === "user") {
			if (prompts++ > 0) t += THINK_MINUTES * 60_000;
		} else if (m?.role === "assistant") {
			t += REQUEST_SECONDS * 1000;
		}
		const iso = new Date(t).toISOString();
		if (m === undefined) return { ...e, timestamp: iso };
		return { ...e, timestamp: iso, message: { ...m, timestamp: t } };
	});
}
