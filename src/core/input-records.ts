/**
 * The stored form of folded tool-call inputs, proposed for the fold layer (docs/DESIGN.md, "Folded
 * tool-call inputs"). Input masks ride in a field of their own, `inputs: {v, blocks}`, beside the
 * layer's `blocks`, so that:
 * - a release that knows nothing of inputs (parseFoldRecord of FOLD_STATE_VERSION 1) still reads
 *   the layer: it builds the layer from the fields it knows and never looks at `inputs`, so its tool
 *   result and thinking masks stay applied and only the inputs go out in full;
 * - a reader that knows inputs drops a malformed input block alone (counted), never the layer, and
 *   ignores every input block of a newer `inputs.v` than its own.
 */
import { type ArgPath, INPUT_FORMAT_VERSION, parsePath } from "./inputs.ts";
import type { MaskedBlock } from "./layers.ts";

/** One folded input value: a masked block's identity and extent, plus where in the arguments it sits. */
export interface MaskedInput
	extends Pick<
		MaskedBlock,
		"code" | "entryId" | "blockIndex" | "toolCallId" | "sha256" | "chars" | "bytes" | "lines" | "tokens" | "digest"
	> {
	/** Where the value sits in the call's arguments (see ArgPath); `blockIndex` is the call's content index. */
	path: ArgPath;
	toolName: string;
}

export interface LayerInputs {
	v: number;
	blocks: MaskedInput[];
}

export interface ParsedInputs {
	blocks: MaskedInput[];
	/** Input blocks present but not usable (malformed, or of a newer format). */
	skipped: number;
}

/** Read the `inputs` field of a stored layer. Absent is fine (no inputs); nothing here throws. */
export function parseLayerInputs(layer: unknown): ParsedInputs {
	if (!isObject(layer) || layer.inputs === undefined) return { blocks: [], skipped: 0 };
	const inputs = layer.inputs;
	if (!isObject(inputs) || !Array.isArray(inputs.blocks)) return { blocks: [], skipped: 1 };
	if (typeof inputs.v !== "number" || inputs.v < 1 || inputs.v > INPUT_FORMAT_VERSION) {
		return { blocks: [], skipped: inputs.blocks.length };
	}
	const blocks: MaskedInput[] = [];
	let skipped = 0;
	for (const b of inputs.blocks) {
		const parsed = parseMaskedInput(b);
		if (parsed === null) skipped++;
		else blocks.push(parsed);
	}
	return { blocks, skipped };
}

function parseMaskedInput(b: unknown): MaskedInput | null {
	if (!isObject(b)) return null;
	const path = parsePath(b.path);
	if (
		path === null ||
		path.length === 0 ||
		typeof b.code !== "string" ||
		!/^[0-9a-f]{6,64}$/.test(b.code) ||
		typeof b.entryId !== "string" ||
		typeof b.blockIndex !== "number" ||
		!Number.isInteger(b.blockIndex) ||
		b.blockIndex < 0 ||
		typeof b.toolName !== "string" ||
		(b.toolCallId !== undefined && typeof b.toolCallId !== "string") ||
		typeof b.sha256 !== "string" ||
		!/^[0-9a-f]{64}$/.test(b.sha256) ||
		!isCount(b.chars) ||
		!isCount(b.bytes) ||
		!isCount(b.lines) ||
		!isCount(b.tokens) ||
		typeof b.digest !== "string"
	) {
		return null;
	}
	return {
		code: b.code,
		entryId: b.entryId,
		blockIndex: b.blockIndex,
		path,
		toolName: b.toolName,
		...(typeof b.toolCallId === "string" && { toolCallId: b.toolCallId }),
		sha256: b.sha256,
		chars: b.chars as number,
		bytes: b.bytes as number,
		lines: b.lines as number,
		tokens: b.tokens as number,
		digest: b.digest,
	};
}

/** The field to store on a layer for these input masks. */
export function layerInputs(blocks: readonly MaskedInput[]): LayerInputs {
	return { v: INPUT_FORMAT_VERSION, blocks: [...blocks] };
}

function isCount(v: unknown): boolean {
	return typeof v === "number" && Number.isInteger(v) && v >= 0;
}

function isObject(v: unknown): v is Record<string, unknown> {
	return typeof v === "object" && v !== null && !Array.isArray(v);
}
