/**
 * recall_folded's arguments come from the model, so they are untrusted. Whatever they are (paths,
 * traversal, NUL bytes, codes that look like paths or markers, huge or empty values), recall only
 * ever answers from the session's own ledger: it never throws, never serves another file's bytes,
 * serves a known block only verified, and keeps every answer within its cap.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { addRecord, emptyIndex, FOLD_STATE_VERSION, type MaskedBlock } from "../../src/core/layers.ts";
import { splitLines } from "../../src/core/lexicon.ts";
import { Ledger } from "../../src/store/ledger.ts";
import { answerRecall } from "../../src/store/recall.ts";
import { check, params, report, TIMEOUT } from "./config.ts";
import { sha } from "./oracles.ts";

const dir = mkdtempSync(join(tmpdir(), "cf-fuzz-recall-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const CANARY = "CANARY-7d1f0e-must-never-be-served";
const canaryFile = join(dir, "outside", "secret.txt");
mkdirSync(join(dir, "outside"));
writeFileSync(canaryFile, `${CANARY}\n`.repeat(20));
symlinkSync(canaryFile, join(dir, "link-to-secret"));

// The session: one folded tool result, with a full-output file recorded by the tool itself.
const ORIGINAL = Array.from({ length: 60 }, (_, i) => `line ${i + 1} ${i === 30 ? "error: boom" : "ok"}`).join("\n");
const fullOutput = join(dir, "full.log");
writeFileSync(fullOutput, `${ORIGINAL}\nline 61 only in the full output\n`);
const sessionPath = join(dir, "session.jsonl");
writeFileSync(
	sessionPath,
	`${[
		{ type: "session", version: 3, id: "s", timestamp: "t", cwd: dir },
		{
			type: "message",
			id: "e1",
			parentId: null,
			timestamp: "t",
			message: {
				role: "toolResult",
				toolCallId: "c1",
				toolName: "bash",
				content: [{ type: "text", text: ORIGINAL }],
				details: { fullOutputPath: fullOutput },
			},
		},
	]
		.map((e) => JSON.stringify(e))
		.join("\n")}\n`,
);
const CODE = "a1b2c3";
const block: MaskedBlock = {
	code: CODE,
	entryId: "e1",
	blockIndex: 0,
	kind: "toolResult",
	toolName: "bash",
	sha256: sha(ORIGINAL),
	chars: ORIGINAL.length,
	bytes: Buffer.byteLength(ORIGINAL),
	lines: splitLines(ORIGINAL).length,
	tokens: Math.ceil(ORIGINAL.length / 4),
	digest: `{#${CODE} FOLDED} bash`,
	// A record claiming another path is ignored: recall reads the path from the session's own entry.
	fullOutputPath: canaryFile,
};
const index = emptyIndex();
addRecord(index, {
	type: "layer",
	v: FOLD_STATE_VERSION,
	seq: 1,
	reason: "step",
	lastResponseAt: 0,
	usageBefore: 0,
	usageAfter: 0,
	blocks: [block],
});

const hostile = fc.oneof(
	fc.constantFrom(
		canaryFile,
		join(dir, "link-to-secret"),
		"../../../../etc/passwd",
		"/etc/passwd",
		"..",
		"./a1b2c3",
		"a1b2c3/../../outside/secret.txt",
		"a1b2c3\u0000../../etc/passwd",
		"\u0000",
		"{#../../etc/passwd FOLDED}",
		`{#${CODE} FOLDED}`,
		`#${CODE}`,
		` ${CODE.toUpperCase()} `,
		"a1b2c",
		"a1b2c3d4",
		"file:///etc/passwd",
		"~/.ssh/id_rsa",
		"C:\\Windows\\system32",
		"%2e%2e%2f%2e%2e%2fetc%2fpasswd",
		"__proto__",
		"constructor",
		"1-2",
		"0-0",
		"99999999999999999999-1",
		"1-99999999999999",
		"-5",
		"a-b",
		"",
		" ",
		"\n",
		"error",
		CANARY,
	),
	fc.string({ maxLength: 40 }),
	fc.string({ unit: "binary", maxLength: 40 }),
	fc.string({ maxLength: 600 }),
	fc.tuple(fc.nat(), fc.nat()).map(([a, b]) => `${a}-${b}`),
	// The real code, in the spellings a model uses, so the served path is exercised too.
	fc.constantFrom(CODE, `{#${CODE} FOLDED}`, `#${CODE}`, CODE.toUpperCase()),
);

describe("fuzz: recall_folded with model-supplied arguments", () => {
	test(
		"never throws, never reads outside the session's ledger, serves only verified bytes, stays within its cap",
		() => {
			let cases = 0;
			let served = 0;
			const ledger = new Ledger(sessionPath);
			check(
				fc.property(
					fc.record({ code: hostile, search: hostile, grep: hostile, lines: hostile }, { requiredKeys: [] }),
					fc.oneof(fc.constant(null), fc.integer({ min: 1, max: 4000 })),
					(args, maxTokens) => {
						cases++;
						const answer = answerRecall({ ...args, maxTokens }, { index, ledger });
						if (typeof answer.text !== "string") throw new Error("no answer text");
						if (
							answer.text.includes(CANARY) &&
							!(
								args.search?.includes(CANARY) ||
								args.grep?.includes(CANARY) ||
								args.code?.includes(CANARY) ||
								args.lines?.includes(CANARY)
							)
						)
							throw new Error("recall served bytes from a file outside the session");
						if (answer.text.split("\n").some((l) => l.startsWith("L") && l.includes(CANARY)))
							throw new Error("recall served a line of another file");
						for (const c of answer.served) if (c !== CODE) throw new Error(`served an unknown code ${c}`);
						if (answer.served.length > 0) served++;
						if (maxTokens !== null) {
							// The cap holds: the cut note is one line past it at most.
							const lines = answer.text.split("\n");
							const body = lines.slice(0, -1).join("\n");
							if (body.length > maxTokens * 4 + 2 && lines.length > 1)
								throw new Error(`answer over its cap: ${answer.text.length} chars for ${maxTokens} tokens`);
						}
					},
				),
				params(),
			);
			report("recall-arguments", { cases, served });
			expect(served).toBeGreaterThan(0);
		},
		TIMEOUT,
	);
});
