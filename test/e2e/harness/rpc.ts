// A client for `pi --mode rpc`: commands with ids, recorded events, extension UI dialogs, clean shutdown.
import { JsonlSplitter } from "./jsonl.ts";
import { type PiArgsOptions, type PiVersion, piArgs, piEnv } from "./pi-env.ts";
import { spawnPi } from "./process.ts";
import type { Sandbox } from "./sandbox.ts";

export interface RpcResponse {
	type: "response";
	id?: string;
	command: string;
	success: boolean;
	/** 1.6.0 sends `{disposition}` for prompts; 0.80.6 sends no data for them. */
	data?: Record<string, unknown> & { disposition?: "started" | "queued" | "handled" };
	error?: string;
}

export interface RpcEvent {
	type: string;
	[key: string]: unknown;
}

export interface UiRequest extends RpcEvent {
	type: "extension_ui_request";
	id: string;
	method: string;
}

export type UiAnswer = { value: string } | { confirmed: boolean } | { cancelled: true };

const DIALOG_METHODS = new Set(["select", "confirm", "input", "editor"]);

export interface RpcOptions extends PiArgsOptions {
	version: PiVersion;
	sandbox: Sandbox;
	env?: Record<string, string>;
	/**
	 * Answers extension dialogs (select/confirm/input/editor) as they arrive. Return undefined to leave one
	 * pending for the test to answer with `answerUi`. Fire-and-forget UI requests are only recorded.
	 */
	onDialog?: (request: UiRequest) => UiAnswer | undefined;
	/** Default deadline for every wait, in ms (default 15 s). */
	timeoutMs?: number;
}

export interface WaitOptions {
	/** Only look at events from this index on (see `cursor()`); default 0. */
	since?: number;
	timeoutMs?: number;
}

