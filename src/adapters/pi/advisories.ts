/**
 * Cache advisories: the inactivity warning (on resume, and when the idle interval runs out while Pi
 * sits idle), the observed-cold notice, the optional send confirmation, and coordination with Pi's
 * own cache warming (1.6.0). The decisions are core/advisories.ts; this file does times and UI.
 */
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import { coldVerdict, idleVerdict } from "../../core/advisories.ts";
import { idleMinutesFor } from "../../core/settings.ts";
import type { Runtime } from "./runtime.ts";
import type { PiEntry } from "./view.ts";

export const KEEP_DRAFT = "Keep draft";
export const SEND_ANYWAY = "Send anyway";
const RESUME_NOTICE_DELAY_MS = 400;

export function registerAdvisories(rt: Runtime): void {
	const pi = rt.pi;
	let timer: ReturnType<typeof setTimeout> | undefined;
	let lastNoticeAnchor: number | null = null;
	let observed = 0;
	let coldStreak = false;

	const idleMinutes = (ctx: ExtensionContext) => idleMinutesFor(rt.resolved, ctx.model?.provider);

	/** Newest successful response, or Pi cache warm-up, for the selected provider and model. */
	const lastActivity = (ctx: ExtensionContext): number | null => {
		const model = ctx.model;
		if (!model) return null;
		const branch = ctx.sessionManager.getBranch() as unknown as PiEntry[];
		let newest: number | null = null;
		for (let i = branch.length - 1; i >= 0; i--) {
			const e = branch[i] as PiEntry;
			if (e.type === "message" && e.message?.role === "assistant") {
				const m = e.message as {
					provider?: string;
					model?: string;
					stopReason?: string;
					timestamp?: number;
					usage?: { input?: number; cacheRead?: number; cacheWrite?: number };
				};
				if (m.provider !== model.provider || m.model !== model.id) continue;
				if (m.stopReason === "error" || m.stopReason === "aborted") continue;
				const t = typeof m.timestamp === "number" ? rt.clock.at(m.timestamp) : null;
				if (t !== null) newest = Math.max(newest ?? t, t);
				break;
			}
			if (e.type === "usage" && e.provider === model.provider && e.model === model.id) {
				// Pi kept the cache warm: the clock restarts at the refresh, so no false expiry.
				const stamped = Date.parse(String(e.timestamp));
				const t = Number.isFinite(stamped) ? rt.clock.at(stamped) : Number.NaN;
				if (Number.isFinite(t)) newest = Math.max(newest ?? t, t);
			}
		}
		return newest;
	};

	const checkIdle = (ctx: ExtensionContext) => {
		if (!ctx.hasUI) return;
		try {
			const preview = rt.previewPlan(ctx);
			const verdict = idleVerdict({
				now: rt.now(),
				idleMinutes: idleMinutes(ctx),
				lastActivity: lastActivity(ctx),
				carried: preview ? preview.usage.tokens : null,
				lastNoticeAnchor,
			});
			if (verdict.type === "warn") {
				lastNoticeAnchor = verdict.anchor;
				rt.notices.say(ctx, verdict.message, "warning");
			}
		} catch {
			// Advisories are best effort.
		}
	};

	const schedule = (ctx: ExtensionContext) => {
		if (timer !== undefined) clearTimeout(timer);
		timer = undefined;
		if (!ctx.hasUI) return;
		const minutes = idleMinutes(ctx);
		if (minutes === null) return;
		const anchor = lastActivity(ctx);
		if (anchor === null) return;
		const due = Math.max(0, anchor + minutes * 60_000 - rt.now()) + 50;
		timer = setTimeout(() => {
			timer = undefined;
			try {
				if (!ctx.isIdle()) return;
				checkIdle(ctx);
				// Pi's cache warming (1.6.0) may have moved the clock while we waited: wait again from the
				// newest refresh, so the warning still comes once the refreshes stop. An unchanged anchor
				// was just judged (warned or quiet), so it does not schedule again.
				const next = lastActivity(ctx);
				if (next !== null && next > anchor) schedule(ctx);
			} catch {
				// The context may be stale after a session switch; nothing to warn about then.
			}
		}, due);
		timer.unref?.();
	};

	pi.on("session_start", (event, ctx) => {
		lastNoticeAnchor = null;
		observed = 0;
		coldStreak = false;
		const reason = (event as { reason?: string }).reason;
		if (reason === "resume" || reason === "startup" || reason === "fork" || reason === undefined) {
			// Deferred so that, in the TUI, the notice lands below the restored history instead of
			// above it (where it would scroll out of sight at once).
			const t = setTimeout(() => {
				try {
					checkIdle(ctx);
				} catch {
					// A stale context after a quick session switch: nothing to say.
				}
			}, RESUME_NOTICE_DELAY_MS);
			t.unref?.();
		}
		schedule(ctx);
	});

	pi.on("session_shutdown", () => {
		if (timer !== undefined) clearTimeout(timer);
		timer = undefined;
		rt.retainedImages = [];
	});

	pi.on("session_tree", () => {
		rt.retainedImages = [];
	});

	pi.on("model_select", (_event, ctx) => schedule(ctx));

	pi.on("message_end", (event) => {
		const m = (
			event as { message?: { role?: string; usage?: { input?: number; cacheRead?: number; cacheWrite?: number } } }
		).message;
		if (m?.role !== "assistant" || !m.usage) return;
		const prompt = (m.usage.input ?? 0) + (m.usage.cacheRead ?? 0) + (m.usage.cacheWrite ?? 0);
		if (prompt > 0) observed++;
	});

	const settled = (ctx: ExtensionContext) => {
		schedule(ctx);
		try {
			const branch = ctx.sessionManager.getBranch() as unknown as PiEntry[];
			for (let i = branch.length - 1; i >= 0; i--) {
				const m = branch[i]?.message as
					| { role?: string; stopReason?: string; usage?: { input?: number; cacheRead?: number; cacheWrite?: number } }
					| undefined;
				if (branch[i]?.type !== "message" || m?.role !== "assistant") continue;
				if (m.stopReason === "error" || m.stopReason === "aborted" || !m.usage) return;
				const read = m.usage.cacheRead ?? 0;
				if (read > 0) {
					coldStreak = false;
					return;
				}
				const verdict = coldVerdict({
					observed,
					firstAfterFold: rt.lastOutcome?.plan.layer != null,
					cacheRead: read,
					fresh: (m.usage.input ?? 0) + (m.usage.cacheWrite ?? 0),
					inStreak: coldStreak,
				});
				if (verdict.warn && verdict.message) {
					coldStreak = true;
					rt.notices.say(ctx, verdict.message, "warning");
				}
				return;
			}
		} catch {
			// Advisories are best effort.
		}
	};
	pi.on("agent_settled", (_event, ctx) => settled(ctx));

	pi.on("input", async (event, ctx) => {
		try {
			const e = event as { text: string; images?: unknown[]; source?: string; streamingBehavior?: string };
			const interactive =
				e.source === "interactive" && (ctx as { mode?: string }).mode === "tui" && e.streamingBehavior === undefined;
			if (!interactive) return { action: "continue" as const };
			const retained = rt.retainedImages;
			if (rt.settings.confirmColdPrompt && idleMinutes(ctx) !== null) {
				const preview = rt.previewPlan(ctx);
				const verdict = idleVerdict({
					now: rt.now(),
					idleMinutes: idleMinutes(ctx),
					lastActivity: lastActivity(ctx),
					carried: preview ? preview.usage.tokens : null,
					lastNoticeAnchor: null,
				});
				if (verdict.type === "warn") {
					const modelBefore = `${ctx.model?.provider}/${ctx.model?.id}`;
					const choice = await ctx.ui.select(`${verdict.message}. Send this prompt now?`, [KEEP_DRAFT, SEND_ANYWAY]);
					const modelAfter = `${ctx.model?.provider}/${ctx.model?.id}`;
					if (choice !== SEND_ANYWAY || modelAfter !== modelBefore) {
						// The draft goes back to the editor; structured images wait for the next prompt.
						const images = [...retained, ...(e.images ?? [])];
						rt.retainedImages = images;
						ctx.ui.setEditorText(e.text);
						// The notice also makes Pi 1.6.0 redraw, which setEditorText alone does not request. One
						// notice, not several: Pi's TUI replaces an info line with the next one said right after it.
						const kept =
							images.length > 0
								? ` ${images.length} image(s) retained for your next prompt. /context-fold discard-images drops them.`
								: "";
						rt.notices.say(
							ctx,
							modelAfter !== modelBefore
								? `the model changed while confirming: your draft is back in the editor and nothing was sent; submit it again.${kept}`
								: `nothing was sent: your draft is back in the editor.${kept}`,
							"info",
						);
						return { action: "handled" as const };
					}
				}
			}
			if (retained.length > 0) {
				rt.retainedImages = [];
				return { action: "transform" as const, text: e.text, images: [...retained, ...(e.images ?? [])] as never };
			}
		} catch {
			// A failing advisor lets the input through.
		}
		return { action: "continue" as const };
	});

	pi.on("cache_warming_decision" as never, (_event: unknown, ctx: ExtensionContext) => {
		// Never pay to keep warm a prefix the next request is about to rewrite.
		try {
			const preview = rt.previewPlan(ctx);
			if (preview?.state === "fold") return { action: "stop" };
		} catch {
			// Let Pi decide.
		}
		return undefined;
	});
}
