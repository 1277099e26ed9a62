/**
 * What a branch's fold records and provider usage add up to: the index of folded blocks and the
 * accounting events. One implementation, shared by the extension's BranchState and the CLI's
 * BranchReplay, so the two can never count differently.
 */
import { type AccountingEvent, type AccountingReport, accountSession } from "./accounting.ts";
import { addRecord, emptyIndex, type FoldRecord, layerMasks, type MaskIndex } from "./layers.ts";
import type { Usage } from "./tokens.ts";
import { estimateTokens, MAX_REPORTED_TOKENS } from "./tokens.ts";

export class FoldTelemetry {
	readonly index: MaskIndex = emptyIndex();
	/** Some response on the branch reported a cache read (the warm fold threshold applies). */
	everCacheRead = false;
	private readonly events: AccountingEvent[] = [];
	private report: AccountingReport | null = null;
	private readonly seqs = new Set<number>();

	/** Apply a fold record. Layers are deduplicated by seq; unfolds count only for codes not yet unfolded. */
	commit(record: FoldRecord): boolean {
		if (record.type === "layer") {
			if (this.seqs.has(record.seq)) return false;
			this.seqs.add(record.seq);
			const saved = layerMasks(record).reduce((n, b) => n + Math.max(0, b.tokens - estimateTokens(b.digest.length)), 0);
			this.push({ type: "fold", seq: record.seq, saved });
		} else {
			const fresh = record.codes.filter((c) => !this.index.unfolded.has(c));
			if (fresh.length === 0) return false;
			for (const code of fresh) {
				const b = this.index.byCode.get(code);
				if (b) this.push({ type: "unfold", code, restored: Math.max(0, b.tokens - estimateTokens(b.digest.length)) });
			}
		}
		addRecord(this.index, record);
		return true;
	}

	/** A response's (or a cache warm-up's) usage; unusable numbers count as zero, an empty prompt not at all. */
	countUsage(usage: Partial<Usage> | undefined, timestamp: number, warm: boolean): void {
		if (usage === undefined || usage === null || typeof usage !== "object") return;
		const u = {
			input: pos(usage.input),
			output: pos(usage.output),
			cacheRead: pos(usage.cacheRead),
			cacheWrite: pos(usage.cacheWrite),
		};
		if (u.input + u.cacheRead + u.cacheWrite <= 0) return;
		this.push({ type: "response", usage: u, timestamp, ...(warm && { warm: true }) });
		if (u.cacheRead > 0) this.everCacheRead = true;
	}

	accounting(): AccountingReport {
		this.report ??= accountSession(this.events);
		return this.report;
	}

	private push(event: AccountingEvent): void {
		this.events.push(event);
		this.report = null;
	}
}

/** A usable count: finite, positive, and not absurd (MAX_REPORTED_TOKENS); anything else counts as 0. */
function pos(n: unknown): number {
	return typeof n === "number" && Number.isFinite(n) && n > 0 && n <= MAX_REPORTED_TOKENS ? n : 0;
}