export interface PiRpc {
	readonly version: PiVersion;
	/** Every non-response record, in order (session events and extension UI requests). */
	readonly events: RpcEvent[];
	readonly responses: RpcResponse[];
	readonly uiRequests: UiRequest[];
	/** Lines on stdout that were not JSON; should stay empty. */
	readonly problems: string[];
	stderr(): string;
	/** Index of the next event; pass it as `since` to wait only for what happens after now. */
	cursor(): number;
	/** Sends a command with a fresh id and resolves with its response (successful or not). */
	send(command: { type: string; [key: string]: unknown }): Promise<RpcResponse>;
	/** Like send, but throws on `success:false` and returns `data`. */
	request<T = Record<string, unknown>>(type: string, fields?: Record<string, unknown>): Promise<T>;
	/**
	 * Sends a prompt. For an extension `/command`, both versions answer only after the command's handler has
	 * finished, so a handler that opens a dialog needs the dialog answered before this promise resolves.
	 */
	prompt(message: string, fields?: Record<string, unknown>): Promise<RpcResponse>;
	/**
	 * Sends a prompt and waits until Pi settles (`agent_settled`), returning the events of that run.
	 * Not for extension `/commands` on 0.80.6: their response carries no disposition, so wait on your own event.
	 */
	promptAndWait(message: string, options?: { timeoutMs?: number }): Promise<RpcEvent[]>;
	compact(customInstructions?: string): Promise<RpcResponse>;
	getState(): Promise<Record<string, unknown>>;
	waitFor(predicate: (event: RpcEvent) => boolean, options?: WaitOptions): Promise<RpcEvent>;
	waitForEvent(type: string, options?: WaitOptions): Promise<RpcEvent>;
	/** Waits for the next `agent_settled` at or after `since`. */
	waitForIdle(options?: WaitOptions): Promise<RpcEvent>;
	waitForUiRequest(method?: string, options?: WaitOptions): Promise<UiRequest>;
	answerUi(id: string, answer: UiAnswer): void;
	/** Closes stdin (Pi's orderly shutdown), then SIGTERM, then SIGKILL if Pi lingers. */
	close(timeoutMs?: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export async function startRpc(options: RpcOptions): Promise<PiRpc> {
	const { version, sandbox } = options;
	const defaultTimeout = options.timeoutMs ?? 15_000;
	const args = [...piArgs(sandbox, options), "--mode", "rpc"];
	const pi = spawnPi(version, args, { cwd: sandbox.cwd, env: piEnv(sandbox, options.env), stdin: "pipe" });
	const { child } = pi;

	const events: RpcEvent[] = [];
	const responses: RpcResponse[] = [];
	const uiRequests: UiRequest[] = [];
	const problems: string[] = [];
	const pending = new Map<string, { resolve: (r: RpcResponse) => void; reject: (e: Error) => void }>();
	const listeners = new Set<() => void>();
	let stderr = "";
	let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
	let nextId = 0;

	const notify = () => {
		for (const listener of [...listeners]) listener();
	};
	const write = (record: Record<string, unknown>) => {
		if (exit || !child.stdin?.writable) throw new Error(`pi ${version} rpc is not running${describeExit()}`);
		child.stdin.write(`${JSON.stringify(record)}\n`);
	};
	const describeExit = () => (exit ? ` (exited ${exit.code ?? exit.signal})\n--- stderr\n${stderr}` : "");

	const onRecord = (line: string) => {
		let record: RpcEvent;
		try {
			record = JSON.parse(line) as RpcEvent;
		} catch {
			problems.push(line);
			return;
		}
		if (record.type === "response") {
			const response = record as unknown as RpcResponse;
			responses.push(response);
			const waiter = response.id ? pending.get(response.id) : undefined;
			if (waiter && response.id) {
				pending.delete(response.id);
				waiter.resolve(response);
			}
			return;
		}
		events.push(record);
		if (record.type === "extension_ui_request") {
			const request = record as UiRequest;
			uiRequests.push(request);
			if (DIALOG_METHODS.has(request.method)) {
				const answer = options.onDialog?.(request);
				if (answer) write({ type: "extension_ui_response", id: request.id, ...answer });
			}
		}
		notify();
	};

	const splitter = new JsonlSplitter();
	child.stdout?.on("data", (chunk: Buffer) => {
		for (const line of splitter.push(chunk)) onRecord(line);
	});
	child.stderr?.setEncoding("utf8").on("data", (s: string) => {
		stderr += s;
	});
	const settled = pi.exited.catch((error: unknown) => {
		stderr += `\n[harness] could not run pi: ${String(error)}`;
		return { code: null, signal: null };
	});
	settled.then((result) => {
		for (const line of splitter.flush()) onRecord(line);
		exit = result;
		for (const [id, waiter] of pending) {
			pending.delete(id);
			waiter.reject(new Error(`pi ${version} rpc exited before answering ${id}${describeExit()}`));
		}
		notify();
	});

	const waitFor = (predicate: (event: RpcEvent) => boolean, wait: WaitOptions = {}): Promise<RpcEvent> => {
		const timeoutMs = wait.timeoutMs ?? defaultTimeout;
		let scanned = wait.since ?? 0;
		return new Promise((resolve, reject) => {
			const check = () => {
				for (; scanned < events.length; scanned += 1) {
					const event = events[scanned];
					if (event && predicate(event)) {
						done();
						resolve(event);
						return;
					}
				}
				if (exit) {
					done();
					reject(new Error(`pi ${version} rpc exited while waiting${describeExit()}`));
				}
			};
			const timer = setTimeout(() => {
				done();
				const seen = events
					.slice(wait.since ?? 0)
					.map((e) => e.type)
					.join(", ");
				reject(
					new Error(
						`pi ${version} rpc: condition not met in ${timeoutMs} ms; events seen: ${seen}\n--- stderr\n${stderr}`,
					),
				);
			}, timeoutMs);
			const done = () => {
				clearTimeout(timer);
				listeners.delete(check);
			};
			listeners.add(check);
			check();
		});
	};

	const send = (command: { type: string; [key: string]: unknown }): Promise<RpcResponse> => {
		nextId += 1;
		const id = `cf-${nextId}`;
		return new Promise((resolve, reject) => {
			const timer = setTimeout(() => {
				pending.delete(id);
				reject(
					new Error(
						`pi ${version} rpc: no response to ${command.type} (${id}) in ${defaultTimeout} ms\n--- stderr\n${stderr}`,
					),
				);
			}, defaultTimeout);
			pending.set(id, {
				resolve: (r) => {
					clearTimeout(timer);
					resolve(r);
				},
				reject: (e) => {
					clearTimeout(timer);
					reject(e);
				},
			});
			try {
				write({ ...command, id });
			} catch (error) {
				pending.delete(id);
				clearTimeout(timer);
				reject(error);
			}
		});
	};

	const request = async <T>(type: string, fields: Record<string, unknown> = {}): Promise<T> => {
		const response = await send({ type, ...fields });
		if (!response.success) throw new Error(`pi ${version} rpc ${type} failed: ${response.error}`);
		return (response.data ?? {}) as T;
	};

	const client: PiRpc = {
		version,
		events,
		responses,
		uiRequests,
		problems,
		stderr: () => stderr,
		cursor: () => events.length,
		send,
		request,
		prompt: (message, fields = {}) => send({ type: "prompt", message, ...fields }),
		async promptAndWait(message, wait = {}) {
			const since = events.length;
			const response = await send({ type: "prompt", message });
			if (!response.success) throw new Error(`pi ${version} rejected prompt: ${response.error}`);
			if (response.data?.disposition === "handled") return events.slice(since);
			await waitFor((e) => e.type === "agent_settled", { since, timeoutMs: wait.timeoutMs });
			return events.slice(since);
		},
		compact: (customInstructions) =>
			send(customInstructions === undefined ? { type: "compact" } : { type: "compact", customInstructions }),
		getState: () => request("get_state"),
		waitFor,
		waitForEvent: (type, wait) => waitFor((e) => e.type === type, wait),
		waitForIdle: (wait) => waitFor((e) => e.type === "agent_settled", wait),
		async waitForUiRequest(method, wait) {
			const found = await waitFor((e) => e.type === "extension_ui_request" && (!method || e.method === method), wait);
			return found as UiRequest;
		},
		answerUi(id, answer) {
			write({ type: "extension_ui_response", id, ...answer });
		},
		async close(timeoutMs = 5_000) {
			if (exit) return exit;
			child.stdin?.end();
			const deadline = (ms: number) => new Promise<undefined>((resolve) => setTimeout(resolve, ms).unref());
			let result = await Promise.race([settled, deadline(timeoutMs)]);
			if (!result && child.pid !== undefined) {
				child.kill("SIGTERM");
				result = await Promise.race([settled, deadline(2_000)]);
			}
			if (!result) {
				pi.kill();
				result = await settled;
			}
			return result;
		},
	};
	return client;
}
