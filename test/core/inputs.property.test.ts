/**
 * Properties of folding tool-call inputs over random arguments (objects, arrays, numbers, flags,
 * short and long strings, `edits` as a JSON string): the result is valid JSON of the same shape
 * with the same keys, short values and non-strings are untouched, every long value is reachable by
 * its path in the original and holds its digest in the result, digests carry their code's marker
 * and no lone surrogate, and folding is deterministic and never changes its input.
 */
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { foldMarker } from "../../src/core/digest.ts";
import { foldCallInputs } from "../../src/core/input-digest.ts";
import { type ArgPath, INPUT_MIN_CHARS, JSON_STRING_KEYS, valueAt } from "../../src/core/inputs.ts";
import { sha256 } from "../helpers/session.ts";

const RUNS = Number(process.env.CF_FUZZ_RUNS ?? 300);
const MIN = 64;

const longText = fc
	.tuple(fc.string({ unit: "grapheme", maxLength: 30 }), fc.nat({ max: 40 }), fc.boolean())
	.map(([head, n, error]) => `${head}\n${"line of text 😀 é\n".repeat(n + 4)}${error ? "Error: boom\n" : ""}`);
const shortText = fc.string({ maxLength: MIN - 1 });
const key = fc.oneof(
	fc.constantFrom("path", "content", "oldText", "newText", "command", "__proto__", "edits", ""),
	fc.string({ maxLength: 8 }),
);

const { value } = fc.letrec<{ value: unknown }>((tie) => ({
	value: fc.oneof(
		{ depthSize: "small", withCrossShrink: true },
		shortText,
		longText,
		fc.integer(),
		fc.double({ noNaN: true, noDefaultInfinity: true }),
		fc.boolean(),
		fc.constant(null),
		fc.array(tie("value"), { maxLength: 4 }),
		fc.dictionary(key, tie("value"), { maxKeys: 4 }),
	),
}));

/** Arguments as Pi stores them (parsed JSON), sometimes with `edits` as a JSON string. */
const argsArb = fc
	.tuple(
		fc.dictionary(key, value, { maxKeys: 5 }),
		fc.option(
			fc.array(fc.record({ oldText: fc.oneof(shortText, longText), newText: fc.oneof(shortText, longText) }), {
				maxLength: 3,
			}),
			{ nil: undefined },
		),
	)
	.map(([base, edits]) => {
		const args = JSON.parse(JSON.stringify(base)) as Record<string, unknown>;
		if (edits !== undefined)
			Object.defineProperty(args, "edits", {
				value: JSON.stringify(edits),
				enumerable: true,
				writable: true,
				configurable: true,
			});
		return args;
	});

function fold(args: unknown) {
	return foldCallInputs({
		entryId: "e1",
		blockIndex: 2,
		toolName: "edit",
		args,
		hash: sha256,
		taken: new Set(),
		minChars: MIN,
	});
}

/** Same shape: same types, keys in the same order, arrays of the same length; strings may differ. */
function sameShape(a: unknown, b: unknown, key?: string): boolean {
	if (typeof a === "string") {
		if (typeof b !== "string") return false;
		if (key !== undefined && JSON_STRING_KEYS.has(key) && a !== b) {
			try {
				const pa: unknown = JSON.parse(a);
				if (typeof pa === "object" && pa !== null) return sameShape(pa, JSON.parse(b));
			} catch {
				// a plain long string under that key
			}
		}
		return true;
	}
	if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((x, i) => sameShape(x, b[i]));
	if (typeof a === "object" && a !== null) {
		if (typeof b !== "object" || b === null || Array.isArray(b)) return false;
		const ka = Object.keys(a);
		const kb = Object.keys(b);
		return (
			ka.length === kb.length &&
			ka.every(
				(k, i) => k === kb[i] && sameShape((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], k),
			)
		);
	}
	return Object.is(a, b);
}

/** Every leaf that is not a string at or above MIN chars, with its path, outside parsed JSON strings. */
function shortLeaves(v: unknown, path: ArgPath = []): Array<[ArgPath, unknown]> {
	if (typeof v === "string") return v.length >= MIN ? [] : [[path, v]];
	if (Array.isArray(v)) return v.flatMap((x, i) => shortLeaves(x, [...path, i]));
	if (typeof v === "object" && v !== null) {
		return Object.keys(v).flatMap((k) =>
			JSON_STRING_KEYS.has(k) ? [] : shortLeaves((v as Record<string, unknown>)[k], [...path, k]),
		);
	}
	return [[path, v]];
}

function leafAt(v: unknown, path: ArgPath): unknown {
	let cur = v;
	for (const step of path) cur = (cur as Record<string | number, unknown>)[step as string | number];
	return cur;
}

function hasLoneSurrogate(s: string): boolean {
	for (let i = 0; i < s.length; i++) {
		const c = s.charCodeAt(i);
		if (c >= 0xd800 && c <= 0xdbff) {
			const n = s.charCodeAt(i + 1);
			if (!(n >= 0xdc00 && n <= 0xdfff)) return true;
			i++;
		} else if (c >= 0xdc00 && c <= 0xdfff) return true;
	}
	return false;
}

describe("folding inputs (property)", () => {
	test("valid JSON of the same shape, keys unchanged, short values and non-strings untouched", () => {
		fc.assert(
			fc.property(argsArb, (args) => {
				const before = JSON.stringify(args);
				const r = fold(args);
				expect(JSON.stringify(args)).toBe(before);
				if (r === null) return;
				const json = JSON.stringify(r.args);
				expect(JSON.stringify(JSON.parse(json))).toBe(json);
				expect(sameShape(args, r.args)).toBe(true);
				for (const [path, leaf] of shortLeaves(args)) expect(Object.is(leafAt(r.args, path), leaf)).toBe(true);
			}),
			{ numRuns: RUNS },
		);
	});

	test("each folded value: found at its path in the original, its digest at the same path in the result", () => {
		// The generators must reach the interesting cases, or the properties prove little.
		let folded = 0;
		let insideJsonString = 0;
		fc.assert(
			fc.property(argsArb, (args) => {
				const r = fold(args);
				if (r === null) return;
				const codes = new Set<string>();
				for (const v of r.values) {
					expect(valueAt(args, v.path)).toBe(v.original);
					expect(v.original.length).toBeGreaterThanOrEqual(Math.min(MIN, INPUT_MIN_CHARS));
					expect(valueAt(r.args, v.path)).toBe(v.digest);
					expect(v.digest.startsWith(`${foldMarker(v.code)} `)).toBe(true);
					expect(v.digest.length).toBeLessThan(v.original.length);
					expect(hasLoneSurrogate(v.digest)).toBe(false);
					codes.add(v.code);
				}
				expect(codes.size).toBe(r.values.length);
				folded += 1;
				if (typeof args.edits === "string" && r.values.some((v) => v.path[0] === "edits" && v.path.length > 1))
					insideJsonString += 1;
			}),
			{ numRuns: RUNS },
		);
		expect(folded).toBeGreaterThan(RUNS / 4);
		expect(insideJsonString).toBeGreaterThan(RUNS / 20);
	});

	test("deterministic: the same arguments fold to the same bytes", () => {
		fc.assert(
			fc.property(argsArb, (args) => {
				expect(JSON.stringify(fold(args))).toBe(JSON.stringify(fold(JSON.parse(JSON.stringify(args)))));
			}),
			{ numRuns: RUNS },
		);
	});
});
