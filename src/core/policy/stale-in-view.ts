/**
 * The superseded and duplicate blocks of one request (superseded.ts's rules), from the calls and
 * results its view holds: each call with its result becomes a tool event, settled or not, and the
 * findings come back indexed by the block they make stale.
 */
import { blockKey, type ViewMessage } from "../blocks.ts";
import { findStaleBlocks, type StaleBlock, type ToolEvent } from "./superseded.ts";

export interface StaleInView {
	/** Stale tool results, by the result's entry id. */
	results: Map<string, StaleBlock>;
	/** Stale inputs, by the blockKey of the call. */
	inputs: Map<string, StaleBlock>;
}

export interface StaleViewInput {
	/**
	 * Look at calls from this message index on (default 0). A call is compared only with later ones,
	 * so what is found for a call at or after `from` does not depend on the calls before it.
	 */
	from?: number;
	/** Index of the newest successful response: a result before it was delivered in full. */
	deliveredBefore: number;
	/** Index of the newest user message: a call after it is in the tool loop still running. */
	lastUser: number;
	cwd?: string;
}

/**
 * The stale blocks of a request, from the calls and results it holds. A call is settled (may be
 * reported) when it and its result come before the newest user message (outside the tool loop still
 * running) and the result before the newest successful response (delivered in full at least once).
 */
export function staleInView(messages: readonly ViewMessage[], input: StaleViewInput): StaleInView {
	const found: StaleInView = { results: new Map(), inputs: new Map() };
	const from = Math.max(0, input.from ?? 0);
	if (input.lastUser <= from) return found;
	const results = new Map<string, { index: number; result: NonNullable<ToolEvent["result"]> }>();
	for (let i = from; i < messages.length; i++) {
		const m = messages[i] as ViewMessage;
		if (m.role !== "toolResult" || m.toolCallId === undefined) continue;
		results.set(m.toolCallId, {
			index: i,
			result: {
				entryId: m.entryId ?? "",
				text: resultText(m),
				isError: m.isError === true,
				...(m.truncated === true && { truncated: true }),
			},
		});
	}
	const events: ToolEvent[] = [];
	const settledEnd = Math.min(input.lastUser, input.deliveredBefore);
	for (let i = from; i < messages.length; i++) {
		const m = messages[i] as ViewMessage;
		if (m.role !== "assistant") continue;
		for (let j = 0; j < m.blocks.length; j++) {
			const call = m.blocks[j]?.call;
			if (call === undefined || call.id === undefined) continue;
			const r = results.get(call.id);
			events.push({
				toolCallId: call.id,
				toolName: call.name,
				args: call.args,
				callEntryId: m.entryId ?? "",
				callBlockIndex: j,
				...(r !== undefined && { result: r.result }),
				settled: m.entryId !== null && r !== undefined && r.index < settledEnd,
				memo: call,
			});
		}
	}
	if (events.length < 2) return found;
	for (const b of findStaleBlocks({ events, ...(input.cwd !== undefined && { cwd: input.cwd }) })) {
		if (b.block === "result") found.results.set(b.entryId, b);
		else found.inputs.set(blockKey(b.entryId, b.blockIndex ?? 0), b);
	}
	return found;
}

/** A result's text parts joined (one part, the common case, is its text as it is). */
function resultText(m: ViewMessage): string {
	let text: string | undefined;
	for (const b of m.blocks) {
		if (b.kind !== "text") continue;
		text = text === undefined ? b.text : `${text}\n${b.text}`;
	}
	return text ?? "";
}
