/**
 * Carry out a plan's substitutions on Pi's outgoing messages, in place. In-place mutation keeps every
 * message object identical by reference, which Pi 1.6.0 relies on to leave mid-conversation system
 * patches where they are (a returned new list would be collapsed behind one replayed head).
 * All or nothing: if any substitution cannot be applied, every change is rolled back.
 */
import type { Substitution } from "../../core/plan.ts";
import type { PiContent, PiMessage } from "../../core/session/view.ts";

export class ApplyError extends Error {}

export function applySubstitutions(messages: PiMessage[], substitutions: readonly Substitution[]): void {
	const undo: Array<() => void> = [];
	try {
		for (const sub of substitutions) {
			const message = messages[sub.messageIndex];
			const content = message?.content;
			if (!Array.isArray(content)) throw new ApplyError(`message ${sub.messageIndex} has no content array`);
			const part = content[sub.blockIndex] as PiContent | undefined;
			if (part === undefined || part === null)
				throw new ApplyError(`block ${sub.messageIndex}:${sub.blockIndex} is missing`);
			if (part.type === "text") {
				const before = part.text;
				part.text = sub.text;
				undo.push(() => {
					part.text = before;
				});
			} else if (part.type === "thinking") {
				const before = part.thinking;
				const hadSignature = Object.hasOwn(part, "thinkingSignature");
				const signature = part.thinkingSignature;
				part.thinking = sub.text;
				if (sub.dropSignature) delete part.thinkingSignature;
				undo.push(() => {
					part.thinking = before;
					if (hadSignature) part.thinkingSignature = signature;
				});
			} else {
				throw new ApplyError(
					`block ${sub.messageIndex}:${sub.blockIndex} is ${String(part.type)}, not text or thinking`,
				);
			}
		}
	} catch (error) {
		for (let i = undo.length - 1; i >= 0; i--) undo[i]?.();
		throw error;
	}
}
