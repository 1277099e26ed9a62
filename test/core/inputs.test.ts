/**
 * Folded tool-call inputs: finding long values by path, the digest string, folding the arguments.
 * The golden file holds whole calls of every shape Pi's tools send (edit in its three forms, write,
 * bash, a grammar tool's raw input, any other tool); regenerate it after an intended change with
 * UPDATE_GOLDEN=1 and read the diff.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
	deriveInputCode,
	foldCallInputs,
	INPUT_RISK_LINE_CAP,
	renderInputDigest,
} from "../../src/core/input-digest.ts";
import {
	type ArgPath,
	FoldInputError,
	findLongValues,
	foldArguments,
	INPUT_MIN_CHARS,
	parsePath,
	pathKey,
	renderPath,
	valueAt,
} from "../../src/core/inputs.ts";
import { markerCodesIn } from "../../src/core/markers.ts";
import { sha256 } from "../helpers/session.ts";

const GOLDEN = join(import.meta.dir, "../golden/folded-inputs.json");

/** Deterministic source-like text of `n` lines; line `errorAt` throws. */
function source(tag: string, n: number, errorAt = -1): string {
	const lines: string[] = [];
	for (let i = 1; i <= n; i++) {
		lines.push(
			i === errorAt
				? `    throw new Error("${tag}: unreachable state ${i}");`
				: `    const ${tag}${i} = compute(${i}, "${tag}-${(i * 7919) % 1000}");`,
		);
	}
	return `${lines.join("\n")}\n`;
}

const CASES: Array<{ name: string; toolName: string; args: unknown }> = [
	{
		name: "edit: edits[] with one long and one short replacement",
		toolName: "edit",
		args: {
			path: "src/app.ts",
			edits: [
				{ oldText: source("old", 20, 7), newText: source("new", 22) },
				{ oldText: "let x = 1;", newText: "let x = 2;" },
			],
		},
	},
	{
		name: "edit: legacy top-level oldText/newText",
		toolName: "edit",
		args: { path: "/abs/src/legacy.ts", oldText: source("a", 30), newText: source("b", 31, 2) },
	},
	{
		name: "edit: edits sent as a JSON string stays a JSON string",
		toolName: "edit",
		args: { path: "src/str.ts", edits: JSON.stringify([{ oldText: source("s", 25), newText: "short" }]) },
	},
	{
		name: "write: content, with risk lines past the cap",
		toolName: "write",
		args: {
			path: "src/errors.ts",
			content: `${source("w", 10, 3)}// error: one\n// warning: two\n// failed: three\n// fatal: four\n${source("z", 10)}`,
		},
	},
	{
		name: "bash: a long heredoc command keeps its timeout",
		toolName: "bash",
		args: { command: `cat > /tmp/gen.py <<'EOF'\n${source("py", 25)}EOF\npython3 /tmp/gen.py`, timeout: 120 },
	},
	{
		name: "grammar tool: the single raw-string input stays a string",
		toolName: "apply_patch",
		args: { input: `*** Begin Patch\n*** Update File: a.ts\n${source("p", 30)}*** End Patch` },
	},
	{
		name: "any tool: nested objects and arrays, odd keys, flags and numbers verbatim",
		toolName: "custom_tool",
		args: {
			flags: { dryRun: true, level: 3, tags: ["a", "b"] },
			files: [{ name: "x.md", body: source("md", 40) }, null, 7],
			"odd key": source("odd", 20),
			empty: "",
		},
	},
	{ name: "nothing long: no fold", toolName: "read", args: { path: "README.md", offset: 10, limit: 50 } },
];

function run(c: (typeof CASES)[number]) {
	return foldCallInputs({
		entryId: "a1b2c3d4",
		blockIndex: 1,
		toolName: c.toolName,
		args: c.args,
		hash: sha256,
		taken: new Set(),
	});
}

