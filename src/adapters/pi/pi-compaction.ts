/**
 * Pi's compaction settings as Pi merges them, for the fold rule (the compaction ahead it weighs,
 * core/policy/horizon.ts) and early compaction: `pi.getSettings()` where Pi has it (1.6.0); on 0.80.6
 * its files (store/sessions.ts readPiCompactionFiles). Unreadable files count as empty (Pi's
 * defaults apply). Read once per run at most: the cache
 * is dropped when a run settles, so an edit made between runs applies to the next one.
 */
import type { ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent";
import { type PiCompaction, piCompactionOf } from "../../core/simulate/compaction.ts";
import { readPiCompactionFiles } from "../../store/sessions.ts";

export class PiCompactionSettings {
	private cached: { key: string; value: PiCompaction } | null = null;

	constructor(
		private readonly pi: ExtensionAPI,
		private readonly env: NodeJS.ProcessEnv,
		private readonly cwdOf: (ctx: ExtensionContext) => string | undefined,
	) {}

	/** The settings for the context's model (a per-model override first, on 1.6.0). */
	of(ctx: ExtensionContext): PiCompaction {
		const model = ctx.model;
		const key = model ? `${model.provider}/${model.id}` : "";
		if (this.cached?.key === key) return this.cached.value;
		const value = piCompactionOf(this.read(ctx), key === "" ? undefined : key);
		this.cached = { key, value };
		return value;
	}

	/** Read again on the next request (a run settled: the user may edit the files before the next). */
	forget(): void {
		this.cached = null;
	}

	private read(ctx: ExtensionContext): unknown {
		const api = this.pi as unknown as { getSettings?(): unknown };
		if (typeof api.getSettings === "function") return api.getSettings();
		return readPiCompactionFiles(this.env, this.cwdOf(ctx));
	}
}
