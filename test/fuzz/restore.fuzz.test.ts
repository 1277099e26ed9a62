/**
 * Verification before any restore, as a property. Whatever happened to the session file after the
 * fold (a block's text edited, an entry deleted, the file cut short at any byte, deleted, a block's
 * shape changed, junk appended), every way of getting an original back agrees with the sha256 check:
 * `recall_folded code=` serves exactly the folded bytes or refuses with findOriginal's explanation;
 * `unfold` puts a block back only when recall would serve it, and otherwise refuses with the same
 * explanation; `search=` never counts a block it could not read (the file or the entry gone) as
 * searched without a match. (An entry edited in place that no longer holds the needle is ruled out by
 * search's raw-line prefilter without being parsed; recall and unfold of it are refused.)
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import fc from "fast-check";
import { registerTools } from "../../src/adapters/pi/tools.ts";
import {
	addRecord,
	emptyIndex,
	FOLD_STATE_VERSION,
	type MaskedBlock,
	type UnfoldRecord,
} from "../../src/core/layers.ts";
import { Ledger } from "../../src/store/ledger.ts";
import { findOriginal } from "../../src/store/originals.ts";
import { answerRecall } from "../../src/store/recall.ts";
import { params, report, TIMEOUT } from "./config.ts";
import { sha } from "./oracles.ts";

const dir = mkdtempSync(join(tmpdir(), "cf-fuzz-restore-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type Tamper =
	| { type: "none" }
	| { type: "edit"; block: number; text: string }
	| { type: "delete-entry"; block: number }
	| { type: "truncate"; at: number }
	| { type: "delete-file" }
	| { type: "reshape"; block: number }
	| { type: "append"; junk: string };

const line = fc.string({ unit: "grapheme", maxLength: 40 });
const original = fc.array(line, { minLength: 1, maxLength: 6 }).map((ls) => ls.join("\n"));

const tamper: fc.Arbitrary<Tamper> = fc.oneof(
	fc.constant<Tamper>({ type: "none" }),
	fc.record({ type: fc.constant("edit" as const), block: fc.nat(), text: original }),
	fc.record({ type: fc.constant("delete-entry" as const), block: fc.nat() }),
	fc.record({ type: fc.constant("truncate" as const), at: fc.double({ min: 0, max: 1, noNaN: true }) }),
	fc.constant<Tamper>({ type: "delete-file" }),
	fc.record({ type: fc.constant("reshape" as const), block: fc.nat() }),
	fc.record({ type: fc.constant("append" as const), junk: fc.string({ maxLength: 30 }) }),
);

function entry(id: string, content: unknown[]): string {
	return JSON.stringify({
		type: "message",
		id,
		parentId: null,
		timestamp: "2025-01-01T00:00:00Z",
		message: { role: "toolResult", toolCallId: `c-${id}`, toolName: "bash", content },
	});
}

function block(i: number, text: string): MaskedBlock {
	return {
		code: `c0de${i.toString(16).padStart(2, "0")}`,
		entryId: `e${i}`,
		blockIndex: 0,
		kind: "toolResult",
		toolName: "bash",
		sha256: sha(text),
		chars: text.length,
		bytes: Buffer.byteLength(text),
		lines: text.split("\n").length,
		tokens: Math.ceil(text.length / 4),
		digest: "",
	};
}

/** The session file after the tamper; the original texts are what was folded. */
function writeSession(path: string, texts: string[], t: Tamper): void {
	const n = texts.length;
	const lines = [JSON.stringify({ type: "session", version: 3, id: "s", timestamp: "t", cwd: dir })];
	texts.forEach((text, i) => {
		const k = (t.type === "edit" || t.type === "delete-entry" || t.type === "reshape") && t.block % n === i;
		if (k && t.type === "delete-entry") return;
		if (k && t.type === "edit") lines.push(entry(`e${i}`, [{ type: "text", text: t.text }]));
		else if (k && t.type === "reshape")
			lines.push(entry(`e${i}`, [{ type: "image", data: "", mimeType: "image/png" }]));
		else lines.push(entry(`e${i}`, [{ type: "text", text }]));
	});
	let body = `${lines.join("\n")}\n`;
	if (t.type === "append") body += `${t.junk}\n`;
	if (t.type === "truncate")
		body = Buffer.from(body)
			.subarray(0, Math.floor(Buffer.byteLength(body) * t.at))
			.toString();
	rmSync(path, { force: true });
	if (t.type !== "delete-file") writeFileSync(path, body);
}

