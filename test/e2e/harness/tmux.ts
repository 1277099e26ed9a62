// Drives Pi's interactive TUI inside a private tmux server, the way a person at a terminal would.
import { execFileSync, spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { NODE_BIN, type PiArgsOptions, type PiVersion, piArgs, piCliPath, piEnv } from "./pi-env.ts";
import type { Sandbox } from "./sandbox.ts";

export function hasTmux(): boolean {
	return spawnSync("tmux", ["-V"], { stdio: "ignore" }).status === 0;
}

/** True when TUI tests may be skipped on a machine without tmux (CF_ALLOW_NO_TMUX=1). */
export function tmuxSkipAllowed(): boolean {
	return !hasTmux() && process.env.CF_ALLOW_NO_TMUX === "1";
}

/** Throws a clear error when tmux is missing, so a TUI test fails loudly instead of silently passing. */
export function requireTmux(): void {
	if (!hasTmux()) {
		throw new Error(
			"tmux is missing: the TUI tests need it (apt-get install tmux). Set CF_ALLOW_NO_TMUX=1 to skip them instead.",
		);
	}
}

export interface TuiOptions extends PiArgsOptions {
	version: PiVersion;
	sandbox: Sandbox;
	env?: Record<string, string>;
	/** Terminal size; fixed so screen captures are reproducible. */
	width?: number;
	height?: number;
}

export interface TuiSession {
	/** The private tmux socket name (`tmux -L <socket>`), e.g. to attach by hand while debugging. */
	readonly socket: string;
	/** Sends tmux key names (`Enter`, `C-c`, `Escape`, ...) or text, as `tmux send-keys` takes them. */
	sendKeys(...keys: string[]): void;
	/** Types text literally (no key-name lookup), without pressing Enter. */
	type(text: string): void;
	/**
	 * Pastes text as a terminal does for a clipboard paste or a file dropped on the window: wrapped in
	 * bracketed-paste markers, so Pi's editor receives it as one paste rather than as typed keys.
	 */
	paste(text: string): void;
	/** The visible screen as plain text, one line per row. */
	capture(): string;
	/** Polls the screen until it matches; throws with the last screen on timeout. */
	waitFor(pattern: string | RegExp, timeoutMs?: number): Promise<string>;
	/** Polls until the screen no longer matches. */
	waitForGone(pattern: string | RegExp, timeoutMs?: number): Promise<string>;
	/** Waits until the footer shows the model id: Pi's editor is drawn and reads keys from then on. */
	waitForReady(timeoutMs?: number): Promise<string>;
	/** True while Pi is still running in the pane. */
	isRunning(): boolean;
	/** Waits until Pi has exited (e.g. after `/quit`); the pane and its last screen stay readable. */
	waitForExit(timeoutMs?: number): Promise<string>;
	/** Kills the private tmux server and with it Pi. */
	kill(): void;
}

let counter = 0;

/** Starts Pi's TUI in a detached session of a tmux server that only this test uses. */
export async function startTui(options: TuiOptions): Promise<TuiSession> {
	requireTmux();
	const { sandbox, version } = options;
	counter += 1;
	const socket = `cf-e2e-${process.pid}-${counter}`;
	const session = "pi";
	const width = options.width ?? 120;
	const height = options.height ?? 40;
	// Own config: no user tmux.conf, no status line (the pane is the whole terminal), keep the pane if Pi
	// dies so its last screen can still be read, and extended keys so Pi does not print a warning about them.
	const conf = join(sandbox.root, "tmux.conf");
	writeFileSync(
		conf,
		"set -g status off\nset -g remain-on-exit on\nset -g history-limit 5000\nset -g extended-keys on\n",
	);
	const env = {
		...piEnv(sandbox, options.env),
		// The socket then lives inside the sandbox, next to everything else the test created.
		TMUX_TMPDIR: sandbox.tmp,
		TERM: "xterm-256color",
	};
	const tmux = (...args: string[]) =>
		execFileSync("tmux", ["-L", socket, "-f", conf, ...args], {
			env,
			encoding: "utf8",
			stdio: ["ignore", "pipe", "pipe"],
		});
	const command = [NODE_BIN, piCliPath(version), ...piArgs(sandbox, options)];
	tmux(
		"new-session",
		"-d",
		"-s",
		session,
		"-x",
		String(width),
		"-y",
		String(height),
		"-c",
		sandbox.cwd,
		"--",
		...command,
	);

	const capture = () => tmux("capture-pane", "-p", "-t", session);
	const matches = (screen: string, pattern: string | RegExp) =>
		typeof pattern === "string" ? screen.includes(pattern) : pattern.test(screen);
	const poll = async (done: (screen: string) => boolean, what: string, timeoutMs: number) => {
		const deadline = Date.now() + timeoutMs;
		let screen = capture();
		while (!done(screen)) {
			if (Date.now() > deadline) throw new Error(`tmux: ${what} not seen in ${timeoutMs} ms; screen:\n${screen}`);
			await new Promise((resolve) => setTimeout(resolve, 50));
			screen = capture();
		}
		return screen;
	};

	const isRunning = () => tmux("display-message", "-p", "-t", session, "#{pane_dead}").trim() === "0";

	return {
		socket,
		sendKeys: (...keys) => {
			tmux("send-keys", "-t", session, ...keys);
		},
		type: (text) => {
			tmux("send-keys", "-t", session, "-l", text);
		},
		paste: (text) => {
			// The buffer lives in this test's private tmux server; -p brackets the paste (Pi turns the mode
			// on), -d deletes the buffer afterwards.
			tmux("set-buffer", "-b", "cf-paste", "--", text);
			tmux("paste-buffer", "-p", "-d", "-b", "cf-paste", "-t", session);
		},
		capture,
		waitFor: (pattern, timeoutMs = 10_000) => poll((s) => matches(s, pattern), String(pattern), timeoutMs),
		waitForGone: (pattern, timeoutMs = 10_000) =>
			poll((s) => !matches(s, pattern), `disappearance of ${String(pattern)}`, timeoutMs),
		waitForReady: (timeoutMs = 15_000) => poll((s) => s.includes(sandbox.modelId), "Pi's footer", timeoutMs),
		isRunning,
		waitForExit: (timeoutMs = 10_000) => poll(() => !isRunning(), "Pi's exit", timeoutMs),
		kill: () => {
			try {
				tmux("kill-server");
			} catch {
				// Server already gone.
			}
		},
	};
}
