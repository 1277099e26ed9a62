/**
 * Advisory decisions, pure: when to warn that the cache may have expired, when a response proves
 * the session went cold, and what the messages say. The adapter supplies times and sizes.
 */
import { formatTokens } from "./tokens.ts";

/** Below this carried context, neither advisory speaks: a cold start costs little. */
export const ADVISORY_MIN_TOKENS = 20_000;

export type IdleVerdict =
	| { type: "quiet"; reason: "disabled" | "small" | "unknown-size" | "fresh" | "already-said" }
	| { type: "warn"; message: string; anchor: number };

export interface IdleInput {
	now: number;
	/** Idle interval in minutes for the selected provider; null = off. */
	idleMinutes: number | null;
	/** Last successful response (or cache warm-up) for the selected provider and model; null = none recorded. */
	lastActivity: number | null;
	/** Estimated tokens the next request carries; null = unknown (e.g. right after a compaction). */
	carried: number | null;
	/** The activity time the last notice was about: one notice per idle interval. */
	lastNoticeAnchor: number | null;
}

export function idleVerdict(input: IdleInput): IdleVerdict {
	if (input.idleMinutes === null || input.idleMinutes <= 0) return { type: "quiet", reason: "disabled" };
	if (input.carried === null || !Number.isFinite(input.carried)) return { type: "quiet", reason: "unknown-size" };
	if (input.carried < ADVISORY_MIN_TOKENS) return { type: "quiet", reason: "small" };
	const anchor = input.lastActivity ?? Number.NEGATIVE_INFINITY;
	if (input.lastActivity !== null && input.now - input.lastActivity < input.idleMinutes * 60_000) {
		return { type: "quiet", reason: "fresh" };
	}
	if (input.lastNoticeAnchor === anchor) return { type: "quiet", reason: "already-said" };
	const size = formatTokens(input.carried);
	const message =
		input.lastActivity === null
			? `cache unverified: ~${size} tok may rebill. Consider /fold-handoff`
			: `cache may have expired: ~${size} tok may rebill. Consider /fold-handoff`;
	return { type: "warn", message, anchor };
}

export interface ColdInput {
	/** Responses observed since the extension loaded. */
	observed: number;
	/** The final response of the run carried a fold's rewrite (its cache miss is expected). */
	firstAfterFold: boolean;
	cacheRead: number;
	/** Tokens billed as fresh input: uncached input plus cache writes. */
	fresh: number;
	/** A cold notice was already given in this streak (reset by the next warm response). */
	inStreak: boolean;
}

export function coldVerdict(input: ColdInput): { warn: boolean; message?: string } {
	if (input.cacheRead > 0) return { warn: false };
	if (input.observed < 2 || input.firstAfterFold || input.inStreak) return { warn: false };
	if (input.fresh < ADVISORY_MIN_TOKENS) return { warn: false };
	return {
		warn: true,
		message: `session cold: rebilled ~${formatTokens(input.fresh)} tok as fresh input. Consider /fold-handoff`,
	};
}
