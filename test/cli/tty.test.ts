// The real binary at a real terminal (tmux): the interactive menu reads keys in raw mode, runs the
// chosen action, and Escape ends it cleanly with exit 130.
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { hasTmux, requireTmux, tmuxSkipAllowed } from "../e2e/harness/tmux.ts";
import { ensureCli } from "./build.ts";
import { type TraceAgent, traceAgent } from "./helpers.ts";

const skip = tmuxSkipAllowed();
let agent: TraceAgent;
let binary = "";
const sockets: string[] = [];
let started = 0;
const tmuxEnv = () => ({
	PATH: process.env.PATH,
	TERM: "xterm-256color",
	TMUX_TMPDIR: agent.root,
	HOME: agent.env.HOME,
});

beforeAll(() => {
	if (skip) return;
	requireTmux();
	binary = ensureCli().binary;
	agent = traceAgent();
});
afterAll(() => agent?.cleanup());
afterEach(() => {
	for (const s of sockets.splice(0)) {
		try {
			execFileSync("tmux", ["-L", s, "kill-server"], { stdio: "ignore", env: tmuxEnv() });
		} catch {
			// Already gone.
		}
	}
});

/** Starts the binary in a private tmux server; the pane stays after exit so its last screen and code can be read. */
function start(args: string[]) {
	const socket = `cf-cli-${process.pid}-${started++}`;
	sockets.push(socket);
	const conf = join(agent.root, "tmux.conf");
	writeFileSync(conf, "set -g status off\nset -g remain-on-exit on\n");
	const tmux = (...a: string[]) =>
		execFileSync("tmux", ["-L", socket, "-f", conf, ...a], {
			encoding: "utf8",
			env: tmuxEnv(),
		});
	const script = `PI_CODING_AGENT_DIR='${agent.agentDir}' '${binary}' ${args.join(" ")}; echo "EXIT=$?"`;
	tmux("new-session", "-d", "-s", "cf", "-x", "110", "-y", "45", "-c", agent.root, "--", "sh", "-c", script);
	const capture = () => tmux("capture-pane", "-p", "-t", "cf");
	return {
		keys: (...k: string[]) => tmux("send-keys", "-t", "cf", ...k),
		async waitFor(pattern: RegExp, timeoutMs = 10_000): Promise<string> {
			const until = Date.now() + timeoutMs;
			for (;;) {
				const screen = capture();
				if (pattern.test(screen)) return screen;
				if (Date.now() > until) throw new Error(`never saw ${pattern}; screen:\n${screen}`);
				await new Promise((r) => setTimeout(r, 50));
			}
		},
	};
}

describe.skipIf(skip)(`the binary in a terminal${hasTmux() ? "" : " (tmux missing)"}`, () => {
	test("pick a session and Status: the menu, the status note, the menu again; Quit, exit 0", async () => {
		const t = start([]);
		await t.waitFor(/Which session\?/);
		t.keys("Enter");
		await t.waitFor(/What now\?/);
		t.keys("Enter");
		// After the action the menu comes back instead of exiting.
		const again = await t.waitFor(/context-fold status[\s\S]*◆ {2}What now\?/);
		expect(again).toContain("folds: ");
		t.keys("Up");
		t.keys("Enter");
		const screen = await t.waitFor(/EXIT=\d+/);
		expect(screen).toContain("done");
		expect(screen).toContain("EXIT=0");
	}, 30_000);

	test("Escape at the menu goes back to the sessions (a real terminal's Escape key); Ctrl+C quits, exit 130", async () => {
		const t = start([]);
		await t.waitFor(/Which session\?/);
		t.keys("Enter");
		await t.waitFor(/◆ {2}What now\?/);
		t.keys("Escape");
		await t.waitFor(/◆ {2}Which session\?/);
		t.keys("C-c");
		const screen = await t.waitFor(/EXIT=\d+/);
		expect(screen).toContain("context-fold: cancelled; nothing was changed");
		expect(screen).toContain("EXIT=130");
	}, 30_000);

	test("Escape at the first prompt: a message and exit 130", async () => {
		const t = start(["recall"]);
		await t.waitFor(/Which session\?/);
		t.keys("Escape");
		const screen = await t.waitFor(/EXIT=\d+/);
		expect(screen).toContain("context-fold: cancelled; nothing was changed");
		expect(screen).toContain("EXIT=130");
	}, 30_000);
});
