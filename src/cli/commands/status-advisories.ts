/**
 * The advisories `status` gives: the ones the extension would give now, judged from the session file
 * with the same core verdicts (idle cache, observed cold response).
 */
import type { AccountingReport } from "../../core/accounting.ts";
import { coldVerdict, idleVerdict } from "../../core/advisories.ts";
import type { FoldPlan } from "../../core/plan.ts";
import { idleMinutesFor } from "../../core/resolved-settings.ts";
import { FOLD_ENTRY_TYPE } from "../../core/session/branch-state.ts";
import type { CommandContext } from "../context.ts";
import type { LoadedSession } from "../session-load.ts";

export interface Advisory {
	kind: "idle" | "cold";
	message: string;
}

export function advise(
	ctx: CommandContext,
	loaded: LoadedSession,
	plan: FoldPlan,
	a: AccountingReport,
	provider: string | null,
): Advisory[] {
	const out: Advisory[] = [];
	const { replay } = loaded;
	const idle = idleVerdict({
		now: ctx.io.now(),
		idleMinutes: idleMinutesFor(loaded.settings, provider ?? undefined),
		lastActivity: replay.lastResponseAt > 0 ? replay.lastResponseAt : null,
		carried: plan.usage.tokens,
		lastNoticeAnchor: null,
	});
	if (idle.type === "warn") out.push({ kind: "idle", message: idle.message });
	const branch = loaded.file.branch;
	const assistants = branch.flatMap((e, i) => (e.type === "message" && e.message?.role === "assistant" ? [i] : []));
	const lastAt = assistants.at(-1);
	const lastUsage = lastAt === undefined ? undefined : branch[lastAt]?.message?.usage;
	if (lastAt !== undefined && lastUsage !== undefined) {
		const prevAt = assistants.at(-2) ?? -1;
		const firstAfterFold = branch
			.slice(prevAt + 1, lastAt)
			.some((e) => e.type === "custom" && e.customType === FOLD_ENTRY_TYPE);
		const cold = coldVerdict({
			observed: a.responses,
			firstAfterFold,
			cacheRead: Math.max(0, lastUsage.cacheRead ?? 0),
			fresh: Math.max(0, lastUsage.input ?? 0) + Math.max(0, lastUsage.cacheWrite ?? 0),
			inStreak: false,
		});
		if (cold.warn && cold.message !== undefined) out.push({ kind: "cold", message: cold.message });
	}
	return out;
}
