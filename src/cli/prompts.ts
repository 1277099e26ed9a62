/**
 * The interactive surface, on @clack/prompts, bound to the injected streams (every clack prompt
 * takes `input` and `output`), so a test can drive it with scripted keystrokes. Loaded only when a
 * person is at the terminal: scripts and pipes never pay for it. Ctrl+C at a prompt becomes
 * CliError("cancelled"), which main turns into a clean exit with a message. Escape becomes GoBack:
 * the step that asked catches it and goes back one step, and where nothing catches it, it is the
 * same clean exit.
 */
import { CliError } from "./errors.ts";
import type { CliIo } from "./io.ts";

const CANCELLED = "cancelled; nothing was changed";

/** Escape at a prompt: back one step where there is one (the menu, recall's steps), else a clean exit (130). */
export class GoBack extends CliError {
	constructor() {
		super("cancelled", CANCELLED);
	}
}

export interface Choice<T> {
	value: T;
	label: string;
	hint?: string;
}

export interface Prompts {
	intro(title: string): void;
	outro(message: string): void;
	note(message: string, title?: string): void;
	info(message: string): void;
	/** An error shown inside the prompt frame (the menu goes on after it). */
	error(message: string): void;
	select<T>(message: string, choices: ReadonlyArray<Choice<T>>, maxItems?: number): Promise<T>;
	text(
		message: string,
		options?: { placeholder?: string; initial?: string; validate?: (v: string) => string | undefined },
	): Promise<string>;
	/** Runs `work` behind a spinner and returns its result; the spinner says how it ended. */
	spin<T>(message: string, work: () => T | Promise<T>, done?: (result: T) => string): Promise<T>;
}

export async function clackPrompts(io: CliIo): Promise<Prompts> {
	const clack = await import("@clack/prompts");
	const streams = { input: io.stdin, output: io.stdout };
	// clack cancels on Escape and on Ctrl+C alike; the key that did it tells going back from quitting.
	// Keypress events start only once clack's readline decodes the input, so no typed key is taken from it.
	let ctrlC = false;
	io.stdin.on("keypress", (_text: string, key?: { name?: string; ctrl?: boolean; sequence?: string }) => {
		if ((key?.ctrl === true && key.name === "c") || key?.sequence === "\x03") ctrlC = true;
	});
	const check = <T>(value: T | symbol): Exclude<T, symbol> => {
		const quit = ctrlC;
		ctrlC = false;
		if (clack.isCancel(value) || typeof value === "symbol")
			throw quit ? new CliError("cancelled", CANCELLED) : new GoBack();
		return value as Exclude<T, symbol>;
	};
	return {
		intro: (title) => clack.intro(title, { output: io.stdout }),
		outro: (message) => clack.outro(message, { output: io.stdout }),
		note: (message, title) => clack.note(message, title, { output: io.stdout }),
		info: (message) => clack.log.info(message, { output: io.stdout }),
		error: (message) => clack.log.error(message, { output: io.stdout }),
		async select(message, choices, maxItems) {
			const options = choices.map((c) => ({
				value: c.value,
				label: c.label,
				...(c.hint !== undefined && { hint: c.hint }),
			}));
			// clack's option type is conditional on the value type; the values pass through untouched.
			const picked = await clack.select({
				message,
				options: options as never,
				...(maxItems && { maxItems }),
				...streams,
			});
			return check(picked) as (typeof choices)[number]["value"];
		},
		async text(message, options = {}) {
			const value = await clack.text({
				message,
				...(options.placeholder !== undefined && { placeholder: options.placeholder }),
				...(options.initial !== undefined && { initialValue: options.initial }),
				...(options.validate !== undefined && {
					validate: (v: string | undefined) => options.validate?.(v ?? ""),
				}),
				...streams,
			});
			return check(value);
		},
		async spin(message, work, done) {
			const s = clack.spinner({ output: io.stdout });
			s.start(message);
			try {
				const result = await work();
				s.stop(done ? done(result) : message);
				return result;
			} catch (error) {
				s.error(`${message}: failed`);
				throw error;
			}
		},
	};
}
