// The interactive flow, driven through clack's injectable streams with scripted keystrokes: pick a
// session, pick an action, follow along; Escape and Ctrl+C end it cleanly with a message.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { main } from "../../src/cli/main.ts";
import { sessionDataDir } from "../../src/store/paths.ts";
import { COMPACT_ID, type MemIo, memIo, TRACE_CWD, type TraceAgent, traceAgent } from "./helpers.ts";

const DOWN = "\x1b[B";
const ENTER = "\r";
const ESCAPE = "\x1b";
const CTRL_C = "\x03";

/** Waits until the screen (everything written so far) matches. */
async function screen(io: MemIo, pattern: RegExp, timeoutMs = 5000): Promise<void> {
	const until = Date.now() + timeoutMs;
	while (Date.now() < until) {
		if (pattern.test(io.out())) return;
		await new Promise((r) => setTimeout(r, 10));
	}
	throw new Error(`screen never matched ${pattern}:\n${io.out()}`);
}

/** Types keys whenever the screen shows the matching prompt, then waits for the exit code. */
async function drive(argv: string[], io: MemIo, script: Array<[RegExp, string]>): Promise<number> {
	const done = main(argv, io);
	for (const [pattern, keys] of script) {
		await screen(io, pattern);
		io.type(keys);
	}
	return done;
}

describe("interactive, in a terminal", () => {
	let agent: TraceAgent;
	beforeAll(() => {
		agent = traceAgent();
	});
	afterAll(() => agent.cleanup());
	const io = () => memIo({ env: agent.env, cwd: TRACE_CWD, interactive: true });

	test("no command: sessions most recent first (size, project), then an action, then its result", async () => {
		const t = io();
		const code = await drive([], t, [
			[/Which session\?/, ENTER],
			[/What now\?/, ENTER],
		]);
		expect(code).toBe(0);
		const out = t.out();
		expect(out).toContain("context-fold dev");
		const options = out.slice(out.indexOf("Which session?")).split("\n").slice(1, 4);
		// The recorded copy's size depends on how many fold records the current ladder writes into it.
		expect(
			options.map((l) =>
				l
					.replace(/^│ {2}[●○] /, "")
					.replace(/\s+\(.*\)$/, "")
					.replace(/2\.\d MB/, "2.x MB"),
			),
		).toEqual([
			"ffae836b    2.x MB  /Users/badlogic/workspaces/pi-mono",
			"d703ffff     633 B  /other/project",
			"d703a1a9  951.2 KB  /Users/badlogic/workspaces/pi-mono",
		]);
		expect(out).toContain("◇  status ─");
		expect(out).toContain("context-fold status");
		expect(out).toContain("└  done");
		expect(t.err()).toBe("");
	});

	test("recall from the menu: pick the block from the list of folded blocks", async () => {
		const t = io();
		const code = await drive([], t, [
			[/Which session\?/, ENTER],
			[/What now\?/, `${DOWN}${DOWN}${ENTER}`],
			[/Which folded block\?/, `${DOWN}${ENTER}`],
		]);
		expect(code).toBe(0);
		expect(t.out()).toMatch(/◇ {2}recall ─/);
		expect(t.out()).toContain("(sha256 verified):");
	});

	test("handoff asks for the goal; simulate shows a spinner and the summary", async () => {
		const t = io();
		const code = await drive(["handoff", COMPACT_ID], t, [[/Goal for the fresh session/, `wrap up${ENTER}`]]);
		expect(code).toBe(0);
		expect(t.out()).toContain("Seed written: ");
		expect(existsSync(join(sessionDataDir(COMPACT_ID, agent.env), "handoff-2026-01-01T00-00-00Z.md"))).toBe(true);
		const s = io();
		expect(
			await drive([], s, [
				[/Which session\?/, ENTER],
				[/What now\?/, `${DOWN}${ENTER}`],
			]),
		).toBe(0);
		expect(s.out()).toContain("replayed");
		expect(s.out()).toContain("est. cost");
	});

	test("a command missing its arguments asks for them instead of failing", async () => {
		const t = io();
		const code = await drive(["recall"], t, [
			[/Which session\?/, ENTER],
			[/Which folded block\?/, ENTER],
			[/Search for/, `import${ENTER}`],
		]);
		expect(code).toBe(0);
		expect(t.out()).toMatch(/search "import": \d+ matching line\(s\) in \d+ of \d+ folded block\(s\)/);
	});

	for (const [name, key] of [
		["Escape", ESCAPE],
		["Ctrl+C", CTRL_C],
	] as const) {
		test(`${name} at any prompt ends cleanly: a message, exit 130, nothing written`, async () => {
			const t = io();
			const code = await drive([], t, [
				[/Which session\?/, ENTER],
				[/What now\?/, key],
			]);
			expect(code).toBe(130);
			expect(t.err()).toBe("context-fold: cancelled; nothing was changed\n");
			const first = io();
			expect(await drive(["handoff"], first, [[/Which session\?/, key]])).toBe(130);
		});
	}
});