describe("folded inputs golden", () => {
	test("every case matches the committed golden file byte for byte", () => {
		const actual = `${JSON.stringify(
			CASES.map((c) => {
				const r = run(c);
				return {
					name: c.name,
					folded: r === null ? null : r.args,
					values: r === null ? [] : r.values.map((v) => ({ code: v.code, path: v.path, chars: v.original.length })),
				};
			}),
			null,
			"\t",
		)}\n`;
		if (process.env.UPDATE_GOLDEN === "1") writeFileSync(GOLDEN, actual);
		expect(existsSync(GOLDEN), `${GOLDEN} is missing; run with UPDATE_GOLDEN=1 to create it`).toBe(true);
		expect(actual).toBe(readFileSync(GOLDEN, "utf8"));
	});

	test("edit with edits[]: the digest string, exactly", () => {
		const r = run(CASES[0] as (typeof CASES)[number]);
		const args = r?.args as { path: string; edits: Array<{ oldText: string; newText: string }> };
		expect(args.path).toBe("src/app.ts");
		expect(args.edits[1]).toEqual({ oldText: "let x = 1;", newText: "let x = 2;" });
		const code = deriveInputCode(sha256, "a1b2c3d4", 1, ["edits", 0, "oldText"], new Set());
		expect(source("old", 20, 7).length).toBe(830);
		expect(args.edits[0]?.oldText).toBe(
			[
				`{#${code} FOLDED} edit edits[0].oldText · 830 chars, 20 lines`,
				'> const old1 = compute(1, "old-919");',
				'! L7:     throw new Error("old: unreachable state 7");',
			].join("\n"),
		);
		expect(r?.values.map((v) => renderPath(v.path))).toEqual(["edits[0].oldText", "edits[0].newText"]);
	});

	test("edits as a JSON string: still a string, parsed it has the same shape", () => {
		const r = run(CASES[2] as (typeof CASES)[number]);
		const args = r?.args as { edits: string };
		expect(typeof args.edits).toBe("string");
		const inner = JSON.parse(args.edits) as Array<{ oldText: string; newText: string }>;
		expect(inner).toHaveLength(1);
		expect(inner[0]?.newText).toBe("short");
		expect(inner[0]?.oldText.startsWith("{#")).toBe(true);
		// The path names the value as Pi's edit tool reads it, whatever form `edits` came in.
		expect(r?.values[0]?.path).toEqual(["edits", 0, "oldText"]);
		expect(valueAt({ edits: JSON.parse(args.edits) }, ["edits", 0, "oldText"])).toBe(inner[0]?.oldText);
	});
});

describe("finding long values", () => {
	test("short values, numbers, flags and nulls are never found", () => {
		expect(findLongValues({ a: "x".repeat(INPUT_MIN_CHARS - 1), b: 5, c: true, d: null, e: [1, "y"] })).toEqual([]);
		expect(findLongValues({ a: "x".repeat(INPUT_MIN_CHARS) })).toEqual([
			{ path: ["a"], value: "x".repeat(INPUT_MIN_CHARS) },
		]);
	});
	test("a top-level string (no object) is one value at the empty path", () => {
		expect(findLongValues("y".repeat(600))).toEqual([{ path: [], value: "y".repeat(600) }]);
	});
	test("a JSON-string edits whose bulk is not in one value folds as one string", () => {
		const many = JSON.stringify(Array.from({ length: 40 }, (_, i) => ({ oldText: `a${i}`, newText: `b${i}` })));
		expect(findLongValues({ edits: many })).toEqual([{ path: ["edits"], value: many }]);
	});
	test("a JSON-looking string under any other key is a plain string", () => {
		const json = JSON.stringify({ body: "z".repeat(700) });
		expect(findLongValues({ content: json })).toEqual([{ path: ["content"], value: json }]);
	});
	test("valueAt follows keys, indices and parsed strings, and refuses wrong turns", () => {
		const args = { edits: JSON.stringify([{ oldText: "o" }]), list: ["p"], __proto__x: "q" };
		expect(valueAt(args, ["edits", 0, "oldText"])).toBe("o");
		expect(valueAt(args, ["list", 0])).toBe("p");
		expect(valueAt(args, ["list", "0"])).toBeUndefined();
		expect(valueAt(args, ["edits", 1, "oldText"])).toBeUndefined();
		expect(valueAt(args, ["edits", "0"])).toBeUndefined();
		expect(valueAt(args, ["missing"])).toBeUndefined();
		expect(valueAt(args, ["toString"])).toBeUndefined();
	});
});

