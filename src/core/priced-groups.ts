/**
 * The fold candidates as the priced rule weighs them: grouped by message, each group with the token
 * offset where it starts, the tokens it frees and the rent already paid on it. planFold prices its
 * fold events from these (policy/price.ts).
 */
import { isSuccessfulResponse, type ViewMessage } from "./blocks.ts";
import type { PricedGroup } from "./policy/price.ts";
import { type Candidate, DIGEST_TOKEN_ESTIMATE, INPUT_DIGEST_TOKEN_ESTIMATE } from "./policy/select.ts";

/** The mass the chosen candidates carry, as selectCandidates counted it. */
export function sumMass(chosen: readonly Candidate[]): number {
	let m = 0;
	for (const c of chosen) m += c.tokens - (c.input !== undefined ? INPUT_DIGEST_TOKEN_ESTIMATE : DIGEST_TOKEN_ESTIMATE);
	return m;
}

/**
 * The candidates grouped by message (and `cum`, the tokens before each message index, the last entry
 * the whole request), with the price facts of each group: the token offset where it
 * starts, what it frees, and the rent already paid on it. A block's rent counts the requests that
 * re-read it since it left the protected tail (before that it could not fold): each successful
 * response whose request held at least `tail` tokens after the block's message, except the first
 * response after the message (its request sent the block for the first time, at the write price,
 * before it could fold). A stale block inside the tail (foldable only because something replaced
 * it) has paid no rent yet.
 */
export function priceGroups(
	frozen: { readonly tokensPerMessage: readonly number[] },
	candidates: readonly Candidate[],
	responses: readonly number[],
	tail: number,
	ageEnd: number,
): { groups: PricedGroup[]; cum: number[] } {
	if (candidates.length === 0) return { groups: [], cum: [] };
	const n = frozen.tokensPerMessage.length;
	// cum[i]: tokens before message i.
	const cum = new Array<number>(n + 1);
	cum[0] = 0;
	for (let i = 0; i < n; i++) cum[i + 1] = (cum[i] as number) + (frozen.tokensPerMessage[i] ?? 0);
	const groups: PricedGroup[] = [];
	for (const c of candidates) {
		const freed = c.tokens - (c.input !== undefined ? INPUT_DIGEST_TOKEN_ESTIMATE : DIGEST_TOKEN_ESTIMATE);
		let g = groups[groups.length - 1];
		if (g === undefined || g.messageIndex !== c.messageIndex) {
			g = { messageIndex: c.messageIndex, offset: cum[c.messageIndex] as number, freed: 0, rentTokens: 0 };
			groups.push(g);
		}
		g.freed += freed;
		if (c.messageIndex < ageEnd) g.rentTokens += freed * requestsSinceFoldable(cum, responses, c.messageIndex, tail);
	}
	return { groups, cum };
}

/** Indices of the successful responses, ascending. */
export function responseIndices(messages: readonly ViewMessage[]): number[] {
	const out: number[] = [];
	for (let i = 0; i < messages.length; i++) if (isSuccessfulResponse(messages[i] as ViewMessage)) out.push(i);
	return out;
}

/**
 * Successful responses whose request held at least `tail` tokens after message `i` and re-read it
 * (a response after `i` came before: the first one's request was the message's first delivery).
 * Binary searches over `responses`.
 */
function requestsSinceFoldable(cum: readonly number[], responses: readonly number[], i: number, tail: number): number {
	const need = (cum[i + 1] as number) + tail;
	// The request answered by the response at e held the messages before e.
	const held = firstResponse(responses, (e) => e > i && (cum[e] as number) >= need);
	const reread = firstResponse(responses, (e) => e > i) + 1;
	return Math.max(0, responses.length - Math.max(held, reread));
}

/** Index of the first response for which `ok` holds (`ok` monotone over ascending responses), or the length. */
function firstResponse(responses: readonly number[], ok: (e: number) => boolean): number {
	let lo = 0;
	let hi = responses.length;
	while (lo < hi) {
		const mid = (lo + hi) >> 1;
		if (ok(responses[mid] as number)) hi = mid;
		else lo = mid + 1;
	}
	return lo;
}
