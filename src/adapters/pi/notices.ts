/**
 * One rule for every notice: interactive sessions hear through Pi's UI, headless ones on stderr.
 * Nothing is ever written raw to the terminal while the TUI owns it.
 */

export interface NoticeContext {
	hasUI: boolean;
	ui: { notify(message: string, type?: "info" | "warning" | "error"): void };
}

export class Notices {
	private readonly said = new Set<string>();

	constructor(private readonly stderr: (line: string) => void = (line) => process.stderr.write(`${line}\n`)) {}

	/** Say something at most once per key for the life of this extension instance. */
	once(
		ctx: NoticeContext | undefined,
		key: string,
		message: string,
		level: "info" | "warning" | "error" = "warning",
	): void {
		if (this.said.has(key)) return;
		this.said.add(key);
		this.say(ctx, message, level);
	}

	say(ctx: NoticeContext | undefined, message: string, level: "info" | "warning" | "error" = "info"): void {
		const text = message.startsWith("context-fold") ? message : `context-fold: ${message}`;
		try {
			if (ctx?.hasUI) {
				ctx.ui.notify(text, level);
				return;
			}
		} catch {
			// A stale or broken UI falls back to stderr rather than losing the notice.
		}
		this.stderr(text);
	}
}
