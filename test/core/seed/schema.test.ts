import { describe, expect, test } from "bun:test";
import { extractSeedRecord } from "../../../src/core/seed/extract.ts";
import {
	SEED_INDEX_VERSION,
	SEED_LIMITS,
	type SeedRecord,
	serializeSeedRecord,
	validateSeedRecord,
} from "../../../src/core/seed/schema.ts";
import { compactionInput, foldInput } from "./fixtures.ts";

const fold = (): SeedRecord => extractSeedRecord(foldInput());

/** A fold record with one change applied to its parsed JSON form. */
function mutated(change: (o: Record<string, unknown>) => void): unknown {
	const o = JSON.parse(serializeSeedRecord(fold())) as Record<string, unknown>;
	change(o);
	return o;
}

describe("validateSeedRecord", () => {
	test("extracted records validate and survive a serialize/parse round trip byte for byte", () => {
		for (const record of [fold(), extractSeedRecord(compactionInput())]) {
			const line = serializeSeedRecord(record);
			const v = validateSeedRecord(JSON.parse(line));
			expect(v.ok).toBe(true);
			if (v.ok) expect(serializeSeedRecord(v.record)).toBe(line);
		}
	});
	test("serialization uses the spec's key order whatever order the object has", () => {
		const r = fold();
		const shuffled = Object.fromEntries(Object.entries(r).reverse()) as unknown as SeedRecord;
		expect(serializeSeedRecord(shuffled)).toBe(serializeSeedRecord(r));
		expect(serializeSeedRecord(r).endsWith("}")).toBe(true);
		expect(Object.keys(JSON.parse(serializeSeedRecord(r)))).toEqual([
			"type",
			"v",
			"kind",
			"seq",
			"at",
			"source",
			"files",
			"commands",
			"errors",
			"identifiers",
			"numbers",
			"userLines",
			"spans",
			"secrets",
			"omitted",
		]);
	});
	test("unknown fields are ignored and dropped", () => {
		const v = validateSeedRecord(mutated((o) => Object.assign(o, { future: [1, 2, 3] })));
		expect(v.ok).toBe(true);
		if (v.ok) expect(serializeSeedRecord(v.record)).toBe(serializeSeedRecord(fold()));
	});
	test("a span's argument path (folded inputs) round-trips; a malformed one is refused", () => {
		const withPath = (path: unknown) =>
			mutated((o) => {
				const spans = o.spans as Array<Record<string, unknown>>;
				if (spans[0] !== undefined) Object.assign(spans[0], { kind: "assistant", path });
			});
		const ok = validateSeedRecord(withPath(["edits", 0, "oldText"]));
		expect(ok.ok).toBe(true);
		if (ok.ok) expect(ok.record.spans[0]?.path).toEqual(["edits", 0, "oldText"]);
		for (const bad of [[], "edits", [-1], [1.5], ["x".repeat(129)], Array.from({ length: 17 }, () => "k")])
			expect(validateSeedRecord(withPath(bad)).ok).toBe(false);
	});
	const rejects: Array<[string, (o: Record<string, unknown>) => void, string]> = [
		["wrong type", (o) => Object.assign(o, { type: "layer" }), 'type is not "seed-record"'],
		["newer version", (o) => Object.assign(o, { v: SEED_INDEX_VERSION + 1 }), "unsupported version 2"],
		["version 0", (o) => Object.assign(o, { v: 0 }), "unsupported version 0"],
		["unknown kind", (o) => Object.assign(o, { kind: "handoff" }), "kind is not fold or compaction"],
		["negative seq", (o) => Object.assign(o, { seq: -1 }), "seq is not a non-negative integer"],
		["fractional at", (o) => Object.assign(o, { at: 1.5 }), "at is not a non-negative integer"],
		["missing source", (o) => Object.assign(o, { source: undefined }), "source is not an object"],
		[
			"too many identifiers",
			(o) =>
				Object.assign(o, {
					identifiers: Array.from({ length: SEED_LIMITS.identifiers.items + 1 }, (_, i) => `id_${i}`),
				}),
			"identifiers has more than 60 items",
		],
		[
			"over-long command",
			(o) => Object.assign(o, { commands: ["x".repeat(401)] }),
			"command is longer than 400 characters",
		],
		[
			"unknown file op",
			(o) => Object.assign(o, { files: [{ path: "a.ts", ops: ["delete"] }] }),
			'unknown file op "delete"',
		],
		[
			"repeated file op",
			(o) => Object.assign(o, { files: [{ path: "a.ts", ops: ["read", "read"] }] }),
			"file.ops is empty or repeats an op",
		],
		["error without text", (o) => Object.assign(o, { errors: [{ ref: "abc" }] }), "error.text is not a string"],
		[
			"over-long span sha",
			(o) => Object.assign((o.spans as object[])[0] as object, { sha256: "a".repeat(65) }),
			"span.sha256 is longer than 64 characters",
		],

		[
			"bad span kind",
			(o) => Object.assign((o.spans as object[])[0] as object, { kind: "image" }),
			'unknown span kind "image"',
		],
		[
			"omitted key missing",
			(o) => Object.assign(o, { omitted: { files: 0 } }),
			"omitted.commands is not a non-negative integer",
		],
		["not an object", (o) => Object.assign(o, { files: "a.ts" }), "files is not an array"],
	];
	test.each(rejects)("rejects: %s", (_name, change, error) => {
		expect(validateSeedRecord(mutated(change))).toEqual({ ok: false, error });
	});
	test("rejects non-objects", () => {
		expect(validateSeedRecord(null)).toEqual({ ok: false, error: "record is not an object" });
		expect(validateSeedRecord([1])).toEqual({ ok: false, error: "record is not an object" });
		expect(validateSeedRecord("x")).toEqual({ ok: false, error: "record is not an object" });
	});
	test("a span sha256 must be 64 lowercase hex digits", () => {
		const upper = mutated((o) => Object.assign((o.spans as object[])[0] as object, { sha256: "A".repeat(64) }));
		expect(validateSeedRecord(upper)).toEqual({ ok: false, error: "span.sha256 is not 64 lowercase hex digits" });
	});
});
