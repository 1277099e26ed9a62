/**
 * Digests and originals over random text: every risk line kept verbatim within the documented cap
 * with the overflow marked, extents exact (UTF-16 chars, UTF-8 bytes, lines), and originals read back
 * from a session file byte for byte, verified by sha256, or refused when the file was changed.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { countLines, type DigestInput, renderDigest, utf8Length } from "../../src/core/digest.ts";
import type { MaskedBlock } from "../../src/core/layers.ts";
import { splitLines } from "../../src/core/lexicon.ts";
import { Ledger } from "../../src/store/ledger.ts";
import { findOriginal } from "../../src/store/originals.ts";
import { check, params, report, TIMEOUT } from "./config.ts";
import { textArb } from "./gen.ts";
import { checkDigest, sha } from "./oracles.ts";

const dir = mkdtempSync(join(tmpdir(), "cf-fuzz-digest-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const codeArb = fc.stringMatching(/^[0-9a-f]{6}$/);

describe("fuzz: digests", () => {
	test(
		"risk lines verbatim within the cap, overflow marked, extents exact, rendering deterministic",
		() => {
			let cases = 0;
			let riskLines = 0;
			let overflowed = 0;
			check(
				fc.property(
					textArb(),
					codeArb,
					fc.option(fc.string({ maxLength: 120 }), { nil: undefined }),
					fc.boolean(),
					(text, code, call, thinking) => {
						cases++;
						const input: DigestInput = {
							code,
							kind: thinking ? "thinking" : "toolResult",
							toolName: "bash",
							text,
							...(call !== undefined && { callSummary: call }),
						};
						const a = renderDigest(input);
						const b = renderDigest({ ...input });
						if (a.digest !== b.digest) throw new Error("renderDigest is not deterministic");
						if (call !== undefined && /[\r\n\u2028\u2029]/.test(a.digest.split("\n")[0] ?? ""))
							throw new Error("a call summary broke the header line");
						const d = checkDigest(a.digest, text, code);
						riskLines += d.riskLines;
						if (d.kept < d.riskLines) overflowed++;
						if (utf8Length(text) !== Buffer.byteLength(text, "utf8")) throw new Error("utf8Length");
						if (countLines(text) !== splitLines(text).length) throw new Error("countLines");
					},
				),
				params(),
			);
			report("digest", { cases, riskLines, overflowed });
			expect(overflowed).toBeGreaterThan(0);
		},
		TIMEOUT,
	);
});

describe("fuzz: originals from the session file", () => {
	test(
		"byte for byte and sha256-verified through malformed lines and CRLF; a changed block is refused, never served",
		() => {
			let cases = 0;
			let refused = 0;
			let bytes = 0;
			const path = join(dir, "s.jsonl");
			check(
				fc.property(
					fc.array(textArb(), { minLength: 1, maxLength: 4 }),
					fc.array(fc.constantFrom("garbage", "{not json", "[1,2]", '{"type":"message"}{"glued":1}', ""), {
						maxLength: 3,
					}),
					fc.boolean(),
					fc.option(fc.nat(), { nil: null }),
					(texts, junk, crlf, tamper) => {
						cases++;
						const eol = crlf ? "\r\n" : "\n";
						const lines = [JSON.stringify({ type: "session", version: 3, id: "s", timestamp: "t", cwd: "/" })];
						texts.forEach((t, i) => {
							if (junk[i] !== undefined) lines.push(junk[i] as string);
							const stored = tamper === i ? `${t}!` : t;
							lines.push(
								JSON.stringify({
									type: "message",
									id: `e${i}`,
									parentId: null,
									timestamp: "t",
									message: { role: "toolResult", toolCallId: `c${i}`, content: [{ type: "text", text: stored }] },
								}),
							);
						});
						writeFileSync(path, `${lines.join(eol)}${eol}`);
						const ledger = new Ledger(path);
						texts.forEach((t, i) => {
							const block: MaskedBlock = {
								code: `c0de${String(i).padStart(2, "0")}`,
								entryId: `e${i}`,
								blockIndex: 0,
								kind: "toolResult",
								sha256: sha(t),
								chars: t.length,
								bytes: Buffer.byteLength(t),
								lines: splitLines(t).length,
								tokens: Math.ceil(t.length / 4),
								digest: "",
							};
							const got = findOriginal(block, ledger);
							if (tamper === i) {
								if (got.ok) throw new Error("a changed block was served");
								refused++;
							} else {
								if (!got.ok) throw new Error(`an intact block was refused: ${got.message}`);
								if (got.text !== t) throw new Error("different bytes were served");
								bytes += Buffer.byteLength(t);
							}
						});
					},
				),
				params(),
			);
			report("originals", { cases, refused, bytes });
			expect(refused).toBeGreaterThan(0);
		},
		TIMEOUT,
	);
});
