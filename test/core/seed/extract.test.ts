import { describe, expect, test } from "bun:test";
import type { ViewMessage } from "../../../src/core/blocks.ts";
import { type ExtractInput, extractSeedRecord } from "../../../src/core/seed/extract.ts";
import { findPaths, isIdentifier } from "../../../src/core/seed/harvest.ts";
import { SEED_LIMITS, serializeSeedRecord, validateSeedRecord } from "../../../src/core/seed/schema.ts";
import { clipTo } from "../../../src/core/values.ts";
import { COMPACTION_MESSAGES, compactionInput, FOLD_MESSAGES, foldInput, T0 } from "./fixtures.ts";
import { maskBlock, sha256 } from "./trace.ts";

const serialize = (input: ExtractInput) => serializeSeedRecord(extractSeedRecord(input));

function result(id: string, text: string, toolName = "bash", callSummary?: string): ViewMessage {
	return {
		role: "toolResult",
		entryId: id,
		timestamp: T0,
		toolName,
		toolCallId: `call-${id}`,
		...(callSummary !== undefined && { callSummary }),
		blocks: [{ kind: "text", text }],
	};
}

function user(id: string, text: string): ViewMessage {
	return { role: "user", entryId: id, timestamp: T0, blocks: [{ kind: "text", text }] };
}

/** A fold of the given tool results, every text block masked. */
function foldOf(messages: ViewMessage[], extra: Partial<ExtractInput> = {}): ExtractInput {
	const taken = new Set<string>();
	const masked = messages.flatMap((m) => (m.role === "toolResult" ? [maskBlock(m, 0, taken)] : []));
	return { kind: "fold", seq: 1, at: T0, messages, masked, hash: sha256, ...extra };
}

describe("determinism", () => {
	test("the same input twice gives identical bytes", () => {
		expect(serialize(foldInput())).toBe(serialize(foldInput()));
		expect(serialize(compactionInput())).toBe(serialize(compactionInput()));
	});
	test("parsing toolCall blocks gives the same record as structured calls", () => {
		const { calls: _calls, ...withoutCalls } = foldInput();
		expect(serialize(withoutCalls)).toBe(serialize(foldInput()));
	});
	test("seq and at are normalised to the schema's integers", () => {
		const r = extractSeedRecord({ ...foldInput(), seq: 2.7, at: Number.NaN });
		expect([r.seq, r.at]).toEqual([2, 0]);
	});
});

describe("what a record covers", () => {
	test("a fold harvests only masked blocks; unmasked results give nothing but their calls", () => {
		const input = foldInput();
		const r = extractSeedRecord({ ...input, masked: input.masked?.slice(0, 1) });
		expect(r.spans.map((s) => s.entryId)).toEqual(["r1"]);
		expect(r.identifiers).not.toContain("verifyToken");
		expect(r.files.map((f) => f.path)).toContain("src/auth/login.ts"); // from the read call
		expect(r.source).toEqual({ messages: 4, blocks: 1, chars: 336 });
	});
	test("compaction spans carry the sha256 and extent of the original, unredacted text", () => {
		const text = "token=ghp_0123456789abcdefghijABCDEFGHIJ0123 été\nsecond line\n";
		const r = extractSeedRecord({
			kind: "compaction",
			seq: 1,
			at: T0,
			messages: [result("c1", text, "bash", "env")],
			hash: sha256,
		});
		expect(r.spans).toEqual([
			{
				entryId: "c1",
				blockIndex: 0,
				kind: "toolResult",
				toolName: "bash",
				call: "env",
				sha256: sha256(text),
				chars: text.length,
				bytes: text.length + 2,
				lines: 2,
			},
		]);
		expect(r.secrets).toBe(1);
		expect(serializeSeedRecord(r)).not.toContain("ghp_0123");
	});
	test("earlier summaries in a compacted range are skipped", () => {
		const summary: ViewMessage = {
			role: "compactionSummary",
			entryId: "s1",
			timestamp: T0,
			blocks: [{ kind: "other", text: "old summary mentions oldIdentifier in src/old.ts" }],
		};
		const r = extractSeedRecord({ ...compactionInput(), messages: [summary, ...COMPACTION_MESSAGES] });
		expect(r.identifiers).not.toContain("oldIdentifier");
		expect(r.spans.map((s) => s.entryId)).toEqual(["u2", "a2", "r3"]);
	});
	test("secrets in commands, paths, user messages and calls never reach the record", () => {
		const key = `${"sk-"}proj-Zx81Lm20Qp93Rt47Vb65Nc18Jd52Kf39`;
		const messages = [user("u", `use OPENAI_API_KEY=${key} please`), result("r", `exported ${key}`, "bash")];
		const calls = [{ toolCallId: "call-r", name: "bash", args: { command: `OPENAI_API_KEY=${key} npm start` } }];
		const r = extractSeedRecord(foldOf(messages, { calls }));
		const line = serializeSeedRecord(r);
		expect(line).not.toContain(key);
		expect(r.commands[0]).toMatch(/^OPENAI_API_KEY=\[secret:[0-9a-f]{8}\] npm start$/);
		expect(r.secrets).toBe(3);
	});
});

