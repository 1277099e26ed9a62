/**
 * The inactivity warning's timer and memory, for advisories.ts. The verdict is core/advisories.ts
 * (idleVerdict); this file finds the times and keeps the timer.
 */
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import { type IdleVerdict, idleVerdict } from "../../core/advisories.ts";
import { isSuccessfulResponse } from "../../core/blocks.ts";
import { idleMinutesFor } from "../../core/resolved-settings.ts";
import type { PiEntry } from "../../core/session/view.ts";
import type { Runtime } from "./runtime.ts";
import { branchOf } from "./state.ts";

const RESUME_NOTICE_DELAY_MS = 400;

/**
 * The inactivity warning. It owns the idle timer, which waits from the anchor: the newest successful
 * response or Pi cache warm-up (Pi 1.6.0 refreshes the cache while idle, and each refresh moves the
 * anchor). It remembers the anchor it last warned about: one notice per idle interval. Every clock
 * read goes through rt.now().
 */
export class IdleAdvisor {
	private timer: ReturnType<typeof setTimeout> | undefined;
	/** The anchor the last notice was about. */
	private lastNoticeAnchor: number | null = null;

	constructor(private readonly rt: Runtime) {}

	/** A new session: nothing has been said about it yet. */
	reset(): void {
		this.lastNoticeAnchor = null;
	}

	stop(): void {
		if (this.timer !== undefined) clearTimeout(this.timer);
		this.timer = undefined;
	}

	/** The idle interval for the selected provider; null = off. */
	minutes(ctx: ExtensionContext): number | null {
		return idleMinutesFor(this.rt.resolved, ctx.model?.provider);
	}

	/** The core's verdict now. The send confirmation passes null: it asks even after the warning. */
	verdict(ctx: ExtensionContext, lastNoticeAnchor: number | null): IdleVerdict {
		const preview = this.rt.previewPlan(ctx);
		return idleVerdict({
			now: this.rt.now(),
			idleMinutes: this.minutes(ctx),
			lastActivity: this.lastActivity(ctx),
			carried: preview ? preview.usage.tokens : null,
			lastNoticeAnchor,
		});
	}

	/** Warns if the idle interval has run out, once per anchor. */
	check(ctx: ExtensionContext): void {
		if (!ctx.hasUI) return;
		try {
			const verdict = this.verdict(ctx, this.lastNoticeAnchor);
			if (verdict.type === "warn") {
				this.lastNoticeAnchor = verdict.anchor;
				this.rt.notices.say(ctx, verdict.message, "warning");
			}
		} catch {
			// Advisories are best effort.
		}
	}

	/**
	 * The check on opening a session, deferred so that, in the TUI, the notice lands below the
	 * restored history instead of above it (where it would scroll out of sight at once).
	 */
	checkOnOpen(ctx: ExtensionContext): void {
		const t = setTimeout(() => {
			try {
				this.check(ctx);
			} catch {
				// A stale context after a quick session switch: nothing to say.
			}
		}, RESUME_NOTICE_DELAY_MS);
		t.unref?.();
	}

	/** (Re)arms the timer to fire just after the idle interval runs out from the current anchor. */
	schedule(ctx: ExtensionContext): void {
		this.stop();
		if (!ctx.hasUI) return;
		const minutes = this.minutes(ctx);
		if (minutes === null) return;
		const anchor = this.lastActivity(ctx);
		if (anchor === null) return;
		const due = Math.max(0, anchor + minutes * 60_000 - this.rt.now()) + 50;
		this.timer = setTimeout(() => this.fire(ctx, anchor), due);
		this.timer.unref?.();
	}

	private fire(ctx: ExtensionContext, anchor: number): void {
		this.timer = undefined;
		try {
			if (!ctx.isIdle()) return;
			this.check(ctx);
			// Pi's cache warming (1.6.0) may have moved the clock while we waited: wait again from the
			// newest refresh, so the warning still comes once the refreshes stop. An unchanged anchor
			// was just judged (warned or quiet), so it does not schedule again.
			const next = this.lastActivity(ctx);
			if (next !== null && next > anchor) this.schedule(ctx);
		} catch {
			// The context may be stale after a session switch; nothing to warn about then.
		}
	}

	/** Newest successful response, or Pi cache warm-up, for the selected provider and model. */
	private lastActivity(ctx: ExtensionContext): number | null {
		const model = ctx.model;
		if (!model) return null;
		const branch = branchOf(ctx.sessionManager);
		let newest: number | null = null;
		for (let i = branch.length - 1; i >= 0; i--) {
			const e = branch[i] as PiEntry;
			const m = e.type === "message" ? e.message : undefined;
			if (m?.role === "assistant") {
				if (m.provider !== model.provider || m.model !== model.id || !isSuccessfulResponse(m)) continue;
				if (typeof m.timestamp === "number") {
					const t = this.rt.clock.at(m.timestamp);
					newest = Math.max(newest ?? t, t);
				}
				break;
			}
			if (e.type === "usage" && e.provider === model.provider && e.model === model.id) {
				// Pi kept the cache warm: the clock restarts at the refresh, so no false expiry.
				const stamped = Date.parse(String(e.timestamp));
				const t = Number.isFinite(stamped) ? this.rt.clock.at(stamped) : Number.NaN;
				if (Number.isFinite(t)) newest = Math.max(newest ?? t, t);
			}
		}
		return newest;
	}
}