describe("edits in any of the forms Pi accepts", () => {
	const oldText = source("o", 30);
	const forms: Array<[string, unknown]> = [
		["an array", { path: "a.ts", edits: [{ oldText, newText: "n" }] }],
		["a JSON string of an array", { path: "a.ts", edits: JSON.stringify([{ oldText, newText: "n" }]) }],
		["a single object", { path: "a.ts", edits: { oldText, newText: "n" } }],
		["a JSON string of one object", { path: "a.ts", edits: JSON.stringify({ oldText, newText: "n" }) }],
	];
	for (const [name, args] of forms) {
		test(`${name}: the value is at edits[0].oldText, and folding keeps the form`, () => {
			expect(findLongValues(args)).toEqual([{ path: ["edits", 0, "oldText"], value: oldText }]);
			expect(valueAt(args, ["edits", 0, "oldText"])).toBe(oldText);
			const folded = foldArguments(args, [{ path: ["edits", 0, "oldText"], text: "D" }]) as { edits: unknown };
			const edits = (args as { edits: unknown }).edits;
			expect(typeof folded.edits).toBe(typeof edits);
			expect(Array.isArray(folded.edits)).toBe(Array.isArray(edits));
			expect(valueAt(folded, ["edits", 0, "oldText"])).toBe("D");
			expect(valueAt(folded, ["edits", 0, "newText"])).toBe("n");
		});
	}
	test("a path folded on one form applies to the other (Pi parses a JSON-string edits in place)", () => {
		const onFile = { path: "a.ts", edits: JSON.stringify([{ oldText, newText: "n" }]) };
		const live = { path: "a.ts", edits: JSON.parse(onFile.edits) as unknown };
		const [found] = findLongValues(live);
		expect(valueAt(onFile, found?.path ?? [])).toBe(oldText);
		expect(
			JSON.parse((foldArguments(onFile, [{ path: ["edits", 0, "oldText"], text: "D" }]) as { edits: string }).edits),
		).toEqual([{ oldText: "D", newText: "n" }]);
	});
});

describe("folding arguments", () => {
	test("a copy: the input is unchanged, and a path to a non-string is refused", () => {
		const args = { path: "a", content: "c".repeat(600), n: 3 };
		const before = JSON.stringify(args);
		const folded = foldArguments(args, [{ path: ["content"], text: "D" }]);
		expect(folded).toEqual({ path: "a", content: "D", n: 3 });
		expect(JSON.stringify(args)).toBe(before);
		expect(() => foldArguments(args, [{ path: ["n"], text: "D" }])).toThrow(FoldInputError);
		expect(() => foldArguments(args, [{ path: ["nope"], text: "D" }])).toThrow(
			"argument path nope does not hold a string",
		);
	});
	test("a key named __proto__ stays a plain key", () => {
		const args = JSON.parse(`{"__proto__":"${"p".repeat(600)}","k":1}`) as Record<string, unknown>;
		const folded = foldArguments(args, [{ path: ["__proto__"], text: "D" }]) as Record<string, unknown>;
		expect(Object.keys(folded)).toEqual(["__proto__", "k"]);
		expect(JSON.stringify(folded)).toBe('{"__proto__":"D","k":1}');
	});
	test("a value whose digest would not be shorter stays verbatim", () => {
		const args = { content: "0123456789abcdef" };
		const digest = renderInputDigest({ code: "000000", toolName: "write", path: ["content"], text: args.content });
		expect(digest.digest.length).toBeGreaterThan(args.content.length);
		const r = foldCallInputs({
			entryId: "e",
			blockIndex: 0,
			toolName: "write",
			args,
			hash: sha256,
			taken: new Set(),
			minChars: 10,
		});
		expect(r).toBeNull();
	});
	test("codes are unique within a call and avoid taken ones", () => {
		const path: ArgPath = ["content"];
		const first = deriveInputCode(sha256, "e", 0, path, new Set());
		expect(first).toBe(sha256(`context-fold:e:0:${pathKey(path)}`).slice(0, 6));
		const r = foldCallInputs({
			entryId: "e",
			blockIndex: 0,
			toolName: "write",
			args: { content: source("c", 30), other: source("d", 30) },
			hash: sha256,
			taken: new Set([first]),
		});
		const codes = r?.values.map((v) => v.code) ?? [];
		expect(codes).toHaveLength(2);
		expect(codes[0]).toBe(sha256(`context-fold:e:0:${pathKey(path)}`).slice(0, 8));
		expect(new Set(codes).size).toBe(2);
	});
});