describe("fields and ranking", () => {
	test("files: edits and writes first, then reads, commands, output; ops in a fixed order", () => {
		const messages = [result("r1", "see docs/guide.md and src/b.ts and src/b.ts", "bash")];
		const calls = [
			{ toolCallId: "x1", name: "bash", args: { command: "cat src/a.ts | grep x" } },
			{ toolCallId: "x2", name: "read", args: { path: "src/b.ts" } },
			{ toolCallId: "x3", name: "write", args: { path: "src/c.ts" } },
			{ toolCallId: "x4", name: "edit", args: { file_path: "src/b.ts" } },
		];
		const r = extractSeedRecord(foldOf(messages, { calls }));
		expect(r.files).toEqual([
			{ path: "src/b.ts", ops: ["edit", "read", "output"] },
			{ path: "src/c.ts", ops: ["write"] },
			{ path: "src/a.ts", ops: ["command"] },
			{ path: "docs/guide.md", ops: ["output"] },
		]);
	});
	test("paths: URLs, prose slashes and property accesses are not files", () => {
		expect(
			findPaths(
				"fetch https://github.com/org/repo/blob/main/a.ts and/or text/plain; console.log(process.env.X); " +
					"edit ./src/x.ts, ~/notes/todo.md, /etc/hosts, packages/tui/src (see line 4) and package.json. " +
					"Also src/a.ts:12:5 and C:\\dir\\file.ts",
			),
		).toEqual(["./src/x.ts", "~/notes/todo.md", "/etc/hosts", "packages/tui/src", "package.json", "src/a.ts"]);
	});
	test("identifiers: program-shaped names, no prose, no random blobs, no marker digits", () => {
		const yes = ["planFold", "SEED_LIMITS", "snake_case", "utf8Length", "ECONNREFUSED", "TS2345", "deadbeef1"];
		const no = ["function", "Error", "TODO", "abc", "x7Gk2PqLmN9vR4tY8wZ1", "a.b"];
		for (const t of yes) expect(isIdentifier(t), t).toBe(true);
		for (const t of no) expect(isIdentifier(t), t).toBe(false);
		const r = extractSeedRecord(
			foldOf([result("r", "planFold planFold [secret:ab12cd34] fooBar 9fceb02 fooBar planFold")]),
		);
		expect(r.identifiers).toEqual(["planFold", "fooBar", "9fceb02"]);
	});
	test("numbers: versions and decimals, then 4+ digits, then 3 digits; two digits are noise", () => {
		const r = extractSeedRecord(
			foldOf([result("r", "line 123 123 123, port 5432, v1.2.3, 0.80.6, 42, 2.5 and 99999")]),
		);
		expect(r.numbers).toEqual(["v1.2.3", "0.80.6", "2.5", "5432", "99999", "123"]);
	});
	test("errors: every spelling the lexicon knows, each line once, with its fold code", () => {
		const text = [
			"ok",
			"npm ERR! code ELIFECYCLE",
			"1 test failed",
			"FAILED tests/a.py::t",
			"1 test failed",
			"done",
		].join("\n");
		const input = foldOf([result("r", text)]);
		const code = input.masked?.[0]?.code;
		expect(extractSeedRecord(input).errors).toEqual([
			{ text: "npm ERR! code ELIFECYCLE", ref: code },
			{ text: "1 test failed", ref: code },
			{ text: "FAILED tests/a.py::t", ref: code },
		]);
	});
	test("user lines: first three non-empty lines, each message once", () => {
		const r = extractSeedRecord(
			foldOf([user("u1", "\n  one  \n\ntwo\nthree\nfour"), user("u2", "again"), user("u3", "again")]),
		);
		expect(r.userLines).toEqual(["one\ntwo\nthree", "again"]);
	});
});