interface Tool {
	name: string;
	execute(id: string, params: Record<string, string>): Promise<{ content: Array<{ text: string }>; isError?: boolean }>;
}

describe("fuzz: verification before any restore", () => {
	test(
		"recall, unfold and search agree with the sha256 check, whatever happened to the session file",
		async () => {
			const counts = { cases: 0, served: 0, refused: 0, unfolded: 0, unfoldRefused: 0, searches: 0 };
			let seq = 0;
			await fc.assert(
				fc.asyncProperty(fc.array(original, { minLength: 1, maxLength: 4 }), tamper, async (texts, t) => {
					const path = join(dir, `s${seq++ % 4}.jsonl`);
					writeSession(path, texts, t);
					const index = emptyIndex();
					const blocks = texts.map((text, i) => block(i, text));
					addRecord(index, {
						type: "layer",
						v: FOLD_STATE_VERSION,
						seq: 1,
						reason: "threshold",
						lastResponseAt: 0,
						usageBefore: 0,
						usageAfter: 0,
						blocks,
					});
					const ledger = new Ledger(path);
					const committed: UnfoldRecord[] = [];
					const tools = new Map<string, Tool>();
					const capture = { registerTool: (tool: Tool) => tools.set(tool.name, tool) } as unknown as ExtensionAPI;
					registerTools(capture, {
						sources: () => ({ index, ledger }),
						recallTokens: () => 1_000_000,
						commitUnfold: (r) => committed.push(r),
					});
					const unfold = tools.get("unfold") as Tool;
					let unreadable = 0;
					for (const [i, b] of blocks.entries()) {
						const verdict = findOriginal(b, ledger);
						const recall = answerRecall({ code: b.code, maxTokens: null }, { index, ledger });
						if (verdict.ok) {
							// Served only the folded bytes, never anything else.
							expect(verdict.text).toBe(texts[i] as string);
							expect(recall.ok).toBe(true);
							expect(recall.text.endsWith(`(sha256 verified):\n${texts[i]}`)).toBe(true);
							counts.served++;
						} else {
							if (verdict.reason !== "sha-mismatch" && verdict.reason !== "shape") unreadable++;
							expect(recall).toEqual({ ok: false, text: verdict.message, served: [] });
							counts.refused++;
						}
						const before = committed.length;
						const answer = await unfold.execute(`u${i}`, { code: b.code });
						const text = answer.content[0]?.text ?? "";
						if (verdict.ok) {
							expect(committed.length).toBe(before + 1);
							expect(committed.at(-1)?.codes).toEqual([b.code]);
							counts.unfolded++;
						} else {
							// Nothing put back, and the same explanation recall gives.
							expect(committed.length).toBe(before);
							expect(answer.isError).toBe(true);
							expect(text).toBe(verdict.message);
							counts.unfoldRefused++;
						}
					}
					const head = (answerRecall({ search: "zq-never-there", maxTokens: null }, { index, ledger }).text.split(
						"\n",
					)[0] ?? "") as string;
					if (unreadable > 0) {
						expect(head).toContain("could not");
						expect(head).not.toContain(`no match in ${blocks.length} folded block(s).`);
					} else expect(head).toMatch(/^search "zq-never-there": no match in /);
					counts.searches++;
					counts.cases++;
				}),
				params(),
			);
			report("restore", counts);
		},
		TIMEOUT,
	);
});