describe("the input digest", () => {
	test("header, first line, capped risk lines with the overflow marked, note", () => {
		const text = ["", "  first real line", "error: a", "warning: b", "failed: c", "fatal: d", "x".repeat(200)].join(
			"\n",
		);
		const d = renderInputDigest({ code: "abcdef", toolName: "write", path: ["content"], text, note: "memo" });
		expect(d.digest).toBe(
			[
				"{#abcdef FOLDED} write content · 258 chars, 7 lines · memo",
				"> first real line",
				"! L3: error: a",
				"! L4: warning: b",
				"! L5: failed: c",
				"! +1 more risk lines (recall_folded abcdef grep=…)",
			].join("\n"),
		);
		expect([d.lines, d.riskLines, d.riskLinesKept]).toEqual([7, 4, INPUT_RISK_LINE_CAP]);
	});
	test("a tool name with line breaks renders on one line", () => {
		const d = renderInputDigest({ code: "abcdef", toolName: "my\ntool", path: [], text: "x" });
		expect(d.digest).toBe("{#abcdef FOLDED} my tool (arguments) · 1 chars, 1 lines\n> x");
	});
	test("paths render for people", () => {
		expect(renderPath(["a", 0, "b c", 2])).toBe('a[0]["b c"][2]');
		expect(renderPath([0])).toBe("[0]");
	});
	test("stored paths are validated", () => {
		expect(parsePath(["edits", 0, "oldText"])).toEqual(["edits", 0, "oldText"]);
		expect(parsePath(["edits", null, 0])).toBeNull();
		expect(parsePath(["a", -1])).toBeNull();
		expect(parsePath(["a", 1.5])).toBeNull();
		expect(parsePath([{}])).toBeNull();
		expect(parsePath("edits")).toBeNull();
	});
});

describe("fold markers in arguments", () => {
	test("found in any string, deep, lowercased, each once, in order", () => {
		expect(
			markerCodesIn({
				a: "x {#A1B2C3 FOLDED} y {#d4e5f6 FOLDED}",
				b: [{ c: "{#a1b2c3 FOLDED}" }, 5, null],
				edits: JSON.stringify([{ oldText: "{#0123456789 FOLDED} z" }]),
			}),
		).toEqual(["a1b2c3", "d4e5f6", "0123456789"]);
	});
	test("near misses are not markers", () => {
		expect(markerCodesIn({ a: "{#a1b2c FOLDED} {a1b2c3 FOLDED} {#a1b2c3 folded} {#a1b2c3}", b: 1 })).toEqual([]);
		expect(markerCodesIn("{#abcdef FOLDED}")).toEqual(["abcdef"]);
		expect(markerCodesIn(undefined)).toEqual([]);
	});
	test("a deeply nested value does not overflow the stack", () => {
		let deep: unknown = "{#abcdef FOLDED}";
		for (let i = 0; i < 100_000; i++) deep = [deep];
		expect(markerCodesIn(deep)).toEqual([]);
	});
});
