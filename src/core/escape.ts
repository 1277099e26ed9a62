/**
 * Text that came from outside (a model's argument, an environment variable, a path recorded in a
 * session file) quoted back in a message: control characters are shown escaped, so the message stays
 * on one line and carries no NUL, terminal escape (ESC, CSI, BEL, backspace, DEL) or line break into
 * the model's context, a terminal or a log. Only ever applied to echoed text, never to recalled bytes.
 */

/** C0 controls, DEL, C1 controls (0x9b is CSI in some terminals), and the Unicode line separators. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is what this is for
export const CONTROL_CHAR = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;
const CONTROL = new RegExp(CONTROL_CHAR.source, "g");

export function escapeControls(text: string): string {
	return text.replace(CONTROL, (c) => {
		if (c === "\n") return "\\n";
		if (c === "\t") return "\\t";
		if (c === "\r") return "\\r";
		return `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`;
	});
}

/** At most this many characters of an echoed argument are quoted back. */
export const MAX_ECHO_CHARS = 80;

/** An argument as quoted back: at most `max` characters (the cut said), control characters escaped. */
export function echoArg(raw: string, max = MAX_ECHO_CHARS): string {
	const cut = raw.length > max ? `${raw.slice(0, max)}…[+${raw.length - max} chars]` : raw;
	return escapeControls(cut);
}
