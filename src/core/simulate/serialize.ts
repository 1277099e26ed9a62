/**
 * A replayed request serialized per message for the biller, with a plan's substitutions applied.
 * Views of unchanged messages are the same objects from request to request (ViewCache), so their
 * serializations are cached by identity and compare by reference in the biller.
 */
import { serializeMessage } from "../billing.ts";
import type { ViewMessage } from "../blocks.ts";
import type { FoldPlan } from "../plan.ts";
import type { PiMessage } from "../session/view.ts";

/** The request serialized per message, with the plan's substitutions when given. */
export function serializeView(
	cache: SerializationCache,
	view: readonly ViewMessage[],
	substitutions: FoldPlan["substitutions"] | null,
): string[] {
	const replaced = new Map<number, Map<number, string>>();
	for (const s of substitutions ?? []) {
		const blocks = replaced.get(s.messageIndex) ?? new Map<number, string>();
		blocks.set(s.blockIndex, s.text);
		replaced.set(s.messageIndex, blocks);
	}
	const parts: string[] = new Array(view.length);
	for (let i = 0; i < view.length; i++) {
		const v = view[i] as ViewMessage;
		// Views of unchanged messages are the same objects from request to request (ViewCache), so
		// their serializations are cached by identity and compare by reference in the biller.
		let base = cache.base.get(v);
		if (base === undefined) {
			base = serializeMessage(v);
			cache.base.set(v, base);
		}
		const blocks = replaced.get(i);
		if (blocks === undefined) {
			parts[i] = base;
			continue;
		}
		const variant = [...blocks].map(([j, text]) => `${j}:${text.length}:${text.slice(0, 16)}`).join("|");
		let variants = cache.folded.get(v);
		if (variants === undefined) {
			variants = new Map();
			cache.folded.set(v, variants);
		}
		let folded = variants.get(variant);
		if (folded === undefined) {
			folded = serializeMessage(v, blocks);
			variants.set(variant, folded);
		}
		parts[i] = folded;
	}
	return parts;
}

export interface SerializationCache {
	base: WeakMap<ViewMessage, string>;
	/** Per view, its serializations with substitutions, by which blocks were replaced with what. */
	folded: WeakMap<ViewMessage, Map<string, string>>;
	keys: WeakMap<PiMessage, string>;
}
