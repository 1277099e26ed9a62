/**
 * SeedWriter: the seed record of each fold event, picked while the request's messages still hold
 * their originals and extracted and appended to the seed index once the request has gone out.
 */
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import type { ViewMessage } from "../../core/blocks.ts";
import type { FrozenLayer } from "../../core/layers.ts";
import { foldSeedRecord, pickFoldMessages } from "../../core/seed/pick.ts";
import { sha256 } from "../../store/hash.ts";
import { sessionDataDir } from "../../store/paths.ts";
import { appendSeedRecord } from "../../store/seed-index.ts";
import type { Runtime } from "./runtime.ts";

export class SeedWriter {
	private pending: Array<() => void> = [];
	private timer: ReturnType<typeof setTimeout> | undefined;

	constructor(private readonly rt: Runtime) {}

	dir(ctx: ExtensionContext): string {
		return sessionDataDir(ctx.sessionManager.getSessionId(), this.rt.env);
	}

	/**
	 * Record a fold event. What the record covers is picked now, while the request's messages still
	 * hold their originals (the hook calls this before it applies the fold: tool-call arguments are
	 * about to be replaced by folded ones); extraction runs after the request has gone out (a
	 * zero-delay timer), so it never adds to the request's latency. Pending work is flushed on shutdown.
	 */
	onFold(
		ctx: ExtensionContext,
		layer: FrozenLayer,
		previous: FrozenLayer | undefined,
		view: readonly ViewMessage[],
	): void {
		const dir = this.dir(ctx);
		let picked: ReturnType<typeof pickFoldMessages>;
		try {
			picked = pickFoldMessages(layer, previous, view);
		} catch (error) {
			this.failed(ctx, error);
			return;
		}
		const at = Date.now();
		this.pending.push(() => {
			try {
				const record = foldSeedRecord(picked, layer.seq, at, sha256);
				appendSeedRecord(dir, record);
			} catch (error) {
				this.failed(ctx, error);
			}
		});
		if (this.timer === undefined) {
			this.timer = setTimeout(() => this.flush(), 0);
			this.timer.unref?.();
		}
	}

	private failed(ctx: ExtensionContext, error: unknown): void {
		this.rt.notices.once(
			ctx,
			"seed-write",
			`the seed index was not updated (${(error as Error).message}); folding and the session go on.`,
			"warning",
		);
	}

	flush(): void {
		this.timer = undefined;
		const work = this.pending;
		this.pending = [];
		for (const task of work) task();
	}
}
