import type { ViewBlock, ViewMessage } from "../blocks.ts";
import { extraText, type PiMessage } from "./view.ts";

/**
 * Views of messages already seen, by entry id. Session entries never change, so a message whose
 * content has the same shape and text lengths as last time reuses its view: steady requests then do
 * almost no allocation. Pruned to the messages of the latest request, so it holds at most one view
 * of the current context.
 */
export class ViewCache {
	private views = new Map<string, { view: ViewMessage; calls?: Array<[string, string | undefined]> }>();
	private next = new Map<string, { view: ViewMessage; calls?: Array<[string, string | undefined]> }>();

	get size(): number {
		return this.views.size;
	}

	take(entryId: string, m: PiMessage): { view: ViewMessage; calls?: Array<[string, string | undefined]> } | undefined {
		const hit = this.views.get(entryId);
		if (hit === undefined || !sameShape(hit.view, m)) return undefined;
		this.next.set(entryId, hit);
		return hit;
	}

	put(entryId: string, view: ViewMessage, calls?: Array<[string, string | undefined]>): void {
		this.next.set(entryId, calls ? { view, calls } : { view });
	}

	/** End of a request: keep only what it used. */
	prune(): void {
		this.views = this.next;
		this.next = new Map();
	}
}

function sameShape(view: ViewMessage, m: PiMessage): boolean {
	const content = m.content;
	if (!Array.isArray(content)) return false;
	// A view has one block more than the content only for the text of bash executions and summaries
	// (extraText). A view made when another extension had added a part to the message has one more
	// block too, and reusing it would miscount the message (found by the fuzz suite: a block inside the
	// protected tail was folded), so the extra block must really be that text.
	const extra = view.blocks.length - content.length;
	const text = extraText(m);
	if (extra === 1) {
		const last = view.blocks[view.blocks.length - 1];
		if (text.length === 0 || last?.kind !== "other" || last.text !== text) return false;
	} else if (extra !== 0 || text.length > 0) return false;
	for (let j = 0; j < content.length; j++) {
		const part = content[j];
		const b = view.blocks[j] as ViewBlock;
		if (part === null || typeof part !== "object") return false;
		if (b.kind === "text") {
			if (part.type !== "text" || part.text?.length !== b.text.length) return false;
		} else if (b.kind === "thinking") {
			if (part.type !== "thinking" || part.thinking?.length !== b.text.length) return false;
		} else if (b.kind === "image") {
			if (part.type !== "image") return false;
		} else if (b.kind === "toolCall") {
			if (part.type !== "toolCall") return false;
		} else return false;
	}
	return true;
}
