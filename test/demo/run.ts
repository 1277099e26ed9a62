/**
 * `npm run demo`: plays the embedded, generated coding session through real Pi twice, offline, once
 * with context-fold and once with CONTEXTFOLD=0, prints what folding did and what it saved, and exits
 * non-zero when something that should happen did not (so the demo doubles as a smoke test).
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { DEFAULT_SETTINGS } from "../../src/core/settings.ts";
import { ensureBundle, REPO } from "../e2e/cf.ts";
import { NODE_BIN, type PiVersion } from "../e2e/harness/index.ts";
import { runArm } from "./arm.ts";
import { folds, played, rawBytes, recall } from "./checks.ts";
import { alignArms, foldEvents, totals } from "./measure.ts";
import { renderReport } from "./report.ts";
import { type DemoSession, generateSession, SEED } from "./session.ts";
import type { Turn } from "./story.ts";

const VERSION: PiVersion = "1.6.0";
const WINDOW = 200_000;

function label(turn: Turn): string {
	if (turn.kind === "answer") return "(answer)";
	if (turn.kind === "recall-search") return `recall_folded search=${turn.needle}`;
	if (turn.kind === "recall-code") return "recall_folded code=…";
	return turn.calls
		.map((c) => `${c.name} ${String(c.args.command ?? c.args.path ?? "")}`)
		.join(" + ")
		.replace(/\s+/g, " ");
}

function sessionFacts(session: DemoSession) {
	const turns = session.phases.flatMap((p) => p.turns);
	const toolCalls: Record<string, number> = {};
	for (const t of turns)
		if (t.kind === "calls") for (const c of t.calls) toolCalls[c.name] = (toolCalls[c.name] ?? 0) + 1;
	return {
		seed: `0x${SEED.toString(16)}`,
		prompts: session.phases.length,
		toolCalls,
		recallCalls: turns.filter((t) => t.kind === "recall-search" || t.kind === "recall-code").length,
		turns: turns.length,
	};
}

async function main(): Promise<number> {
	const started = performance.now();
	const bundle = ensureBundle();
	const session = generateSession();
	const pkg = join(REPO, "node_modules/@earendil-works/pi-coding-agent/package.json");
	const pi = (JSON.parse(readFileSync(pkg, "utf8")) as { version: string }).version;
	const node = execFileSync(NODE_BIN, ["--version"], { encoding: "utf8" }).trim().replace(/^v/, "");
	process.stderr.write(
		`demo: playing the session (${session.toolCalls} tool calls) through Pi ${pi} with and without context-fold…\n`,
	);
	const options = { session, bundle, version: VERSION, window: WINDOW };
	const [withArm, withoutArm] = await Promise.all([
		runArm({ ...options, fold: true }),
		runArm({ ...options, fold: false }),
	]);

	const events = foldEvents(withArm);
	const columns = alignArms(withArm, withoutArm, events);
	const turns = session.phases.flatMap((p, phase) => p.turns.map((t) => ({ t, phase })));
	const phaseOf = new Map(turns.map(({ t, phase }) => [t.id, phase]));
	const promptStarts = columns.flatMap((c, i) =>
		i === 0 || phaseOf.get(c.turn) !== phaseOf.get(columns[i - 1]?.turn ?? "") ? [i] : [],
	);
	const recallCheck = recall(withArm, session);
	const raw = rawBytes(withArm, withoutArm);
	const checks = [
		played(withArm, session, "with context-fold"),
		played(withoutArm, session, "with CONTEXTFOLD=0"),
		folds(withArm, withoutArm, events),
		recallCheck,
		raw,
	];
	const budget = Math.min(
		DEFAULT_SETTINGS.budgetCap ?? Number.POSITIVE_INFINITY,
		DEFAULT_SETTINGS.budgetFraction * WINDOW,
	);
	process.stdout.write(
		renderReport({
			pi,
			node,
			window: WINDOW,
			settings: {
				budget,
				tail: Math.min(DEFAULT_SETTINGS.tail, budget / 2),
			},
			session: sessionFacts(session),
			columns,
			promptStarts,
			labels: new Map(turns.map(({ t }) => [t.id, label(t)])),
			with: totals(withArm.requests),
			without: totals(withoutArm.requests),
			events,
			recall: recallCheck,
			raw,
			footer: { last: withArm.statuses.at(-1), count: withArm.statuses.length },
			checks,
			notices: [...withArm.notices, ...withoutArm.notices],
			overhead: (columns[0]?.with ?? 0) - (columns[0]?.without ?? 0),
			compactions: { with: withArm.summaryRequests, without: withoutArm.summaryRequests },
			ms: { wall: performance.now() - started, with: withArm.ms, without: withoutArm.ms },
		}),
	);
	const failed = checks.filter((c) => !c.ok);
	for (const c of failed) process.stderr.write(`demo FAILED: ${c.name}: ${c.detail}\n`);
	return failed.length === 0 ? 0 : 1;
}

main().then(
	(code) => process.exit(code),
	(error: unknown) => {
		process.stderr.write(
			`demo FAILED: could not run the session: ${error instanceof Error ? error.stack : String(error)}\n`,
		);
		process.exit(1);
	},
);
