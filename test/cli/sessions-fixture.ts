// Small synthetic sessions for the CLI tests that need no trace: a v3 session with one bash result
// folded by context-fold (the fold record written as the extension writes it), optionally truncated
// by Pi with its full output in a file, and a plain one that never folded.
import { createHash } from "node:crypto";
import { writeFileSync } from "node:fs";
import { renderDigest } from "../../src/core/digest.ts";
import type { FrozenLayer } from "../../src/core/layers.ts";

/** sha256 in hex, as the store computes it (kept local so this file depends on no store module). */
const sha256Hex = (text: string): string => createHash("sha256").update(text, "utf8").digest("hex");

export const FOLDED_CODE = "a1b2c3";
const T = "2025-12-01T10:00:00.000Z";

export interface FoldedSessionOptions {
	id: string;
	cwd?: string;
	/** The bash result's text as the session holds it. */
	text: string;
	command?: string;
	/** Pi's full-output file of a truncated result (details.fullOutputPath). */
	fullOutputPath?: string;
	/** No fold record: a session that never folded. */
	unfolded?: boolean;
	provider?: string;
	model?: string;
}

/** The session's entries after the header, parent-linked, as Pi 1.x writes them. */
export function foldedSessionLines(o: FoldedSessionOptions): string[] {
	const command = o.command ?? "make test";
	const usage = { input: 1_000, output: 10, cacheRead: 20_000, cacheWrite: 500 };
	const assistant = (content: unknown[]) => ({
		role: "assistant",
		content,
		api: "anthropic-messages",
		provider: o.provider ?? "anthropic",
		model: o.model ?? "claude-sonnet-4-5",
		usage,
		stopReason: "stop",
		timestamp: 2,
	});
	const entries: Array<Record<string, unknown>> = [
		{ type: "message", id: "m1", message: { role: "user", content: [{ type: "text", text: "run the tests" }] } },
		{
			type: "message",
			id: "m2",
			message: assistant([{ type: "toolCall", id: "call_1", name: "bash", arguments: { command } }]),
		},
		{
			type: "message",
			id: "m3",
			message: {
				role: "toolResult",
				toolCallId: "call_1",
				toolName: "bash",
				content: [{ type: "text", text: o.text }],
				...(o.fullOutputPath !== undefined && { details: { fullOutputPath: o.fullOutputPath } }),
				isError: false,
				timestamp: 3,
			},
		},
	];
	if (o.unfolded !== true) {
		const { digest, lines } = renderDigest({
			code: FOLDED_CODE,
			kind: "toolResult",
			toolName: "bash",
			callSummary: command,
			text: o.text,
		});
		const layer: FrozenLayer = {
			type: "layer",
			v: 1,
			seq: 1,
			reason: "threshold",
			lastResponseAt: 2,
			usageBefore: 21_500,
			usageAfter: 20_000,
			blocks: [
				{
					code: FOLDED_CODE,
					entryId: "m3",
					blockIndex: 0,
					kind: "toolResult",
					toolName: "bash",
					toolCallId: "call_1",
					sha256: sha256Hex(o.text),
					chars: o.text.length,
					bytes: Buffer.byteLength(o.text),
					lines,
					tokens: Math.ceil(o.text.length / 4),
					digest,
					...(o.fullOutputPath !== undefined && { fullOutputPath: o.fullOutputPath }),
				},
			],
		};
		entries.push({ type: "custom", customType: "context-fold", id: "cf1", data: layer });
	}
	entries.push({ type: "message", id: "m4", message: assistant([{ type: "text", text: "all green" }]) });
	const header = { type: "session", version: 3, id: o.id, timestamp: T, cwd: o.cwd ?? "/p/app" };
	return [
		JSON.stringify(header),
		...entries.map((e, i) => JSON.stringify({ ...e, parentId: i === 0 ? null : entries[i - 1]?.id, timestamp: T })),
	];
}

export function writeFoldedSession(path: string, o: FoldedSessionOptions): string {
	writeFileSync(path, `${foldedSessionLines(o).join("\n")}\n`);
	return path;
}
