/**
 * Frozen layers: what a fold event commits. A layer records each masked block's identity, extent,
 * sha256 and the exact digest bytes the model was shown. It never holds the payload, and its bytes
 * never change after commit, which is what keeps the outgoing prefix byte-stable.
 */
import type { Prices } from "./accounting.ts";
import { blockKey } from "./blocks.ts";
import { type LayerInputs, layerInputs, type MaskedInput, parseLayerInputs } from "./input-records.ts";
import { type ArgPath, pathKey } from "./inputs.ts";
import type { ColdReason } from "./policy/price.ts";
import { finiteOr0, isRecord } from "./values.ts";

export const FOLD_STATE_VERSION = 1;

/** What a masked block is: a tool result's text, thinking, or one long value of a tool call's arguments. */
export type MaskableKind = "toolResult" | "thinking" | "input";

export interface MaskedBlock {
	code: string;
	entryId: string;
	blockIndex: number;
	kind: MaskableKind;
	toolName?: string;
	toolCallId?: string;
	/** sha256 (hex) of the block's exact original text, as UTF-8. */
	sha256: string;
	/** Extent of the original: UTF-16 length, UTF-8 bytes, lines. */
	chars: number;
	bytes: number;
	lines: number;
	/** Token estimate of the original. */
	tokens: number;
	/** The exact digest text that replaces the block. */
	digest: string;
	/** The thinking block carried a provider signature, dropped when masked. */
	signed?: boolean;
	/** Full-output file the tool recorded itself (bash truncation), for recall. */
	fullOutputPath?: string;
	/** For an input: where the value sits in the call's arguments (`blockIndex` is the call's content index). */
	path?: ArgPath;
}

export type FoldReason = "threshold" | "step" | "budget";

export interface FrozenLayer {
	type: "layer";
	v: number;
	seq: number;
	reason: FoldReason;
	/** Timestamp of the newest successful response in view at commit; spaces fold events. */
	lastResponseAt: number;
	usageBefore: number;
	usageAfter: number;
	/** Tool-result and thinking masks (never inputs: an older reader would drop the layer over one). */
	blocks: MaskedBlock[];
	/** Folded tool-call inputs, in a field of their own that an older reader ignores (input-records.ts). */
	inputs?: LayerInputs;
	/** Why the priced rule fired, and the prices it used (policy/price.ts); an older reader ignores it. */
	decision?: FoldDecisionRecord;
}

/** A fold event's priced decision as recorded: amounts in input-token equivalents, prices in $/Mtok. */
export interface FoldDecisionRecord {
	v: 1;
	rule: "rent" | "cold" | "budget";
	cold?: ColdReason;
	prices: Prices;
	/** `ratios`: the model declares no prices, the decision was made in tokens with a preset's ratios. */
	basis: "model" | "ratios";
	rewrite: number;
	payback: number;
	rent: number;
}

export interface UnfoldRecord {
	type: "unfold";
	v: number;
	codes: string[];
}

export type FoldRecord = FrozenLayer | UnfoldRecord;

/** Lookup structures over the active branch's fold records. Built once per change, not per request. */
export interface MaskIndex {
	/** Masked (and not unfolded) blocks by maskKey: `${entryId}:${blockIndex}`, plus the path for inputs. */
	byKey: Map<string, MaskedBlock>;
	/** Every block ever folded on this branch, by code, including unfolded ones. */
	byCode: Map<string, MaskedBlock>;
	/** Keys that were unfolded: sticky, never masked again. */
	pinned: Set<string>;
	layers: FrozenLayer[];
	unfolded: Set<string>;
	/** Masked (and not unfolded) input values by the blockKey of their tool call. */
	inputs: Map<string, MaskedBlock[]>;
}

export function emptyIndex(): MaskIndex {
	return { byKey: new Map(), byCode: new Map(), pinned: new Set(), layers: [], unfolded: new Set(), inputs: new Map() };
}

/** Key of one input value: its call's blockKey and its argument path (policy/select.ts builds the same from a KeyedValue). */
export function inputKey(entryId: string, blockIndex: number, path: ArgPath): string {
	return `${blockKey(entryId, blockIndex)}:${pathKey(path)}`;
}

/** The key a masked block is indexed under (byKey, pinned). */
export function maskKey(block: MaskedBlock): string {
	return block.kind === "input" && block.path !== undefined
		? inputKey(block.entryId, block.blockIndex, block.path)
		: blockKey(block.entryId, block.blockIndex);
}

/** A stored input mask as the index holds it. */
export function inputMask(m: MaskedInput): MaskedBlock {
	return { ...m, kind: "input" };
}

/** Every mask a layer commits: its blocks, then its inputs. */
export function layerMasks(layer: FrozenLayer): MaskedBlock[] {
	const inputs = layer.inputs?.blocks ?? [];
	return inputs.length === 0 ? layer.blocks : [...layer.blocks, ...inputs.map(inputMask)];
}

/** The stored form of a new layer's input masks (see input-records.ts). */
export function inputsField(masks: readonly MaskedInput[]): { inputs?: LayerInputs } {
	return masks.length === 0 ? {} : { inputs: layerInputs(masks) };
}

