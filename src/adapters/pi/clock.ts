/**
 * The one clock context-fold reasons about cache lifetimes with: the advisories' idle clock, and any
 * decision that compares "now" with the moment Pi last used the cache. Pi stamps messages and cache
 * warm-ups with its own wall clock, so both sides of such a comparison go through here: `now()`, and
 * `at(t)` for a time Pi recorded.
 *
 * Two test seams, both inert unless their variable is set:
 * - CONTEXTFOLD_TEST_CLOCK_OFFSET_MS shifts `now()` (stand an hour after a session's last response
 *   without waiting); `at` is unchanged.
 * - CONTEXTFOLD_TEST_CLOCK=replay: a replay harness loaded into the same Pi process installs a
 *   function at `globalThis[Symbol.for("context-fold.test-clock")]` that maps a wall-clock time to the
 *   recording's time (the recorded timestamp of the newest message it had delivered by then). Both
 *   readings go through it, so a session replayed in seconds is judged on its recorded gaps. Without
 *   the variable the global is never read; with it but no usable function, the wall clock is used.
 */

export const TEST_CLOCK_KEY = Symbol.for("context-fold.test-clock");

/** What a replay harness installs: recorded time (ms) for a wall-clock time (ms). */
export type RecordedTimeOf = (wallMs: number) => number;

export interface Clock {
	/** Now, in ms. */
	now(): number;
	/** A time Pi stamped (a message's or a warm-up's), in ms, on the same clock as now(). */
	at(piTime: number): number;
}

type ClockGlobal = typeof globalThis & { [TEST_CLOCK_KEY]?: unknown };

export function clockFrom(env: NodeJS.ProcessEnv): Clock {
	const replayed = (wall: number): number | undefined => {
		if (env.CONTEXTFOLD_TEST_CLOCK !== "replay") return undefined;
		const map = (globalThis as ClockGlobal)[TEST_CLOCK_KEY];
		if (typeof map !== "function") return undefined;
		try {
			const t = (map as RecordedTimeOf)(wall);
			return Number.isFinite(t) ? t : undefined;
		} catch {
			return undefined;
		}
	};
	return {
		now() {
			const wall = Date.now();
			const replay = replayed(wall);
			if (replay !== undefined) return replay;
			const offset = Number(env.CONTEXTFOLD_TEST_CLOCK_OFFSET_MS ?? 0);
			return wall + (Number.isFinite(offset) ? offset : 0);
		},
		at(piTime) {
			return replayed(piTime) ?? piTime;
		},
	};
}
