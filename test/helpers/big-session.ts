/**
 * A large synthetic v3 session file, written fast, for the 100 MB streaming test and the CLI
 * benchmark: rounds of prompt, bash call (with usage) and a big tool result (a template with a
 * unique first line, so every result differs), a context-fold layer every few rounds folding the
 * results before the protected tail, and an abandoned branch in the middle (the user went back with
 * /tree and continued from an earlier entry), whose entries stay in the file but off the branch.
 */
import { closeSync, openSync, writeSync } from "node:fs";
import { countLines, deriveCode, foldMarker, utf8Length } from "../../src/core/digest.ts";
import { estimateTokens } from "../../src/core/tokens.ts";
import { sha256 } from "../../src/store/hash.ts";

export interface BigSessionFacts {
	path: string;
	bytes: number;
	/** Entries in the file, every branch. */
	entries: number;
	/** Entries on the active branch. */
	branchEntries: number;
	layers: number;
	/** Folded blocks: code, the line the test greps for, and the original text. */
	folded: Array<{ code: string; round: number; text: string }>;
	/** The abandoned branch's unique needle (off the branch: never folded, never found by search). */
	offBranchNeedle: string;
}

export const SESSION_ID = "b16b16b1-0000-4000-8000-000000000100";
const CWD = "/work/big-project";
const T0 = Date.parse("2025-12-01T10:00:00.000Z");

/** The needle on the first line of round r's tool result. */
export const needle = (round: number) => `needle-${round}-haystack`;

/** Tool result text of about `bytes` bytes, shared by every round (each adds its own first line). */
function template(bytes: number): string {
	const lines: string[] = [];
	let n = 0;
	for (let i = 0; n < bytes; i++) {
		const line =
			i % 97 === 5
				? `src/módulo/ficheiro-${i}.ts:${i}:7 - error TS2322: tipo «€» não atribuível 😀`
				: `PASS test/suite-${i % 40}/case-${i}.test.ts (${(i * 7919) % 1000} ms) lorem ipsum dolor sit amet`;
		lines.push(line);
		n += utf8Length(line) + 1;
	}
	return lines.join("\n");
}

/** Write the session; about `targetBytes` bytes (a little more). */
export function writeBigSession(
	path: string,
	targetBytes = 105 * 1024 * 1024,
	resultBytes = 256 * 1024,
): BigSessionFacts {
	const body = template(resultBytes);
	const rounds = Math.ceil(targetBytes / (resultBytes + 2048) / 1.1);
	const foldEvery = 8;
	const tail = 2;
	const side = Math.max(2, Math.floor(rounds / 10));
	const fd = openSync(path, "w");
	let bytes = 0;
	let entries = 0;
	let branchEntries = 0;
	let layers = 0;
	const taken = new Set<string>();
	const folded: BigSessionFacts["folded"] = [];
	const pending: Array<{ id: string; round: number; text: string }> = [];
	const write = (entry: Record<string, unknown>, onBranch: boolean) => {
		const line = `${JSON.stringify(entry)}\n`;
		bytes += writeSync(fd, line);
		entries++;
		if (onBranch) branchEntries++;
	};
	try {
		bytes += writeSync(
			fd,
			`${JSON.stringify({ type: "session", version: 3, id: SESSION_ID, timestamp: new Date(T0).toISOString(), cwd: CWD })}\n`,
		);
		let parent: string | null = null;
		let lastResponseAt = 0;
		const round = (r: number, prefix: string, from: string | null, onBranch: boolean): string => {
			const t = T0 + r * 60_000;
			const iso = (ms: number) => new Date(ms).toISOString();
			const text = `${needle(r)}${prefix}\n${body}`;
			write(
				{
					type: "message",
					id: `${prefix}u${r}`,
					parentId: from,
					timestamp: iso(t),
					message: { role: "user", content: [{ type: "text", text: `run the tests, step ${r}` }], timestamp: t },
				},
				onBranch,
			);
			write(
				{
					type: "message",
					id: `${prefix}a${r}`,
					parentId: `${prefix}u${r}`,
					timestamp: iso(t + 1000),
					message: {
						role: "assistant",
						content: [{ type: "toolCall", id: `call-${prefix}${r}`, name: "bash", arguments: { command: "npm test" } }],
						api: "anthropic-messages",
						provider: "anthropic",
						model: "claude-sonnet-4-5",
						usage: { input: 2_000, output: 80, cacheRead: 60_000 + (r % foldEvery) * 8_000, cacheWrite: 1_500 },
						stopReason: "toolUse",
						timestamp: t + 1000,
					},
				},
				onBranch,
			);
			write(
				{
					type: "message",
					id: `${prefix}t${r}`,
					parentId: `${prefix}a${r}`,
					timestamp: iso(t + 2000),
					message: {
						role: "toolResult",
						toolCallId: `call-${prefix}${r}`,
						toolName: "bash",
						content: [{ type: "text", text }],
						isError: false,
						timestamp: t + 2000,
					},
				},
				onBranch,
			);
			if (onBranch) {
				lastResponseAt = t + 1000;
				pending.push({ id: `${prefix}t${r}`, round: r, text });
			}
			return `${prefix}t${r}`;
		};
		for (let r = 0; r < rounds; r++) {
			parent = round(r, "", parent, true);
			if (r === Math.floor(rounds / 2)) {
				// The abandoned branch: written now, continued from nowhere; the main line goes on from `parent`.
				let s: string | null = parent;
				for (let k = 0; k < side; k++) s = round(rounds + k, "x", s, false);
			}
			if ((r + 1) % foldEvery === 0 && pending.length > tail) {
				const fold = pending.splice(0, pending.length - tail);
				const blocks = fold.map((b) => {
					const code = deriveCode(sha256, b.id, 0, taken);
					taken.add(code);
					folded.push({ code, round: b.round, text: b.text });
					return {
						code,
						entryId: b.id,
						blockIndex: 0,
						kind: "toolResult",
						toolName: "bash",
						toolCallId: `call-${b.round}`,
						sha256: sha256(b.text),
						chars: b.text.length,
						bytes: utf8Length(b.text),
						lines: countLines(b.text),
						tokens: estimateTokens(b.text.length),
						digest: `${foldMarker(code)} bash: npm test · ${countLines(b.text)} lines\n${needle(b.round)}`,
					};
				});
				const tokens = blocks.reduce((n, b) => n + b.tokens, 0);
				layers++;
				const id = `cf${String(layers).padStart(6, "0")}`;
				write(
					{
						type: "custom",
						customType: "context-fold",
						id,
						parentId: parent,
						timestamp: new Date(lastResponseAt + 1500).toISOString(),
						data: {
							type: "layer",
							v: 1,
							seq: layers,
							reason: "step",
							lastResponseAt,
							usageBefore: 150_000,
							usageAfter: Math.max(10_000, 150_000 - tokens),
							blocks,
						},
					},
					true,
				);
				parent = id;
			}
		}
	} finally {
		closeSync(fd);
	}
	return { path, bytes, entries, branchEntries, layers, folded, offBranchNeedle: needle(rounds) };
}
