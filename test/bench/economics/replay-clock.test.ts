// The replay's recorded clock: the recorded time of the newest delivery made by a wall-clock time.
import { afterEach, describe, expect, test } from "bun:test";
import { clockFrom, TEST_CLOCK_KEY } from "../../../src/adapters/pi/clock.ts";
import { ReplayClock } from "./replay-clock.ts";

afterEach(() => {
	delete (globalThis as { [TEST_CLOCK_KEY]?: unknown })[TEST_CLOCK_KEY];
});

describe("ReplayClock", () => {
	test("the newest delivery at or before a wall time; the start before any; the last of a tie", () => {
		let wall = 1000;
		const c = new ReplayClock(50_000, () => wall);
		expect(c.at(0)).toBe(50_000);
		c.mark(60_000);
		wall = 1010;
		c.mark(400_000);
		c.mark(400_500);
		wall = 1020;
		c.mark(Number.NaN);
		expect([c.at(999), c.at(1000), c.at(1009), c.at(1010), c.at(5000)]).toEqual([
			50_000, 60_000, 60_000, 400_500, 400_500,
		]);
	});

	test("a wall clock that steps back is taken as standing still", () => {
		const c = new ReplayClock(0);
		c.markAt(100, 10);
		c.markAt(90, 20);
		expect([c.at(95), c.at(100)]).toEqual([0, 20]);
	});

	test("installed, it is what context-fold reads under CONTEXTFOLD_TEST_CLOCK=replay; uninstall restores the wall clock", () => {
		const c = new ReplayClock(7);
		const uninstall = c.install();
		const cf = clockFrom({ CONTEXTFOLD_TEST_CLOCK: "replay" });
		expect([cf.now(), cf.at(123)]).toEqual([7, 7]);
		uninstall();
		expect(cf.at(123)).toBe(123);
	});
});