describe("bounds", () => {
	const n = 700;
	const results = Array.from({ length: n }, (_, i) =>
		result(
			`r${i}`,
			[
				`fatal: failure number ${i} in module_${i}`,
				`warning: slow call_site_${i} took ${1000 + i}ms`,
				`see src/pkg${i}/file_${i}.ts and ${"x".repeat(300)}_${i}`,
				`value ${10_000 + i} at v${i}.0.1`,
			].join("\n"),
			i % 3 === 0 ? "read" : "bash",
		),
	);
	const users = Array.from({ length: 50 }, (_, i) => user(`u${i}`, `instruction ${i}`));
	const calls = Array.from({ length: 100 }, (_, i) => ({
		toolCallId: `c${i}`,
		name: "bash",
		args: { command: `run --step ${i} ${"y".repeat(i === 99 ? 500 : 1)}` },
	}));
	const input = foldOf([...users, ...results], { calls });
	const r = extractSeedRecord(input);

	test("every field stops at its bound and counts what it dropped", () => {
		expect(r.files).toHaveLength(SEED_LIMITS.files.items);
		expect(r.commands).toHaveLength(SEED_LIMITS.commands.items);
		expect(r.errors).toHaveLength(SEED_LIMITS.errors.items);
		expect(r.identifiers).toHaveLength(SEED_LIMITS.identifiers.items);
		expect(r.numbers).toHaveLength(SEED_LIMITS.numbers.items);
		expect(r.userLines).toHaveLength(SEED_LIMITS.userLines.items);
		expect(r.spans).toHaveLength(SEED_LIMITS.spans.items);
		expect(r.omitted).toEqual({
			files: n - 60,
			commands: 60,
			errors: 2 * n - 40,
			identifiers: 4 * n - 60, // module_i, call_site_i, pkg<i>, file_i
			numbers: 3 * n - 100 - 30, // 10000+i, v<i>.0.1, and i itself from 100 on ("1000+i ms" is not a number)
			userLines: 30,
			spans: n - 512,
		});
		expect(validateSeedRecord(JSON.parse(serializeSeedRecord(r))).ok).toBe(true);
		expect(serializeSeedRecord(r).length).toBeLessThan(250_000);
	});
	test("over the bound: latest commands, first and latest user lines, execution errors before file contents", () => {
		expect(r.commands[0]).toBe("run --step 60 y");
		expect(r.commands[39]).toHaveLength(SEED_LIMITS.commands.chars);
		expect(r.commands[39]?.endsWith("…")).toBe(true);
		expect(r.userLines[0]).toBe("instruction 0");
		expect(r.userLines.slice(1)).toEqual(Array.from({ length: 19 }, (_, i) => `instruction ${31 + i}`));
		// The latest 40 error lines from bash results (every third result is a read), in order of appearance.
		expect(r.errors[39]?.text).toBe(`warning: slow call_site_${n - 2} took ${1000 + n - 2}ms`);
		expect(
			r.errors.every((e) => !/module_(\d+)/.test(e.text) || Number(/module_(\d+)/.exec(e.text)?.[1]) % 3 !== 0),
		).toBe(true);
	});
});

describe("clipTo", () => {
	test.each([
		["short", 10, "short"],
		["abcdefghij", 5, "abcd…"],
		["ab😀cd", 4, "ab…"],
		["ab😀cd", 5, "ab😀…"],
	])("%s / %d", (text, max, expected) => {
		expect(clipTo(text, max)).toBe(expected);
		expect(clipTo(text, max).length).toBeLessThanOrEqual(max);
	});
});

test("the fixtures' fold record", () => {
	// Spot checks; the whole record is checked byte for byte against docs/SEED_INDEX_SPEC.md in spec.test.ts.
	const r = extractSeedRecord(foldInput());
	expect(r.commands).toEqual(["npm test -- src/auth 2>&1 | tail -20"]);
	expect(r.userLines).toEqual(["Fix the failing login test.\nIt broke after the token refactor.\nDetails below."]);
	expect(r.secrets).toBe(1);
	expect(serializeSeedRecord(r)).not.toContain("s3cr3t");
	expect(FOLD_MESSAGES).toHaveLength(4);
});

describe("folded tool-call inputs", () => {
	test("harvested from the original value, with the input's code on its risk lines; the span has its path", () => {
		const content = `export const limit = 10;\nthrow new Error("quota exceeded in src/quota.ts");\n`;
		const call: ViewMessage = {
			role: "assistant",
			entryId: "a9",
			timestamp: T0,
			blocks: [{ kind: "toolCall", text: `${JSON.stringify({ path: "src/quota.ts", content })}write` }],
			stopReason: "toolUse",
		};
		const record = extractSeedRecord({
			kind: "fold",
			seq: 3,
			at: T0,
			messages: [call],
			masked: [
				{
					code: "beef01",
					entryId: "a9",
					blockIndex: 0,
					kind: "input",
					path: ["content"],
					toolName: "write",
					toolCallId: "call_9",
					sha256: sha256(content),
					chars: content.length,
					bytes: content.length,
					lines: 2,
					tokens: 20,
					digest: "{#beef01 FOLDED} write content · 75 chars, 2 lines",
				},
			],
			inputTexts: new Map([["beef01", content]]),
			calls: [{ toolCallId: "call_9", name: "write", args: { path: "src/quota.ts", content } }],
			hash: sha256,
		});
		expect(record.errors).toContainEqual({ text: 'throw new Error("quota exceeded in src/quota.ts");', ref: "beef01" });
		expect(record.files).toContainEqual({ path: "src/quota.ts", ops: ["write", "output"] });
		expect(record.source).toEqual({ messages: 1, blocks: 1, chars: content.length });
		expect(record.spans).toEqual([
			{
				code: "beef01",
				entryId: "a9",
				blockIndex: 0,
				kind: "assistant",
				toolName: "write",
				call: "src/quota.ts",
				path: ["content"],
				sha256: sha256(content),
				chars: content.length,
				bytes: content.length,
				lines: 2,
			},
		]);
		expect(validateSeedRecord(JSON.parse(serializeSeedRecord(record))).ok).toBe(true);
	});
});
