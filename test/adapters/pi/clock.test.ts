// The adapter's clock for cache-lifetime reasoning: the wall clock, its fixed-offset test seam, and
// the replay seam (a function a harness installs in the same process, read only under
// CONTEXTFOLD_TEST_CLOCK=replay). Real Pi runs of both seams are in test/e2e/advisories.test.ts and
// test/e2e/economics-clock.test.ts.
import { afterEach, describe, expect, setSystemTime, test } from "bun:test";
import { clockFrom, TEST_CLOCK_KEY } from "../../../src/adapters/pi/clock.ts";

const WALL = Date.UTC(2026, 0, 5, 12, 0, 0);
const HOUR = 3_600_000;
type G = typeof globalThis & { [TEST_CLOCK_KEY]?: unknown };

afterEach(() => {
	delete (globalThis as G)[TEST_CLOCK_KEY];
	setSystemTime();
});

/** A recording three days before the wall clock, one recorded hour per wall second. */
const install = (fn: unknown = (wall: number) => WALL - 72 * HOUR + (wall - WALL) * 3600) => {
	(globalThis as G)[TEST_CLOCK_KEY] = fn;
};

describe("clockFrom", () => {
	test("the wall clock, and at() as Pi stamped it", () => {
		setSystemTime(new Date(WALL));
		const c = clockFrom({});
		expect(c.now()).toBe(WALL);
		expect(c.at(WALL - 5000)).toBe(WALL - 5000);
	});

	test("CONTEXTFOLD_TEST_CLOCK_OFFSET_MS shifts now() only; a non-number is no shift", () => {
		setSystemTime(new Date(WALL));
		expect(clockFrom({ CONTEXTFOLD_TEST_CLOCK_OFFSET_MS: String(2 * HOUR) }).now()).toBe(WALL + 2 * HOUR);
		expect(clockFrom({ CONTEXTFOLD_TEST_CLOCK_OFFSET_MS: String(2 * HOUR) }).at(WALL)).toBe(WALL);
		expect(clockFrom({ CONTEXTFOLD_TEST_CLOCK_OFFSET_MS: "soon" }).now()).toBe(WALL);
	});

	test("CONTEXTFOLD_TEST_CLOCK=replay: now() and at() both read the installed map", () => {
		setSystemTime(new Date(WALL + 2000));
		install();
		const c = clockFrom({ CONTEXTFOLD_TEST_CLOCK: "replay", CONTEXTFOLD_TEST_CLOCK_OFFSET_MS: "999" });
		expect(c.now()).toBe(WALL - 70 * HOUR);
		expect(c.at(WALL + 1000)).toBe(WALL - 71 * HOUR);
		// The gap the cold-cache rule would see: recorded, not the one wall second between them.
		expect(c.now() - c.at(WALL + 1000)).toBe(HOUR);
	});

	test("the map is read on every call, so a harness may install it after the extension loaded", () => {
		setSystemTime(new Date(WALL));
		const c = clockFrom({ CONTEXTFOLD_TEST_CLOCK: "replay" });
		expect(c.now()).toBe(WALL);
		install(() => 42);
		expect(c.now()).toBe(42);
	});

	test("without CONTEXTFOLD_TEST_CLOCK=replay the installed map is never read", () => {
		setSystemTime(new Date(WALL));
		let calls = 0;
		install(() => {
			calls++;
			return 1;
		});
		for (const value of [undefined, "", "1", "on", "REPLAY"]) {
			const c = clockFrom(value === undefined ? {} : { CONTEXTFOLD_TEST_CLOCK: value });
			expect(c.now()).toBe(WALL);
			expect(c.at(WALL - 1)).toBe(WALL - 1);
		}
		expect(calls).toBe(0);
	});

	test.each([
		["no map", undefined],
		["not a function", { at: 1 }],
		[
			"a throwing map",
			() => {
				throw new Error("harness gone");
			},
		],
		["NaN", () => Number.NaN],
		["Infinity", () => Number.POSITIVE_INFINITY],
		["a string", () => "12"],
	])("replay with %s falls back to the wall clock (and its offset)", (_name, fn) => {
		setSystemTime(new Date(WALL));
		if (fn !== undefined) install(fn);
		const c = clockFrom({ CONTEXTFOLD_TEST_CLOCK: "replay", CONTEXTFOLD_TEST_CLOCK_OFFSET_MS: "5" });
		expect(c.now()).toBe(WALL + 5);
		expect(c.at(WALL - 7)).toBe(WALL - 7);
	});
});
