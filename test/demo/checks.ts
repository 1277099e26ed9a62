/**
 * What the demo proves, each as a check that can fail: the session played in full in both arms,
 * folds fired, the buried line came back exactly through recall_folded, and the session file of the
 * folded run holds every raw tool output byte for byte.
 */
import { contentText } from "../e2e/cf.ts";
import type { SessionEntry } from "../e2e/harness/index.ts";
import type { ArmResult } from "./arm.ts";
import { type FoldEvent, layersOf } from "./measure.ts";
import { RECALL_TOOL } from "./model.ts";
import type { DemoSession } from "./session.ts";

const DIGEST = /^\{#[0-9a-f]{6,64} FOLDED\}/;

export interface Check {
	name: string;
	ok: boolean;
	detail: string;
}

interface ToolResult {
	id: string;
	name: string;
	content: string;
	text: string;
	isError: boolean;
}

export function toolResults(entries: readonly SessionEntry[]): ToolResult[] {
	return entries.flatMap((e) => {
		const m = e.message;
		if (e.type !== "message" || m?.role !== "toolResult") return [];
		return [
			{
				id: String(m.toolCallId ?? ""),
				name: String(m.toolName ?? ""),
				content: JSON.stringify(m.content ?? null),
				text: contentText(m.content as never),
				isError: m.isError === true,
			},
		];
	});
}

export interface RawCheck extends Check {
	compared: number;
	bytes: number;
	/** Tool results only the folded run has (its recall_folded calls). */
	extra: string[];
}

/** Every tool result of the unfolded run appears in the folded run's session file with identical content. */
export function rawBytes(withArm: ArmResult, withoutArm: ArmResult): RawCheck {
	const folded = new Map(toolResults(withArm.entries).map((t) => [t.id, t]));
	const problems: string[] = [];
	let bytes = 0;
	const plain = toolResults(withoutArm.entries);
	for (const t of plain) {
		const f = folded.get(t.id);
		if (!f) problems.push(`${t.id} (${t.name}) missing`);
		else if (f.content !== t.content || f.isError !== t.isError) problems.push(`${t.id} (${t.name}) differs`);
		else bytes += Buffer.byteLength(t.text);
		folded.delete(t.id);
	}
	for (const t of toolResults(withArm.entries)) if (DIGEST.test(t.text)) problems.push(`${t.id} holds a digest`);
	const extra = [...folded.values()].map((t) => t.name);
	if (extra.some((n) => n !== RECALL_TOOL)) problems.push(`unexpected extra results: ${extra.join(", ")}`);
	return {
		name: "session file keeps every raw tool output",
		ok: problems.length === 0 && plain.length > 0,
		detail: problems.length === 0 ? `${plain.length} results identical` : problems.slice(0, 3).join("; "),
		compared: plain.length,
		bytes,
		extra,
	};
}

export interface RecallCheck extends Check {
	/** The buried line, as the original CI log holds it. */
	line: string;
	lineNumber: number;
	code: string;
	searchAnswer: string;
	codeHeader: string;
	/** Lines of the recalled original compared with the session file's copy, all identical. */
	identicalLines: number;
	/** The request that asked for the search no longer showed the line anywhere. */
	hiddenBeforeRecall: boolean;
	/** CHANGELOG.md of the folded run quotes the line the model recalled. */
	changelog: boolean;
}

export function recall(withArm: ArmResult, session: DemoSession): RecallCheck {
	const turns = session.phases.flatMap((p) => p.turns);
	const searchTurn = turns.find((t) => t.kind === "recall-search");
	const codeTurn = turns.find((t) => t.kind === "recall-code");
	const results = toolResults(withArm.entries);
	const original = results.find((t) => t.name === "bash" && t.text.includes(session.buildLine));
	const lines = original?.text.split("\n") ?? [];
	const lineIndex = lines.findIndex((l) => l.includes(session.buildLine));
	const line = lines[lineIndex] ?? "";
	const search = results.find((t) => searchTurn?.kind === "recall-search" && t.id === searchTurn.callId);
	const answer = results.find((t) => codeTurn?.kind === "recall-code" && t.id === codeTurn.callId);
	const code = /\{#([0-9a-f]{6,64})\}/.exec(search?.text ?? "")?.[1] ?? "";
	const searchAnswer =
		(search?.text ?? "").split("\n").find((l) => /^\s+L\d+: /.test(l) && l.includes(session.needle)) ?? "";
	const [codeHeader = "", ...body] = (answer?.text ?? "").split("\n");
	let identical = 0;
	while (identical < body.length && body[identical] === lines[identical]) identical++;
	const folded = layersOf(withArm.entries).flatMap((l) => l.blocks);
	const served = withArm.served.find((s) => s.turn === searchTurn?.id);
	const asked = withArm.requests.find((r) => r.index === served?.request);
	const hiddenBeforeRecall = asked !== undefined && !asked.lineVisible;
	const failures: string[] = [];
	if (!original) failures.push("no raw CI log in the session");
	if (!search || !answer) failures.push("recall_folded was not called twice");
	if (folded.find((b) => b.code === code)?.toolCallId !== original?.id)
		failures.push("the code found is not the CI log's fold");
	if (searchAnswer !== `  L${lineIndex + 1}: ${line}`) failures.push("search did not show the line");
	if (!codeHeader.startsWith(`{#${code}} bash`) || !codeHeader.endsWith("(sha256 verified):"))
		failures.push("no verified header");
	if (!body.includes(line) || identical <= lineIndex) failures.push("recalled text differs from the original");
	if (!hiddenBeforeRecall) failures.push("the line was still in view before recall");
	const changelog = withArm.changelog.includes(session.buildLine);
	if (!changelog) failures.push("CHANGELOG.md lacks the line");
	return {
		name: "recall_folded returned the buried line exactly",
		ok: failures.length === 0,
		detail:
			failures.length === 0 ? `{#${code}} line ${lineIndex + 1}, ${identical} lines identical` : failures.join("; "),
		line,
		lineNumber: lineIndex + 1,
		code,
		searchAnswer,
		codeHeader,
		identicalLines: identical,
		hiddenBeforeRecall,
		changelog,
	};
}

/** Both arms answered every turn they should have, and nothing in the sandbox misfired. */
export function played(arm: ArmResult, session: DemoSession, label: string): Check {
	const expected = session.phases
		.flatMap((p) => p.turns)
		.filter((t) => arm.fold || (t.kind !== "recall-search" && t.kind !== "recall-code"))
		.map((t) => t.id);
	const got = arm.served.map((s) => s.turn);
	const results = toolResults(arm.entries);
	const failures: string[] = [];
	if (got.join() !== expected.join()) failures.push(`served ${got.length} of ${expected.length} turns`);
	if (arm.requests.length !== got.length) failures.push(`${arm.requests.length} requests for ${got.length} turns`);
	if (arm.summaryRequests > 0) failures.push(`Pi compacted ${arm.summaryRequests} time(s)`);
	const broken = results.filter((t) => t.text.includes("demo shim:") || (t.isError && t.name !== "bash"));
	if (broken.length > 0) failures.push(`${broken.length} tool call(s) misfired: ${broken[0]?.text.slice(0, 120)}`);
	if (arm.problems.length > 0) failures.push(arm.problems[0] as string);
	if (!arm.changelog.includes(session.buildLine)) failures.push("CHANGELOG.md lacks the BUILD_ID line");
	return {
		name: `${label}: session played in full`,
		ok: failures.length === 0,
		detail: failures.length === 0 ? `${got.length} turns, ${results.length} tool results` : failures.join("; "),
	};
}

export function folds(withArm: ArmResult, withoutArm: ArmResult, events: readonly FoldEvent[]): Check {
	const failures: string[] = [];
	if (events.length === 0) failures.push("no fold event fired");
	if (events.some((e) => e.request === 0)) failures.push("a committed fold never reached the wire");
	if (withoutArm.requests.some((r) => r.codes.length > 0) || layersOf(withoutArm.entries).length > 0) {
		failures.push("CONTEXTFOLD=0 run folded");
	}
	const status = withArm.statuses.at(-1) ?? "";
	if (!status.startsWith(`⧉ context-fold ×${events.length} `)) failures.push(`footer status says "${status}"`);
	return {
		name: "folds fired (and only with context-fold on)",
		ok: failures.length === 0,
		detail: failures.length === 0 ? `${events.length} fold events on the wire, 0 without` : failures.join("; "),
	};
}
