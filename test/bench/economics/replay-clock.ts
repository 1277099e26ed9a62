/**
 * The recording's clock inside a replay, for context-fold's CONTEXTFOLD_TEST_CLOCK=replay seam
 * (src/adapters/pi/clock.ts). Each time the harness delivers something recorded (a prompt, a tool
 * result, a `!` run, the reply to request k), it marks the wall-clock moment with the recorded
 * timestamp. The recorded time at a wall time is then that of the newest delivery made by it: now()
 * in context-fold's hook for request k is the recorded start of request k, and the wall-clock stamp Pi
 * put on reply k-1 maps back to the recorded start of request k-1, so an idle gap is the recorded gap
 * the billing uses.
 */
import { type RecordedTimeOf, TEST_CLOCK_KEY } from "../../../src/adapters/pi/clock.ts";

type ClockGlobal = typeof globalThis & { [TEST_CLOCK_KEY]?: unknown };

export class ReplayClock {
	private readonly walls: number[] = [];
	private readonly recorded: number[] = [];

	/** `start`: the recorded time before anything was delivered (the session's first timestamp). */
	constructor(
		start: number,
		private readonly wall: () => number = Date.now,
	) {
		this.walls.push(Number.NEGATIVE_INFINITY);
		this.recorded.push(start);
	}

	/** Something recorded at `t` was just delivered. Non-finite times (no timestamp) are ignored. */
	mark(t: number): void {
		this.markAt(this.wall(), t);
	}

	/** Something recorded at `t` was delivered at wall time `wall` (in order: a wall time before the last is taken as the last). */
	markAt(wall: number, t: number): void {
		if (!Number.isFinite(t)) return;
		this.walls.push(Math.max(wall, this.walls.at(-1) as number));
		this.recorded.push(t);
	}

	/** Recorded time at wall time `w`: the newest delivery made at or before it (the start before any). */
	at(w: number): number {
		let lo = 0;
		let hi = this.walls.length - 1;
		let found = 0;
		while (lo <= hi) {
			const mid = (lo + hi) >> 1;
			if ((this.walls[mid] as number) <= w) {
				found = mid;
				lo = mid + 1;
			} else hi = mid - 1;
		}
		return this.recorded[found] as number;
	}

	/** Installs this clock where context-fold looks for it; returns the uninstall. */
	install(): () => void {
		const g = globalThis as ClockGlobal;
		const fn: RecordedTimeOf = (w) => this.at(w);
		g[TEST_CLOCK_KEY] = fn;
		return () => {
			if (g[TEST_CLOCK_KEY] === fn) delete g[TEST_CLOCK_KEY];
		};
	}
}
