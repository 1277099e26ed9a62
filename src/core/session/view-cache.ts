import type { ViewBlock, ViewMessage } from "../blocks.ts";
import { extraText, hasExtraText, type PiMessage } from "./view.ts";

/**
 * Views of messages already seen, by entry id. Session entries never change, so a message whose
 * content has the same shape and text lengths as last time reuses its view: steady requests then do
 * almost no allocation. Pruned to the messages of the latest request, so it holds at most one view
 * of the current context. Each entry is stamped with the request that last used it, so a request
 * writes no map but for the messages it builds.
 */
export class ViewCache {
	private readonly views = new Map<string, { view: ViewMessage; used: number }>();
	private request = 0;

	get size(): number {
		return this.views.size;
	}

	take(entryId: string, m: PiMessage): ViewMessage | undefined {
		const hit = this.views.get(entryId);
		if (hit === undefined || !sameShape(hit.view, m)) return undefined;
		hit.used = this.request;
		return hit.view;
	}

	put(entryId: string, view: ViewMessage): void {
		this.views.set(entryId, { view, used: this.request });
	}

	/** End of a request: keep only what it used. */
	prune(): void {
		for (const [id, e] of this.views) if (e.used !== this.request) this.views.delete(id);
		this.request++;
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
	const text = extra === 0 && !hasExtraText(m) ? "" : extraText(m);
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
