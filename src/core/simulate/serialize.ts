/**
 * A replayed request serialized per message for the biller, with a plan's substitutions applied.
 * Views of unchanged messages are the same objects from request to request (ViewCache), so their
 * serializations are cached by identity and compare by reference in the biller.
 */
import { serializeMessage } from "../billing.ts";
import type { ViewCall, ViewMessage } from "../blocks.ts";
import { foldArguments, type InputReplacement } from "../inputs.ts";
import type { FoldPlan } from "../plan.ts";

/** The request serialized per message, with the plan's substitutions when given. */
export function serializeView(
	cache: SerializationCache,
	view: readonly ViewMessage[],
	substitutions: FoldPlan["substitutions"] | null,
): string[] {
	const replaced = new Map<number, Map<number, string>>();
	const inputs = new Map<string, InputReplacement[]>();
	for (const s of substitutions ?? []) {
		const blocks = replaced.get(s.messageIndex) ?? new Map<number, string>();
		if (s.path === undefined) blocks.set(s.blockIndex, s.text);
		else {
			// A tool call's folded values: its block becomes the folded arguments, serialized as the view does.
			const key = `${s.messageIndex}:${s.blockIndex}`;
			const list = inputs.get(key) ?? [];
			list.push({ path: s.path, text: s.text });
			inputs.set(key, list);
			const call = view[s.messageIndex]?.blocks[s.blockIndex]?.call;
			if (call !== undefined) blocks.set(s.blockIndex, foldedCall(cache, call, list));
		}
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

/** A tool call's block text with some of its values folded, cached per call and set of digests. */
function foldedCall(cache: SerializationCache, call: ViewCall, list: readonly InputReplacement[]): string {
	const key = list.map((r) => r.text.slice(0, 24)).join("|");
	let byCall = cache.calls.get(call);
	if (byCall === undefined) {
		byCall = new Map();
		cache.calls.set(call, byCall);
	}
	let text = byCall.get(key);
	if (text === undefined) {
		text = (JSON.stringify(foldArguments(call.args, list)) ?? "") + call.name;
		byCall.set(key, text);
	}
	return text;
}

export interface SerializationCache {
	base: WeakMap<ViewMessage, string>;
	/** Per view, its serializations with substitutions, by which blocks were replaced with what. */
	folded: WeakMap<ViewMessage, Map<string, string>>;
	/** Folded tool-call texts, per call, by the digests in them. */
	calls: WeakMap<ViewCall, Map<string, string>>;
}