/** Add one record to an index in place (used when a fold event or unfold commits). */
export function addRecord(index: MaskIndex, record: FoldRecord): void {
	if (record.type === "layer") {
		index.layers.push(record);
		for (const block of layerMasks(record)) {
			const key = maskKey(block);
			if (index.byCode.has(block.code) || index.byKey.has(key) || index.pinned.has(key)) continue;
			index.byCode.set(block.code, block);
			if (index.unfolded.has(block.code)) continue;
			index.byKey.set(key, block);
			if (block.kind === "input") {
				const call = blockKey(block.entryId, block.blockIndex);
				const list = index.inputs.get(call);
				if (list === undefined) index.inputs.set(call, [block]);
				else list.push(block);
			}
		}
		return;
	}
	for (const code of record.codes) {
		index.unfolded.add(code);
		const block = index.byCode.get(code);
		if (!block) continue;
		const key = maskKey(block);
		index.byKey.delete(key);
		index.pinned.add(key);
		if (block.kind === "input") {
			const call = blockKey(block.entryId, block.blockIndex);
			const rest = (index.inputs.get(call) ?? []).filter((b) => b !== block);
			if (rest.length === 0) index.inputs.delete(call);
			else index.inputs.set(call, rest);
		}
	}
}

/** Validate an untrusted record (from a session file). Returns null when it is not ours or malformed. */
export function parseFoldRecord(data: unknown): FoldRecord | null {
	if (!isRecord(data)) return null;
	if (typeof data.v !== "number" || data.v < 1 || data.v > FOLD_STATE_VERSION) return null;
	if (data.type === "unfold") {
		if (!Array.isArray(data.codes) || !data.codes.every((c) => typeof c === "string")) return null;
		return { type: "unfold", v: data.v, codes: data.codes as string[] };
	}
	if (data.type !== "layer") return null;
	if (!Array.isArray(data.blocks)) return null;
	if (typeof data.seq !== "number" || typeof data.lastResponseAt !== "number") return null;
	if (data.reason !== "threshold" && data.reason !== "step" && data.reason !== "budget") return null;
	const blocks: MaskedBlock[] = [];
	for (const b of data.blocks) {
		if (!isMaskedBlock(b)) return null;
		blocks.push(b);
	}
	// Input masks ride beside the blocks; a malformed or newer one is dropped alone (see input-records.ts).
	const inputs = parseLayerInputs(data).blocks;
	return {
		type: "layer",
		v: data.v,
		seq: data.seq,
		reason: data.reason,
		lastResponseAt: data.lastResponseAt,
		usageBefore: finiteOr0(data.usageBefore),
		usageAfter: finiteOr0(data.usageAfter),
		blocks,
		...inputsField(inputs),
		...decisionField(data.decision),
	};
}

const RULES = new Set(["rent", "cold", "budget"]);
const COLD_REASONS = new Set(["idle", "model-change", "uncached", "tools"]);

/** A recorded decision, or nothing when it is absent or malformed (it only informs status and simulate). */
function decisionField(d: unknown): { decision?: FoldDecisionRecord } {
	if (!isRecord(d) || d.v !== 1 || typeof d.rule !== "string" || !RULES.has(d.rule)) return {};
	const p = d.prices;
	if (!isRecord(p)) return {};
	const num = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? v : null);
	const prices = {
		input: num(p.input),
		output: num(p.output),
		cacheRead: num(p.cacheRead),
		cacheWrite: num(p.cacheWrite),
	};
	if (Object.values(prices).some((v) => v === null || v < 0)) return {};
	const amounts = [num(d.rewrite), num(d.payback), num(d.rent)];
	if (amounts.some((v) => v === null)) return {};
	if (d.cold !== undefined && (typeof d.cold !== "string" || !COLD_REASONS.has(d.cold))) return {};
	return {
		decision: {
			v: 1,
			rule: d.rule as FoldDecisionRecord["rule"],
			...(d.cold !== undefined && { cold: d.cold as ColdReason }),
			prices: prices as Prices,
			basis: d.basis === "ratios" ? "ratios" : "model",
			rewrite: amounts[0] as number,
			payback: amounts[1] as number,
			rent: amounts[2] as number,
		},
	};
}

function isMaskedBlock(b: unknown): b is MaskedBlock {
	if (!isRecord(b)) return false;
	return (
		typeof b.code === "string" &&
		/^[0-9a-f]{6,64}$/.test(b.code) &&
		typeof b.entryId === "string" &&
		typeof b.blockIndex === "number" &&
		Number.isInteger(b.blockIndex) &&
		b.blockIndex >= 0 &&
		(b.kind === "toolResult" || b.kind === "thinking") &&
		typeof b.sha256 === "string" &&
		/^[0-9a-f]{64}$/.test(b.sha256) &&
		typeof b.chars === "number" &&
		typeof b.bytes === "number" &&
		typeof b.lines === "number" &&
		typeof b.tokens === "number" &&
		typeof b.digest === "string" &&
		(b.toolName === undefined || typeof b.toolName === "string") &&
		(b.toolCallId === undefined || typeof b.toolCallId === "string") &&
		(b.fullOutputPath === undefined || typeof b.fullOutputPath === "string")
	);
}
