/**
 * Coded errors: everything the CLI expects to go wrong is a CliError with a code, and the one
 * top-level handler in main.ts turns it into a single line and the exit code below. Scripts can rely
 * on the codes; the messages are for people.
 */

export const EXIT_CODES = {
	ok: 0,
	internal: 1,
	usage: 2,
	"unknown-session": 3,
	"ambiguous-session": 4,
	"unreadable-session": 5,
	"sha-mismatch": 6,
	recall: 7,
	io: 8,
	cancelled: 130,
} as const;

export type ErrorCode = Exclude<keyof typeof EXIT_CODES, "ok">;

export class CliError extends Error {
	constructor(
		readonly code: ErrorCode,
		message: string,
		/** Printed after the message (e.g. a command's usage); the message itself stays one line. */
		readonly detail?: string,
	) {
		super(message);
	}

	get exit(): number {
		return EXIT_CODES[this.code];
	}
}

export function usageError(message: string, usage?: string): CliError {
	return new CliError("usage", message, usage);
}
