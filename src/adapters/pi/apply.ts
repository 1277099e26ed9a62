/**
 * Carry out a plan's substitutions on Pi's outgoing messages, in place. In-place mutation keeps every
 * message object identical by reference, which Pi 1.6.0 relies on to leave mid-conversation system
 * patches where they are (a returned new list would be collapsed behind one replayed head).
 * All or nothing: if any substitution cannot be applied, every change is rolled back.
 * An input substitution replaces one argument value of a tool call: the part's `arguments` becomes a
 * folded copy (foldArguments), so name, id, every other key and value, and any field beside the
 * arguments (Google's thoughtSignature) stay as they were, and the original object is never changed.
 */
import { foldArguments, valueAt } from "../../core/inputs.ts";
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
			if (sub.path !== undefined) {
				if (part.type !== "toolCall")
					throw new ApplyError(`block ${sub.messageIndex}:${sub.blockIndex} is ${String(part.type)}, not a tool call`);
				const before = part.arguments;
				part.arguments = foldArguments(before, [{ path: sub.path, text: sub.text }]);
				undo.push(() => {
					part.arguments = before;
				});
			} else if (part.type === "text") {
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

/** Whether a substitution still fits its part (another extension may have reshaped the message). */
export function fits(messages: readonly PiMessage[], sub: Substitution): boolean {
	const content = messages[sub.messageIndex]?.content;
	const part = Array.isArray(content) ? (content[sub.blockIndex] as PiContent | null | undefined) : undefined;
	if (sub.path !== undefined) return part?.type === "toolCall" && valueAt(part.arguments, sub.path) !== undefined;
	return part?.type === "text" || part?.type === "thinking";
}
