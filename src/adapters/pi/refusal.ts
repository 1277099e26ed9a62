/**
 * A provider's refusal of folded tool-call inputs. A fake cannot prove that a real provider accepts
 * an edited call, so when a request that carried folded inputs comes back as a failed response whose
 * error is an HTTP 400 or 422 (the provider rejecting the request itself, not an outage or a limit),
 * context-fold stops folding inputs for that model from then on: a note on the branch
 * (INPUTS_REFUSED_TYPE) keeps the decision across a restart, the user hears it once, and the next
 * request sends every call in full (one prompt-cache rewrite from the first folded call on).
 * Results and thinking still fold. This is fail-open applied to a refusal.
 */
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import { redactSecrets } from "../../core/seed/redact.ts";
import { INPUTS_REFUSED_TYPE, isRequestRefusal, modelKey } from "../../core/session/branch-state.ts";
import { clipTo } from "../../core/values.ts";
import { sha256 } from "../../store/hash.ts";
import type { Runtime } from "./runtime.ts";

/** The model a request goes to, as an inputs-refused note names it (the assistant's provider/model). */
export function requestModel(ctx: ExtensionContext): string {
	return modelKey(ctx.model?.provider, ctx.model?.id);
}

/** Whether this request may carry folded inputs: not to a model whose provider refused them. */
export function inputsAllowed(rt: Runtime, ctx: ExtensionContext): boolean {
	return !rt.state.branch.inputsRefused.has(requestModel(ctx));
}

/**
 * After a response: if it failed with a refusal and the request that produced it carried folded
 * inputs, record the model and say so once. Never throws.
 */
export function checkInputRefusal(rt: Runtime, ctx: ExtensionContext): void {
	try {
		const sent = rt.inputRequest;
		if (sent === undefined || !rt.sync(ctx)) return;
		const branch = rt.state.branch;
		const m = branch.lastAssistant;
		const id = branch.lastAssistantId;
		if (m === null || id === null || id === rt.refusalChecked) return;
		rt.refusalChecked = id;
		// Only the response to the request that carried inputs counts (a later one went out without).
		rt.inputRequest = undefined;
		if (m.stopReason !== "error" || !isRequestRefusal(m.errorMessage)) return;
		const model = modelKey(m.provider, m.model);
		if (model !== sent || branch.inputsRefused.has(model)) return;
		const error = clipTo(redactSecrets(String(m.errorMessage).replace(/\s+/g, " ").trim(), sha256), 300);
		rt.pi.appendEntry(INPUTS_REFUSED_TYPE, { v: 1, model, error });
		branch.inputsRefused.add(model);
		rt.notices.once(
			ctx,
			`inputs-refused:${model}`,
			`the provider refused a request that carried folded tool-call inputs (${error}). context-fold no longer folds tool-call inputs for ${model} in this session (tool results and thinking still fold; the next request sends every call in full, one cache rewrite). Send your message again.`,
			"warning",
		);
	} catch {
		// Advisory: without it, the next refusal is checked again.
	}
}
