/**
 * The stored form of folded inputs (parseFoldRecord + addRecord): where the records go decides
 * whether an older release loses one layer's masks, or only the inputs.
 */
import { describe, expect, test } from "bun:test";
import { layerInputs, type MaskedInput, parseLayerInputs } from "../../src/core/input-records.ts";
import { INPUT_FORMAT_VERSION } from "../../src/core/inputs.ts";
import {
	addRecord,
	emptyIndex,
	FOLD_STATE_VERSION,
	type FoldRecord,
	type MaskedBlock,
	parseFoldRecord,
} from "../../src/core/layers.ts";

function indexRecords(records: readonly FoldRecord[]) {
	const index = emptyIndex();
	for (const r of records) addRecord(index, r);
	return index;
}

const SHA = "a".repeat(64);

const result: MaskedBlock = {
	code: "c0ffee",
	entryId: "e-result",
	blockIndex: 0,
	kind: "toolResult",
	toolName: "bash",
	sha256: SHA,
	chars: 4000,
	bytes: 4000,
	lines: 80,
	tokens: 1000,
	digest: "{#c0ffee FOLDED} bash · 4,000 chars, 80 lines",
};

const input: MaskedInput = {
	code: "beef01",
	entryId: "e-call",
	blockIndex: 1,
	path: ["edits", 0, "oldText"],
	toolName: "edit",
	toolCallId: "call_1",
	sha256: SHA,
	chars: 2000,
	bytes: 2000,
	lines: 40,
	tokens: 500,
	digest: "{#beef01 FOLDED} edit edits[0].oldText · 2,000 chars, 40 lines",
};

function layer(extra: Record<string, unknown>, blocks: unknown[] = [result]): Record<string, unknown> {
	return {
		type: "layer",
		v: FOLD_STATE_VERSION,
		seq: 1,
		reason: "threshold",
		lastResponseAt: 1,
		usageBefore: 10,
		usageAfter: 5,
		blocks,
		...extra,
	};
}

/** A stored record as it comes back from the session file. */
function stored(record: unknown): unknown {
	return JSON.parse(JSON.stringify(record));
}

describe("the reader", () => {
	test("one block of an unknown kind drops the whole layer, and every mask in it", () => {
		const record = stored(layer({}, [result, { ...input, kind: "toolInput" }]));
		expect(parseFoldRecord(record)).toBeNull();
	});
	test("an input in `blocks` (where an older release would choke on it) is refused the same way", () => {
		expect(parseFoldRecord(stored(layer({}, [result, { ...input, kind: "input" }])))).toBeNull();
	});
	test("a newer layer version is dropped whole", () => {
		expect(parseFoldRecord(stored({ ...layer({}), v: FOLD_STATE_VERSION + 1 }))).toBeNull();
	});
	test("the inputs field is indexed beside the blocks: by code, by key with its path, and per call", () => {
		const parsed = parseFoldRecord(stored(layer({ inputs: layerInputs([input]) })));
		const index = indexRecords(parsed === null ? [] : [parsed]);
		expect([...index.byKey.keys()]).toEqual(["e-result:0", 'e-call:1:["edits",0,"oldText"]']);
		expect(index.byCode.get("beef01")).toEqual({ ...input, kind: "input" });
		expect(index.inputs.get("e-call:1")?.map((b) => b.code)).toEqual(["beef01"]);
	});
	test("what an older release reads: the layer without its inputs, every other mask intact", () => {
		// Releases before inputs build a layer from the fields they know; `blocks` holds no input.
		const record = stored(layer({ inputs: layerInputs([input]) })) as Record<string, unknown>;
		const { inputs: _ignored, ...known } = record;
		const parsed = parseFoldRecord(known);
		const index = indexRecords(parsed === null ? [] : [parsed]);
		expect([...index.byKey.keys()]).toEqual(["e-result:0"]);
		expect(index.byCode.has("beef01")).toBe(false);
		expect((record.blocks as Array<{ kind: string }>).every((b) => b.kind !== "input")).toBe(true);
		expect(record.v).toBe(1);
	});
	test("a layer of inputs only reads; an unfold of an input code pins that value alone", () => {
		const second = { ...input, code: "beef02", path: ["edits", 0, "newText"] };
		const only = parseFoldRecord(stored(layer({ inputs: layerInputs([input, second]) }, [])));
		const unfold = parseFoldRecord(stored({ type: "unfold", v: FOLD_STATE_VERSION, codes: ["beef01"] }));
		expect(only?.type).toBe("layer");
		const index = indexRecords([only, unfold].filter((r) => r !== null));
		expect(index.layers).toHaveLength(1);
		expect([...index.byKey.keys()]).toEqual(['e-call:1:["edits",0,"newText"]']);
		expect([...index.pinned]).toEqual(['e-call:1:["edits",0,"oldText"]']);
		expect(index.inputs.get("e-call:1")?.map((b) => b.code)).toEqual(["beef02"]);
	});
});

describe("reading the inputs field", () => {
	test("round trip", () => {
		expect(parseLayerInputs(stored(layer({ inputs: layerInputs([input]) })))).toEqual({ blocks: [input], skipped: 0 });
		expect(layerInputs([input]).v).toBe(INPUT_FORMAT_VERSION);
	});
	test("no inputs field: nothing, nothing skipped", () => {
		expect(parseLayerInputs(stored(layer({})))).toEqual({ blocks: [], skipped: 0 });
		expect(parseLayerInputs(null)).toEqual({ blocks: [], skipped: 0 });
	});
	test("a malformed input block is dropped alone and counted", () => {
		const bad = [
			{ ...input, path: "edits.0.oldText" },
			{ ...input, path: [] },
			{ ...input, code: "XYZ" },
			{ ...input, sha256: "short" },
			{ ...input, blockIndex: -1 },
			{ ...input, chars: 1.5 },
			{ ...input, toolCallId: 5 },
			{ ...input, digest: undefined },
			"not an object",
		];
		const r = parseLayerInputs(stored(layer({ inputs: { v: INPUT_FORMAT_VERSION, blocks: [...bad, input] } })));
		expect(r).toEqual({ blocks: [input], skipped: bad.length });
	});
	test("inputs of a newer format are all skipped; the layer itself is untouched", () => {
		const record = stored(layer({ inputs: { v: INPUT_FORMAT_VERSION + 1, blocks: [input, input] } }));
		expect(parseLayerInputs(record)).toEqual({ blocks: [], skipped: 2 });
		const parsed = parseFoldRecord(record);
		expect(parsed?.type === "layer" ? parsed.blocks : null).toEqual([result]);
	});
	test("an inputs field of the wrong shape counts as one skipped", () => {
		expect(parseLayerInputs(stored(layer({ inputs: [input] })))).toEqual({ blocks: [], skipped: 1 });
	});
});
