/**
 * Folded tool-call inputs, the digest side: a code for each long value of a call's arguments, the
 * digest string that replaces it, and one call folded whole (inputs.ts finds the values by path and
 * writes the folded arguments). Format: docs/DESIGN.md, "Folded tool-call inputs".
 */
import {
	clip,
	codeFromIdentity,
	type DigestFacts,
	digestFacts,
	FIRST_LINE_MAX_CHARS,
	foldMarker,
	type Hash,
} from "./digest.ts";
import { type ArgPath, findLongValues, foldArguments, pathKey, renderPath } from "./inputs.ts";
import { groupDigits } from "./tokens.ts";

/** An input digest copies at most this many risk lines (tool results keep up to RISK_LINE_CAP). */
export const INPUT_RISK_LINE_CAP = 3;

/** Code of one folded input value: the block's identity plus its argument path. */
export function deriveInputCode(
	hash: Hash,
	entryId: string,
	blockIndex: number,
	path: ArgPath,
	taken: ReadonlySet<string>,
): string {
	return codeFromIdentity(hash, `context-fold:${entryId}:${blockIndex}:${pathKey(path)}`, taken);
}

export interface InputDigestInput {
	code: string;
	toolName: string;
	path: ArgPath;
	text: string;
	/** Appended to the header (as for tool results: where recall is served from). */
	note?: string;
	facts?: DigestFacts;
}

export interface InputDigest {
	digest: string;
	lines: number;
	riskLines: number;
	riskLinesKept: number;
}

/**
 * The digest string that replaces one input value:
 *
 *   {#<code> FOLDED} <tool> <path> · <chars> chars, <lines> lines[ · <note>]
 *   > <first non-empty line, clipped>
 *   ! L<n>: <risk line>                  (at most INPUT_RISK_LINE_CAP)
 *   ! +<k> more risk lines (recall_folded <code> grep=…)
 *
 * It says what the value was (tool, where in the arguments, how big) and how to get it back.
 */
export function renderInputDigest(input: InputDigestInput): InputDigest {
	const facts =
		input.facts !== undefined && input.facts.chars === input.text.length ? input.facts : digestFacts(input.text);
	const header = `${foldMarker(input.code)} ${oneLine(input.toolName)} ${renderPath(input.path)} · ${groupDigits(input.text.length)} chars, ${groupDigits(facts.lines)} lines${input.note ? ` · ${input.note}` : ""}`;
	const out = [header];
	if (facts.first !== null) out.push(`> ${clip(facts.first, FIRST_LINE_MAX_CHARS)}`);
	const risk = facts.risk.slice(0, INPUT_RISK_LINE_CAP);
	out.push(...risk);
	if (facts.riskTotal > risk.length) {
		out.push(`! +${facts.riskTotal - risk.length} more risk lines (recall_folded ${input.code} grep=…)`);
	}
	return { digest: out.join("\n"), lines: facts.lines, riskLines: facts.riskTotal, riskLinesKept: risk.length };
}

function oneLine(name: string): string {
	return clip(name.replace(/\s+/g, " ").trim(), 60) || "tool";
}

export interface FoldCallInput {
	entryId: string;
	blockIndex: number;
	toolName: string;
	args: unknown;
	hash: Hash;
	/** Codes already in use on the branch (and by this event); new codes are added to it by the caller. */
	taken: ReadonlySet<string>;
	note?: string;
	minChars?: number;
}

export interface FoldedValue {
	code: string;
	path: ArgPath;
	/** The original value, for the caller to hash and hold (never stored in a layer). */
	original: string;
	digest: string;
	lines: number;
}

export interface FoldedCall {
	args: unknown;
	values: FoldedValue[];
}

/**
 * Fold every long value of one call whose digest is shorter than the value. Null when nothing
 * would shrink. Codes are fresh against `taken` and against each other.
 */
export function foldCallInputs(input: FoldCallInput): FoldedCall | null {
	const taken = new Set(input.taken);
	const values: FoldedValue[] = [];
	for (const long of findLongValues(input.args, input.minChars)) {
		const code = deriveInputCode(input.hash, input.entryId, input.blockIndex, long.path, taken);
		const rendered = renderInputDigest({
			code,
			toolName: input.toolName,
			path: long.path,
			text: long.value,
			...(input.note !== undefined && { note: input.note }),
		});
		if (rendered.digest.length >= long.value.length) continue;
		taken.add(code);
		values.push({ code, path: long.path, original: long.value, digest: rendered.digest, lines: rendered.lines });
	}
	if (values.length === 0) return null;
	return {
		args: foldArguments(
			input.args,
			values.map((v) => ({ path: v.path, text: v.digest })),
		),
		values,
	};
}
