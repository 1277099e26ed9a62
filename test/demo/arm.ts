/**
 * One arm of the demo: the generated session played through real Pi over RPC, offline, against the
 * harness's fake model, with context-fold loaded (and on, or off with CONTEXTFOLD=0). Returns what the
 * wire, the session file and Pi's UI events showed; the bulky request bodies are reduced on the way.
 */
import { chmodSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { foldedCodes } from "../e2e/cf.ts";
import { type PiVersion, type SessionEntry, startRpc, startScenario, type Usage } from "../e2e/harness/index.ts";
import { demoModel, type Served } from "./model.ts";
import type { DemoSession } from "./session.ts";

export interface RequestRecord {
	/** Index among the fake's requests. */
	index: number;
	turn: string;
	phase: number;
	usage: Usage;
	/** Codes of the folded tool results in this request. */
	codes: string[];
	/** Some tool output in this request still shows the buried line verbatim. */
	lineVisible: boolean;
}

export interface ArmResult {
	fold: boolean;
	requests: RequestRecord[];
	served: Served[];
	summaryRequests: number;
	entries: SessionEntry[];
	/** statusText of every setStatus Pi relayed for the context-fold key, in order. */
	statuses: string[];
	/** Notifications extensions raised (warnings and notices), in order. */
	notices: string[];
	changelog: string;
	problems: string[];
	stderr: string;
	ms: number;
}

export interface ArmOptions {
	session: DemoSession;
	bundle: string;
	version: PiVersion;
	window: number;
	fold: boolean;
}

const STATUS_KEY = "context-fold";

export async function runArm(o: ArmOptions): Promise<ArmResult> {
	const started = performance.now();
	const model = demoModel(o.session.phases);
	const s = await startScenario({
		fake: { script: model.script, cache: { mode: "prefix", style: "anthropic" } },
		model: { contextWindow: o.window },
		files: o.session.files,
		// What users get: the priced fold rule (the e2e default pins 0.1.0's fold points instead).
		foldRule: "priced",
	});
	try {
		for (const rel of o.session.executables) chmodSync(join(s.sandbox.cwd, rel), 0o755);
		const env: Record<string, string> = {
			PATH: `${join(s.sandbox.cwd, o.session.binDir)}:${process.env.PATH ?? "/usr/bin:/bin"}`,
			...(o.fold ? {} : { CONTEXTFOLD: "0" }),
		};
		const rpc = await startRpc({
			version: o.version,
			sandbox: s.sandbox,
			extensions: [o.bundle],
			env,
			timeoutMs: 60_000,
		});
		s.defer(() => rpc.close());
		const state = await rpc.getState();
		for (const phase of o.session.phases) await rpc.promptAndWait(phase.prompt, { timeoutMs: 90_000 });
		await rpc.close();
		const byRequest = new Map(model.served.map((x) => [x.request, x]));
		const requests: RequestRecord[] = [];
		for (const req of s.fake.requests) {
			if (req.isSummaryRequest) continue;
			const served = byRequest.get(req.index);
			requests.push({
				index: req.index,
				turn: served?.turn ?? "?",
				phase: served?.phase ?? -1,
				usage: req.reportedUsage ?? { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
				codes: foldedCodes(req),
				lineVisible: req.body.messages.some(
					(m) => m.role === "tool" && JSON.stringify(m.content ?? "").includes(o.session.buildLine),
				),
			});
		}
		const file = typeof state.sessionFile === "string" ? state.sessionFile : s.sandbox.latestSessionFile();
		return {
			fold: o.fold,
			requests,
			served: model.served,
			summaryRequests: s.fake.summaryRequests().length,
			entries: s.sandbox.readSession(file),
			statuses: rpc.uiRequests
				.filter((u) => u.method === "setStatus" && u.statusKey === STATUS_KEY)
				.map((u) => String(u.statusText ?? "")),
			notices: rpc.uiRequests.filter((u) => u.method === "notify").map((u) => String(u.message ?? "")),
			changelog: readFileSync(join(s.sandbox.cwd, "CHANGELOG.md"), "utf8"),
			problems: [...s.fake.problems, ...rpc.problems],
			stderr: rpc.stderr(),
			ms: performance.now() - started,
		};
	} finally {
		await s.dispose();
	}
}
