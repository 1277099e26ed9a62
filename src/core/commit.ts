/**
 * A fold event's commit: every chosen candidate rendered to its digest and recorded with the
 * identity recall verifies (sha256, length, bytes), as the new layer's blocks and input masks.
 */
import { blockKey, type ThinkingPolicy, type ViewCall, type ViewMessage } from "./blocks.ts";
import { deriveCode, renderDigest, utf8Length } from "./digest.ts";
import { deriveInputCode, renderInputDigest } from "./input-digest.ts";
import type { MaskedInput } from "./input-records.ts";
import type { MaskedBlock } from "./layers.ts";
import type { PlanInput, Substitution } from "./plan.ts";
import { type Candidate, DIGEST_TOKEN_ESTIMATE, INPUT_DIGEST_TOKEN_ESTIMATE } from "./policy/select.ts";
import type { StaleInView } from "./policy/stale-in-view.ts";
import { estimateTokens } from "./tokens.ts";

export interface Commit {
	blocks: MaskedBlock[];
	/** The new layer's input masks (stored in its `inputs` field). */
	inputs: MaskedInput[];
	substitutions: Substitution[];
	/** Tokens the new layer takes out of the request. */
	saved: number;
	/** Mass of candidates this event could not fold (rejected at commit): what the gauge shows next. */
	leftover: number;
}

/**
 * Render every candidate's digest and record its identity: the new layer's blocks. `stale` holds
 * every superseded and duplicate block of the request, whose digests say why.
 */
export function commitCandidates(
	input: PlanInput,
	candidates: readonly Candidate[],
	thinking: ThinkingPolicy,
	stale: StaleInView,
): Commit {
	const { messages, index } = input;
	const taken = new Set(index.byCode.keys());
	const out: Commit = { blocks: [], inputs: [], substitutions: [], saved: 0, leftover: 0 };
	for (const c of candidates) {
		const m = messages[c.messageIndex] as ViewMessage;
		const block = m.blocks[c.blockIndex];
		if (block === undefined || m.entryId === null) continue;
		const reason =
			c.reason ??
			(c.input !== undefined
				? stale.inputs.get(blockKey(m.entryId, c.blockIndex))?.reason
				: m.role === "toolResult"
					? stale.results.get(m.entryId)?.reason
					: undefined);
		if (c.input !== undefined) {
			commitInput(input, out, taken, c, m.entryId, block.call, reason);
			continue;
		}
		if (input.verify !== undefined && !input.verify(m.entryId, c.blockIndex, block.text)) {
			out.leftover += c.tokens - DIGEST_TOKEN_ESTIMATE;
			continue;
		}
		const kind = m.role === "toolResult" ? "toolResult" : "thinking";
		const code = deriveCode(input.hash, m.entryId, c.blockIndex, taken);
		const note = noteOf(reason, input.digestNote);
		const rendered = renderDigest({
			code,
			kind,
			text: block.text,
			...(m.toolName !== undefined && { toolName: m.toolName }),
			...(m.callSummary !== undefined && { callSummary: m.callSummary }),
			...(note !== undefined && { note }),
			...(block.facts !== undefined && { facts: block.facts }),
		});
		const digestTokens = estimateTokens(rendered.digest.length);
		if (digestTokens >= c.tokens) {
			out.leftover += c.tokens - DIGEST_TOKEN_ESTIMATE;
			continue;
		}
		taken.add(code);
		out.blocks.push({
			code,
			entryId: m.entryId,
			blockIndex: c.blockIndex,
			kind,
			sha256: input.hash(block.text),
			chars: block.text.length,
			bytes: utf8Length(block.text),
			lines: rendered.lines,
			tokens: c.tokens,
			digest: rendered.digest,
			...(m.toolName !== undefined && { toolName: m.toolName }),
			...(m.toolCallId !== undefined && { toolCallId: m.toolCallId }),
			...(block.signed === true && { signed: true }),
			...(m.fullOutputPath !== undefined && { fullOutputPath: m.fullOutputPath }),
		});
		out.substitutions.push({
			messageIndex: c.messageIndex,
			blockIndex: c.blockIndex,
			code,
			text: rendered.digest,
			dropSignature: block.signed === true && thinking === "drop-signature",
		});
		out.saved += c.tokens - digestTokens;
	}
	return out;
}

/** Fold one long value of a tool call's arguments: a masked input and a substitution at its path. */
function commitInput(
	input: PlanInput,
	out: Commit,
	taken: Set<string>,
	c: Candidate,
	entryId: string,
	call: ViewCall | undefined,
	reason: string | undefined,
): void {
	const { path, value } = c.input as NonNullable<Candidate["input"]>;
	const toolName = call?.name || "tool";
	const toolCallId = call?.id;
	if (input.verify !== undefined && !input.verify(entryId, c.blockIndex, value, path)) {
		out.leftover += c.tokens - INPUT_DIGEST_TOKEN_ESTIMATE;
		return;
	}
	const code = deriveInputCode(input.hash, entryId, c.blockIndex, path, taken);
	const note = noteOf(reason, input.digestNote);
	const rendered = renderInputDigest({ code, toolName, path, text: value, ...(note !== undefined && { note }) });
	const digestTokens = estimateTokens(rendered.digest.length);
	if (digestTokens >= c.tokens) {
		out.leftover += c.tokens - INPUT_DIGEST_TOKEN_ESTIMATE;
		return;
	}
	taken.add(code);
	out.inputs.push({
		code,
		entryId,
		blockIndex: c.blockIndex,
		path,
		toolName,
		...(toolCallId !== undefined && { toolCallId }),
		sha256: input.hash(value),
		chars: value.length,
		bytes: utf8Length(value),
		lines: rendered.lines,
		tokens: c.tokens,
		digest: rendered.digest,
	});
	out.substitutions.push({
		messageIndex: c.messageIndex,
		blockIndex: c.blockIndex,
		code,
		text: rendered.digest,
		dropSignature: false,
		path,
	});
	out.saved += c.tokens - digestTokens;
}

/** A digest's header note: why a stale block folded, then where recall is served from. */
function noteOf(reason: string | undefined, digestNote: string | undefined): string | undefined {
	if (reason === undefined) return digestNote;
	return digestNote === undefined ? reason : `${reason} · ${digestNote}`;
}
