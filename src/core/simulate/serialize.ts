/**
 * A replayed request serialized per message for the biller, with a plan's substitutions applied, by
 * one of the measures in wire.ts. Messages Pi never sends (aborted or errored responses) are left out.
 * Views of unchanged messages are the same objects from request to request (ViewCache), so their
 * serializations are cached by identity and compare by reference in the biller.
 */
import { neverSent, type ViewCall, type ViewMessage } from "../blocks.ts";
import { foldArguments, type InputReplacement } from "../inputs.ts";
import type { FoldPlan } from "../plan.ts";
import { measureMessage, type PromptMeasure } from "./wire.ts";

/** The request serialized per message, with the plan's substitutions when given. */
export function serializeView(
	cache: SerializationCache,
	view: readonly ViewMessage[],
	substitutions: FoldPlan["substitutions"] | null,
	measure: PromptMeasure = "content",
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
	const parts: string[] = [];
	for (let i = 0; i < view.length; i++) {
		const v = view[i] as ViewMessage;
		if (neverSent(v)) continue;
		// Views of unchanged messages are the same objects from request to request (ViewCache), so
		// their serializations are cached by identity and compare by reference in the biller.
		let base = cache.base.get(v);
		if (base === undefined) {
			base = measureMessage(measure, v);
			cache.base.set(v, base);
		}
		const blocks = replaced.get(i);
		if (blocks === undefined) {
			if (base !== null) parts.push(base);
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
			folded = measureMessage(measure, v, blocks);
			variants.set(variant, folded);
		}
		if (folded !== null) parts.push(folded);
	}
	return parts;
}

/** A tool call's arguments as JSON with some of their values folded, cached per call and set of digests. */
function foldedCall(cache: SerializationCache, call: ViewCall, list: readonly InputReplacement[]): string {
	const key = list.map((r) => r.text.slice(0, 24)).join("|");
	let byCall = cache.calls.get(call);
	if (byCall === undefined) {
		byCall = new Map();
		cache.calls.set(call, byCall);
	}
	let text = byCall.get(key);
	if (text === undefined) {
		text = JSON.stringify(foldArguments(call.args, list)) ?? "";
		byCall.set(key, text);
	}
	return text;
}

export interface SerializationCache {
	/** Per view, its serialization (null: the measure sends nothing for it). */
	base: WeakMap<ViewMessage, string | null>;
	/** Per view, its serializations with substitutions, by which blocks were replaced with what. */
	folded: WeakMap<ViewMessage, Map<string, string | null>>;
	/** Folded tool-call arguments (JSON), per call, by the digests in them. */
	calls: WeakMap<ViewCall, Map<string, string>>;
}
