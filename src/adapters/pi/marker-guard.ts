/**
 * The marker guard: a model that sees a digest can copy it into a new call (a `write` whose content
 * is a digest, an `edit` whose oldText is one), which would put the stand-in, not the original, into
 * a file. Pi's `tool_call` event blocks any call whose arguments carry a fold marker of this session,
 * with a reason that sends the model to recall_folded first. It fires for every call, on 1.6.0 also
 * for calls another tool makes (`parentToolCallId`). recall_folded and unfold take markers by
 * design and are never blocked.
 *
 * A throwing `tool_call` handler blocks the call (docs/pi-api-surface.md §13), so this one never
 * throws: on any failure of its own it lets the call through.
 */
import type { ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent";
import { foldMarker } from "../../core/digest.ts";
import { markerCodesIn } from "../../core/markers.ts";
import type { Runtime } from "./runtime.ts";
import { RECALL_TOOL, UNFOLD_TOOL } from "./tools.ts";

/** The reason Pi returns to the model as the blocked call's error result. */
export function renderGuardReason(codes: readonly string[]): string {
	const markers = codes.map(foldMarker).join(", ");
	const first = codes[0] ?? "";
	return `Blocked by context-fold: the arguments contain ${codes.length === 1 ? "the fold marker" : "the fold markers"} ${markers}. A marker starts a digest, a short stand-in for a folded block, not its content, so this call would use the digest instead of the original. Call recall_folded code=${first} to read the original first${codes.length > 1 ? " (and likewise for the other codes)" : ""}, or unfold code=${first} to bring it back into context, then repeat this call with the real text.`;
}

export function registerMarkerGuard(pi: ExtensionAPI, rt: Runtime): void {
	pi.on("tool_call", (event, ctx) => {
		try {
			return checkCall(rt, ctx, event.toolName, event.input);
		} catch {
			return undefined;
		}
	});
}

function checkCall(rt: Runtime, ctx: ExtensionContext, toolName: string, input: unknown) {
	if (toolName === RECALL_TOOL || toolName === UNFOLD_TOOL) return undefined;
	const codes = markerCodesIn(input);
	if (codes.length === 0) return undefined;
	rt.sync(ctx);
	const ours = codes.filter((c) => rt.state.index.byCode.has(c));
	if (ours.length === 0) return undefined;
	return { block: true, reason: renderGuardReason(ours) };
}
