/**
 * What a request weighs, as the ladder reads it: the usage, the protected tail, the responses since a
 * point. Plain arithmetic over the core's view and the token counts planFold computed.
 */
import { isSuccessfulResponse, nonNegative, promptTokensOf, type ViewMessage } from "./blocks.ts";
import { MAX_REPORTED_TOKENS } from "./tokens.ts";

export interface UsageReading {
	tokens: number;
	source: "reported" | "estimate";
}

/**
 * Usage, defined: the provider-reported prompt of the newest successful response (input + cache
 * read + cache write) plus its own output, plus the estimate of every message after it. With no
 * usable report (first request, or no response since the latest compaction; a report above
 * MAX_REPORTED_TOKENS or one that overflows is not usable) it is the estimate alone.
 */
export function readUsage(
	messages: readonly ViewMessage[],
	tokensPerMessage: readonly number[],
	latestCompaction: number,
): UsageReading {
	for (let i = messages.length - 1; i >= 0; i--) {
		const m = messages[i] as ViewMessage;
		if (!isSuccessfulResponse(m) || m.usage === undefined) continue;
		if (m.timestamp <= latestCompaction) break;
		const prompt = promptTokensOf(m.usage);
		// No report, or an absurd one (overflowing, or past any real window): not a measurement.
		if (prompt <= 0 || !(prompt <= MAX_REPORTED_TOKENS)) continue;
		let tokens = prompt + Math.min(nonNegative(m.usage.output), MAX_REPORTED_TOKENS);
		for (let k = i + 1; k < messages.length; k++) tokens += tokensPerMessage[k] ?? 0;
		return { tokens, source: "reported" };
	}
	let tokens = 0;
	for (const t of tokensPerMessage) tokens += t ?? 0;
	return { tokens, source: "estimate" };
}

/** First message index of the protected tail: every message that starts within the newest `tail` tokens. */
export function protectedTailStart(tokensPerMessage: readonly number[], tail: number): number {
	let acc = 0;
	let start = tokensPerMessage.length;
	for (let i = tokensPerMessage.length - 1; i >= 0; i--) {
		if (acc >= tail) break;
		acc += tokensPerMessage[i] ?? 0;
		start = i;
	}
	return start;
}

export function responsesSince(messages: readonly ViewMessage[], since: number): number {
	let n = 0;
	for (let i = messages.length - 1; i >= 0; i--) {
		const m = messages[i] as ViewMessage;
		if (!isSuccessfulResponse(m)) continue;
		if (m.timestamp <= since) break;
		n++;
		if (n > 1) break;
	}
	return n;
}
