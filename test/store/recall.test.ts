import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CONTROL_CHAR } from "../../src/core/escape.ts";
import { addRecord, emptyIndex, type MaskedBlock, type MaskIndex } from "../../src/core/layers.ts";
import { MAX_LINE_RANGE } from "../../src/core/recall.ts";
import { sha256 } from "../../src/store/hash.ts";
import { Ledger } from "../../src/store/ledger.ts";
import { MemoryOriginals } from "../../src/store/originals.ts";
import { answerRecall, type RecallSources } from "../../src/store/recall.ts";

const dirs: string[] = [];
afterEach(() => {
	for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function tmp(): string {
	const d = mkdtempSync(join(tmpdir(), "cf-recall-"));
	dirs.push(d);
	return d;
}

const BIG = Array.from(
	{ length: 300 },
	(_, i) => `line ${i + 1} of the build log${i === 41 ? " ERROR: disk full" : ""}`,
).join("\n");
const SMALL = "alpha\nbeta NEEDLE\ngamma";

function masked(code: string, entryId: string, text: string, extra: Partial<MaskedBlock> = {}): MaskedBlock {
	return {
		code,
		entryId,
		blockIndex: 0,
		kind: "toolResult",
		toolName: "bash",
		sha256: sha256(text),
		chars: text.length,
		bytes: Buffer.byteLength(text),
		lines: text.split("\n").length,
		tokens: Math.ceil(text.length / 4),
		digest: `{#${code} FOLDED} bash`,
		...extra,
	};
}

function setup(opts: { fullOutputPath?: string; tamper?: boolean } = {}): {
	ledger: Ledger;
	index: MaskIndex;
	path: string;
} {
	const dir = tmp();
	const path = join(dir, "s.jsonl");
	const e = (id: string, text: string, details?: unknown) =>
		JSON.stringify({
			type: "message",
			id,
			parentId: null,
			timestamp: "t",
			message: { role: "toolResult", content: [{ type: "text", text }], ...(details !== undefined && { details }) },
		});
	const bigStored = opts.tamper ? BIG.replace("line 7 ", "line 7!") : BIG;
	writeFileSync(
		path,
		`${[JSON.stringify({ type: "session", version: 3, id: "s" }), e("e1", bigStored, opts.fullOutputPath ? { fullOutputPath: opts.fullOutputPath } : undefined), e("e2", SMALL)].join("\n")}\n`,
	);
	const index = emptyIndex();
	addRecord(index, {
		type: "layer",
		v: 1,
		seq: 1,
		reason: "threshold",
		lastResponseAt: 0,
		usageBefore: 0,
		usageAfter: 0,
		blocks: [masked("a1b2c3", "e1", BIG), masked("d4e5f6", "e2", SMALL)],
	});
	return { ledger: new Ledger(path), index, path };
}

/** One folded block whose original is held in memory (a session without a file). */
function fromMemory(code: string, entryId: string, text: string): RecallSources {
	const memory = new MemoryOriginals();
	memory.put(code, text);
	const index = emptyIndex();
	addRecord(index, {
		type: "layer",
		v: 1,
		seq: 1,
		reason: "threshold",
		lastResponseAt: 0,
		usageBefore: 0,
		usageAfter: 0,
		blocks: [masked(code, entryId, text)],
	});
	return { index, ledger: null, memory };
}

describe("answerRecall", () => {
	test("whole original, sha-verified, exact bytes", () => {
		const { ledger, index } = setup();
		const a = answerRecall({ code: "d4e5f6", maxTokens: 4000 }, { index, ledger });
		expect(a).toEqual({
			ok: true,
			text: `{#d4e5f6} bash · 23 chars, 3 lines (sha256 verified):\n${SMALL}`,
			served: ["d4e5f6"],
		});
	});
	test.each(["{#d4e5f6 FOLDED}", "#d4e5f6", " D4E5F6 ", "d4e5f6}"])("code spelled %p resolves", (code) => {
		const { ledger, index } = setup();
		expect(answerRecall({ code, maxTokens: 4000 }, { index, ledger }).ok).toBe(true);
	});
	test("an unknown code is quoted back on one line, its control characters escaped (found by the fuzz)", () => {
		const { ledger, index } = setup();
		const a = answerRecall({ code: "\n\u0000", maxTokens: 1 }, { index, ledger });
		expect(a.ok).toBe(false);
		expect(a.text).not.toContain("\n");
		expect(a.text).not.toContain("\u0000");
		expect(a.text).toContain('no folded block is called "\\n\\u0000"');
		const esc = answerRecall({ code: "ab\u001b[2Jcd\r\t\u2028", maxTokens: 4000 }, { index, ledger });
		expect(esc.text).toContain('"ab\\u001b[2Jcd\\r\\t\\u2028"');
	});
	test("the cap cuts and says how to continue", () => {
		const { ledger, index } = setup();
		const a = answerRecall({ code: "a1b2c3", maxTokens: 200 }, { index, ledger });
		expect(a.ok).toBe(true);
		expect(a.text.length).toBeLessThanOrEqual(200 * 4 + 200);
		expect(a.text).toMatch(
			/\[… cut at the answer cap: lines \d+-300 not shown\. Ask recall_folded code=a1b2c3 lines=\d+-\d+ or grep=<text>\]$/,
		);
	});
	test("grep gives matching lines with context and line numbers", () => {
		const { ledger, index } = setup();
		const a = answerRecall({ code: "a1b2c3", grep: "disk full", maxTokens: 4000 }, { index, ledger });
		expect(a.text).toBe(
			[
				'{#a1b2c3} bash · 7,708 chars, 300 lines: 1 matching line for "disk full"',
				"L40: line 40 of the build log",
				"L41: line 41 of the build log",
				"L42: line 42 of the build log ERROR: disk full",
				"L43: line 43 of the build log",
				"L44: line 44 of the build log",
			].join("\n"),
		);
	});
	test("lines gives a range", () => {
		const { ledger, index } = setup();
		const a = answerRecall({ code: "a1b2c3", lines: "299-310", maxTokens: 4000 }, { index, ledger });
		expect(a.text).toBe(
			"{#a1b2c3} bash · 7,708 chars, 300 lines: lines 299-300 of 300\nL299: line 299 of the build log\nL300: line 300 of the build log",
		);
	});
	test("search sweeps every folded block, grouped by code", () => {
		const { ledger, index } = setup();
		const a = answerRecall({ search: "needle", maxTokens: 4000 }, { index, ledger });
		expect(a.text).toBe(
			'search "needle": 1 matching line in 1 of 2 folded blocks.\n{#d4e5f6} bash · 23 chars, 3 lines: 1 match\n  L2: beta NEEDLE',
		);
		expect(answerRecall({ search: "zzz", maxTokens: 4000 }, { index, ledger }).text).toBe(
			'search "zzz": no match in 2 folded blocks.',
		);
	});
	test("grep and lines read the recorded full-output file when it exists, and say when it is gone", () => {
		const dir = tmp();
		const full = join(dir, "pi-bash-full.log");
		writeFileSync(full, `${"dropped NEEDLE-0\n"}${BIG}\n`);
		const { ledger, index } = setup({ fullOutputPath: full });
		const a = answerRecall({ code: "a1b2c3", grep: "NEEDLE-0", maxTokens: 4000 }, { index, ledger });
		expect(a.text).toContain(`(from the full output file ${full})`);
		expect(a.text).toContain("L1: dropped NEEDLE-0");
		rmSync(full);
		const b = answerRecall({ code: "a1b2c3", grep: "NEEDLE-0", maxTokens: 4000 }, { index, ledger });
		expect(b.text).toContain("no line matches");
		expect(b.text).toContain(`the full output file ${full} no longer exists`);
	});
	test("a tampered ledger is refused with the sha explanation", () => {
		const { ledger, index } = setup({ tamper: true });
		const a = answerRecall({ code: "a1b2c3", maxTokens: 4000 }, { index, ledger });
		expect(a.ok).toBe(false);
		expect(a.text).toContain("{#a1b2c3}: refused. The bytes now at entry e1 block 0 do not match what was folded");
		expect(a.text).toContain("The session file was edited after the fold.");
	});
	test("a missing session file and a missing entry are explained", () => {
		const { index } = setup();
		const gone = answerRecall(
			{ code: "a1b2c3", maxTokens: 4000 },
			{ index, ledger: new Ledger("/no/such/file.jsonl") },
		);
		expect(gone).toEqual({ ok: false, text: "session file not found: /no/such/file.jsonl", served: [] });
		const dir = tmp();
		const other = join(dir, "o.jsonl");
		writeFileSync(other, `${JSON.stringify({ type: "session", version: 3, id: "x" })}\n`);
		expect(answerRecall({ code: "a1b2c3", maxTokens: 4000 }, { index, ledger: new Ledger(other) }).text).toContain(
			"entry e1 is no longer in the session file",
		);
	});
	test("search when the blocks cannot be read says so, and why, instead of 'no match' (issue 16)", () => {
		const { index, path } = setup();
		// The session file is gone: nothing could be searched.
		const gone = answerRecall({ search: "NEEDLE", maxTokens: 4000 }, { index, ledger: new Ledger(`${path}.gone`) });
		expect(gone.text).toBe(
			`search "NEEDLE": could not search: none of the 2 folded blocks could be read, so nothing was searched (session file not found: ${path}.gone …).`,
		);
		// The file was cut short: the entry holding the needle is no longer there.
		const cut = join(tmp(), "cut.jsonl");
		const lines = readFileSync(path, "utf8").split("\n");
		writeFileSync(cut, `${lines.slice(0, 2).join("\n")}\n`);
		const a = answerRecall({ search: "NEEDLE", maxTokens: 4000 }, { index, ledger: new Ledger(cut) });
		expect(a.text).toBe(
			`search "NEEDLE": no match in the 1 of 2 folded blocks that could be read. 1 block could not be searched: {#d4e5f6}: entry e2 is no longer in the session file ${cut}; the original cannot be served.`,
		);
		// A block that does match is still found, and the unreadable one is still reported.
		const b = answerRecall({ search: "ERROR: disk", maxTokens: 4000 }, { index, ledger: new Ledger(cut) });
		expect(b.text.split("\n")[0]).toBe(
			`search "ERROR: disk": 1 matching line in 1 of 2 folded blocks. 1 block could not be searched: {#d4e5f6}: entry e2 is no longer in the session file ${cut}; the original cannot be served.`,
		);
	});
	test("every echoed argument has its control characters escaped; recalled bytes stay exact (issue 16)", () => {
		const { ledger, index } = setup();
		const nasty = "\u001b[31mNEEDLE\u0007\b\u007f\r\u009b";
		const g = answerRecall({ code: "d4e5f6", grep: nasty, maxTokens: 4000 }, { index, ledger });
		expect(g.text).toBe(
			'{#d4e5f6} bash · 23 chars, 3 lines: no line matches "\\u001b[31mNEEDLE\\u0007\\u0008\\u007f\\r\\u009b".',
		);
		const s2 = answerRecall({ search: `x\u0000${nasty}`, maxTokens: 4000 }, { index, ledger });
		expect(s2.text).toBe(
			'search "x\\u0000\\u001b[31mNEEDLE\\u0007\\u0008\\u007f\\r\\u009b": no match in 2 folded blocks.',
		);
		const l = answerRecall({ code: "d4e5f6", lines: "9\u001b-", maxTokens: 4000 }, { index, ledger });
		expect(l.text).toBe('lines="9\\u001b-" is not a range; use lines=a-b with 1-based line numbers, e.g. lines=40-80.');
		for (const a of [g, s2, l]) expect(CONTROL_CHAR.test(a.text)).toBe(false);
		// A recalled original keeps its bytes, control characters included.
		const raw = `ok\u001b[0m\u0000\r\nNEEDLE\u0007 end`;
		const own = fromMemory("d4e5f6", "e2", raw);
		const whole = answerRecall({ code: "d4e5f6", maxTokens: 4000 }, own);
		expect(whole.text.endsWith(`(sha256 verified):\n${raw}`)).toBe(true);
		const grep = answerRecall({ code: "d4e5f6", grep: "needle", maxTokens: 4000 }, own);
		expect(grep.text).toContain("L2: NEEDLE\u0007 end");
	});
	test("grep and search show a window around a match at the end of a huge line (issue 16)", () => {
		const huge = `${"x".repeat(3_000_000)} the NEEDLE-at-the-end here`;
		const own = fromMemory("a1b2c3", "e1", huge);
		const g = answerRecall({ code: "a1b2c3", grep: "needle-AT", maxTokens: 4000 }, own);
		const line = g.text.split("\n")[1] as string;
		expect(line).toMatch(/^L1: \[…2,998,0\d\d chars\]x+ the NEEDLE-at-the-end here$/);
		expect(line.length).toBeLessThan(2100);
		const s2 = answerRecall({ search: "NEEDLE-at", maxTokens: 4000 }, own);
		expect(s2.text).toContain("the NEEDLE-at-the-end here");
		// A match at the start of a huge line: the window starts at the line's start, the rest is counted.
		const head = answerRecall({ code: "a1b2c3", grep: "xxxx", maxTokens: 4000 }, own);
		expect(head.text.split("\n")[1]).toMatch(/^L1: x{2000}…\[\+2,?998,?02\d chars\]$/);
	});
	test("lines= wider than the limit says so without a made-up span; a range past the end is clamped (issue 16)", () => {
		const { ledger, index } = setup();
		const wide = answerRecall({ code: "a1b2c3", lines: "1-99999999999999999999", maxTokens: 4000 }, { index, ledger });
		expect(wide.text).toBe(
			'lines="1-99999999999999999999" is wider than 5,000 lines; ask for at most 5,000 at a time, e.g. lines=1-5000.',
		);
		const clamped = answerRecall({ code: "d4e5f6", lines: "2-80", maxTokens: 4000 }, { index, ledger });
		expect(clamped.text.split("\n")[0]).toBe("{#d4e5f6} bash · 23 chars, 3 lines: lines 2-3 of 3");
	});
	test("ephemeral sessions recall from memory, bounded", () => {
		const { index } = setup();
		const memory = new MemoryOriginals(40);
		memory.put("d4e5f6", SMALL);
		expect(answerRecall({ code: "d4e5f6", maxTokens: 4000 }, { index, ledger: null, memory }).ok).toBe(true);
		memory.put("a1b2c3", BIG);
		expect(memory.evicted).toBe(1);
		const evicted = answerRecall({ code: "d4e5f6", maxTokens: 4000 }, { index, ledger: null, memory });
		expect(evicted.ok).toBe(false);
		expect(evicted.text).toContain("no longer held in memory");
	});
	test.each([
		[{ code: "zzzzzz" }, 'no folded block is called "zzzzzz". Closest codes:'],
		[{ code: "a1b2c4" }, "Closest codes: {#a1b2c3}"],
		[{}, "recall_folded needs a code"],
		[{ search: "   " }, "search= needs some text"],
		[{ search: "a\nb" }, "search= matches within one line"],
		[{ code: "a1b2c3", search: "x" }, "use either a code or search=, not both."],
		[{ code: "a1b2c3", grep: "x", lines: "1-2" }, "use either grep= or lines=, not both."],
		[{ code: "a1b2c3", grep: "" }, "grep= needs some text"],
		[{ code: "a1b2c3", lines: "10-5" }, 'lines="10-5" is inverted'],
		[{ code: "a1b2c3", lines: "-5" }, 'lines="-5" is not a range'],
		[{ code: "a1b2c3", lines: "0-3" }, "line numbers start at 1"],
		[
			{ code: "a1b2c3", lines: `1-${MAX_LINE_RANGE + 1}` },
			`ask for at most ${MAX_LINE_RANGE.toLocaleString("en-US")} at a time`,
		],
		[{ code: "a1b2c3", lines: "400-410" }, "has 300 lines; lines=400-410 is past the end"],
		[{ code: "a1b2c3", lines: "abc" }, 'lines="abc" is not a range'],
	])("bad input %p gets a clear error", (req, message) => {
		const { ledger, index } = setup();
		const a = answerRecall({ ...req, maxTokens: 4000 }, { index, ledger });
		expect(a.ok).toBe(false);
		expect(a.text).toContain(message);
	});
	test("search finds text that JSON escapes (quotes, backslashes, tabs) through the raw-line prefilter", () => {
		const dir = tmp();
		const path = join(dir, "q.jsonl");
		const text = 'ok\nsaid "hi" to C:\\temp\tnow\nend';
		writeFileSync(
			path,
			`${JSON.stringify({ type: "session", version: 3, id: "q" })}\n${JSON.stringify({ type: "message", id: "q1", message: { role: "toolResult", content: [{ type: "text", text }] } })}\n`,
		);
		const index = emptyIndex();
		addRecord(index, {
			type: "layer",
			v: 1,
			seq: 1,
			reason: "step",
			lastResponseAt: 0,
			usageBefore: 0,
			usageAfter: 0,
			blocks: [masked("abcabc", "q1", text)],
		});
		for (const needle of ['"HI" TO', "c:\\temp", "temp\tnow", "said"]) {
			const a = answerRecall({ search: needle, maxTokens: 1000 }, { index, ledger: new Ledger(path) });
			expect(a.text).toContain("1 matching line in");
		}
	});

	test("nothing folded yet", () => {
		expect(answerRecall({ code: "abc123", maxTokens: 100 }, { index: emptyIndex(), ledger: null }).text).toContain(
			"nothing has been folded in this session yet",
		);
	});
});
