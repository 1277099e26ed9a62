/**
 * Cache advisories: the inactivity warning (on resume, and when the idle interval runs out while Pi
 * sits idle), the observed-cold notice, the optional send confirmation, and coordination with Pi's
 * own cache warming (1.6.0). The decisions are core/advisories.ts, the idle timer is idle-advisor.ts; this file wires
 * Pi's events to them and does the UI.
 */
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import { coldVerdict } from "../../core/advisories.ts";
import { isSuccessfulResponse } from "../../core/blocks.ts";
import type { PiEntry, PiMessage } from "../../core/session/view.ts";
import { IdleAdvisor } from "./idle-advisor.ts";
import type { Runtime } from "./runtime.ts";
import { branchOf } from "./state.ts";

export const KEEP_DRAFT = "Keep draft";
export const SEND_ANYWAY = "Send anyway";

export function registerAdvisories(rt: Runtime): void {
	const pi = rt.pi;
	const idle = new IdleAdvisor(rt);
	const cold: ColdState = { observed: 0, streak: false };

	pi.on("session_start", (event, ctx) => {
		idle.reset();
		cold.observed = 0;
		cold.streak = false;
		const reason = (event as { reason?: string }).reason;
		if (reason === "resume" || reason === "startup" || reason === "fork" || reason === undefined) idle.checkOnOpen(ctx);
		idle.schedule(ctx);
	});

	pi.on("session_shutdown", () => {
		idle.stop();
		rt.retainedImages = [];
	});

	pi.on("session_tree", () => {
		rt.retainedImages = [];
	});

	pi.on("model_select", (_event, ctx) => idle.schedule(ctx));

	pi.on("message_end", (event) => countResponse(cold, event));

	pi.on("agent_settled", (_event, ctx) => {
		idle.schedule(ctx);
		noticeCold(rt, ctx, cold);
	});

	pi.on("input", (event, ctx) => confirmInput(rt, idle, event as InputEvent, ctx));

	pi.on("cache_warming_decision" as never, (_event: unknown, ctx: ExtensionContext) => decideWarming(rt, ctx));
}

/** What the cold notice remembers within a session. */
interface ColdState {
	/** Responses seen that reported a prompt size. */
	observed: number;
	/** A cold notice was already given in this streak (reset by the next warm response). */
	streak: boolean;
}

function countResponse(cold: ColdState, event: unknown): void {
	const m = (event as { message?: PiMessage }).message;
	if (m?.role !== "assistant" || !m.usage) return;
	const prompt = (m.usage.input ?? 0) + (m.usage.cacheRead ?? 0) + (m.usage.cacheWrite ?? 0);
	if (prompt > 0) cold.observed++;
}

/** The observed-cold notice: the run's last response read nothing from the cache. Once per streak. */
function noticeCold(rt: Runtime, ctx: ExtensionContext, cold: ColdState): void {
	try {
		const m = lastAssistantMessage(branchOf(ctx.sessionManager));
		if (m === undefined || !isSuccessfulResponse(m) || !m.usage) return;
		const read = m.usage.cacheRead ?? 0;
		if (read > 0) {
			cold.streak = false;
			return;
		}
		const verdict = coldVerdict({
			observed: cold.observed,
			firstAfterFold: rt.lastOutcome?.plan.layer != null,
			cacheRead: read,
			fresh: (m.usage.input ?? 0) + (m.usage.cacheWrite ?? 0),
			inStreak: cold.streak,
		});
		if (verdict.warn && verdict.message) {
			cold.streak = true;
			rt.notices.say(ctx, verdict.message, "warning");
		}
	} catch {
		// Advisories are best effort.
	}
}

function lastAssistantMessage(branch: readonly PiEntry[]): PiMessage | undefined {
	for (let i = branch.length - 1; i >= 0; i--) {
		const m = branch[i]?.message;
		if (branch[i]?.type === "message" && m?.role === "assistant") return m;
	}
	return undefined;
}

interface InputEvent {
	text: string;
	images?: unknown[];
	source?: string;
	streamingBehavior?: string;
}

/** A prompt with the images retained from an earlier kept draft put before its own. */
interface Draft {
	text: string;
	images: unknown[];
}

/**
 * An interactive prompt: past the idle interval it may need confirming, and images retained from a
 * kept draft ride along with it.
 */
async function confirmInput(rt: Runtime, idle: IdleAdvisor, e: InputEvent, ctx: ExtensionContext) {
	try {
		const interactive =
			e.source === "interactive" && (ctx as { mode?: string }).mode === "tui" && e.streamingBehavior === undefined;
		if (!interactive) return { action: "continue" as const };
		const retained = rt.retainedImages;
		const draft: Draft = { text: e.text, images: [...retained, ...(e.images ?? [])] };
		if (await declinedSend(rt, idle, ctx, draft)) return { action: "handled" as const };
		if (retained.length > 0) {
			rt.retainedImages = [];
			return { action: "transform" as const, text: draft.text, images: draft.images as never };
		}
	} catch {
		// A failing advisor lets the input through.
	}
	return { action: "continue" as const };
}

/**
 * The send confirmation (confirmColdPrompt): when the cache may have expired, ask before sending.
 * True when nothing is sent: Keep draft, or the model changed while the question was open.
 */
async function declinedSend(rt: Runtime, idle: IdleAdvisor, ctx: ExtensionContext, draft: Draft): Promise<boolean> {
	if (!rt.settings.confirmColdPrompt || idle.minutes(ctx) === null) return false;
	const verdict = idle.verdict(ctx, null);
	if (verdict.type !== "warn") return false;
	const modelBefore = modelOf(ctx);
	const choice = await ctx.ui.select(`${verdict.message}. Send this prompt now?`, [KEEP_DRAFT, SEND_ANYWAY]);
	const modelChanged = modelOf(ctx) !== modelBefore;
	if (choice === SEND_ANYWAY && !modelChanged) return false;
	keepDraft(rt, ctx, draft, modelChanged);
	return true;
}

function modelOf(ctx: ExtensionContext): string {
	return `${ctx.model?.provider}/${ctx.model?.id}`;
}

/** The draft goes back to the editor; structured images wait for the next prompt. */
function keepDraft(rt: Runtime, ctx: ExtensionContext, draft: Draft, modelChanged: boolean): void {
	const images = draft.images;
	rt.retainedImages = images;
	ctx.ui.setEditorText(draft.text);
	// The notice also makes Pi 1.6.0 redraw, which setEditorText alone does not request. One
	// notice, not several: Pi's TUI replaces an info line with the next one said right after it.
	const kept =
		images.length > 0
			? ` ${images.length} image(s) retained for your next prompt. /context-fold discard-images drops them.`
			: "";
	rt.notices.say(
		ctx,
		modelChanged
			? `the model changed while confirming: your draft is back in the editor and nothing was sent; submit it again.${kept}`
			: `nothing was sent: your draft is back in the editor.${kept}`,
		"info",
	);
}

/** Never pay to keep warm a prefix the next request is about to rewrite. */
function decideWarming(rt: Runtime, ctx: ExtensionContext): { action: "stop" } | undefined {
	try {
		if (rt.previewPlan(ctx)?.state === "fold") return { action: "stop" };
	} catch {
		// Let Pi decide.
	}
	return undefined;
}
