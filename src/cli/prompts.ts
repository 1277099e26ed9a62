/**
 * The interactive surface, on @clack/prompts, bound to the injected streams (every clack prompt
 * takes `input` and `output`), so a test can drive it with scripted keystrokes. Loaded only when a
 * person is at the terminal: scripts and pipes never pay for it. A cancelled prompt (Ctrl+C or
 * Escape) becomes CliError("cancelled"), which main turns into a clean exit with a message.
 */
import { CliError } from "./errors.ts";
import type { CliIo } from "./io.ts";

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
	warn(message: string): void;
	cancelled(message: string): void;
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
	const check = <T>(value: T | symbol): Exclude<T, symbol> => {
		if (clack.isCancel(value) || typeof value === "symbol")
			throw new CliError("cancelled", "cancelled; nothing was changed");
		return value as Exclude<T, symbol>;
	};
	return {
		intro: (title) => clack.intro(title, { output: io.stdout }),
		outro: (message) => clack.outro(message, { output: io.stdout }),
		note: (message, title) => clack.note(message, title, { output: io.stdout }),
		info: (message) => clack.log.info(message, { output: io.stdout }),
		warn: (message) => clack.log.warn(message, { output: io.stdout }),
		cancelled: (message) => clack.cancel(message, { output: io.stdout }),
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
