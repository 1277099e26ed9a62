/**
 * CONTEXTFOLD_DEBUG: one line per request on stderr (under the TUI, in a log file instead, since raw
 * writes would corrupt the screen). The line is only built when debugging is on.
 */
import { appendFileSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import { layerMasks } from "../../core/layers.ts";
import type { FoldPlan } from "../../core/plan.ts";
import { RENT_MULTIPLE } from "../../core/policy/price.ts";
import { formatTokens } from "../../core/tokens.ts";
import { agentDir } from "../../store/paths.ts";
import type { HookOutcome } from "./context-hook.ts";
import type { Runtime } from "./runtime.ts";

export type DebugSink = ((ctx: ExtensionContext, line: () => string) => void) | null;

/** The sink for debug lines, or null when CONTEXTFOLD_DEBUG is off (then no line is ever built). */
export function debugSink(env: NodeJS.ProcessEnv): DebugSink {
	const raw = env.CONTEXTFOLD_DEBUG;
	if (raw === undefined || isOffValue(raw)) return null;
	return (ctx, line) => {
		if (ctx.hasUI && (ctx as { mode?: string }).mode === "tui") {
			try {
				const file = join(agentDir(env), "context-fold", "debug.log");
				mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
				appendFileSync(file, `${line()}\n`, { mode: 0o600 });
			} catch {
				// Debug output is best effort.
			}
			return;
		}
		process.stderr.write(`${line()}\n`);
	};
}

/** The debug line for one request: usage, the decision, masks, cache, per-stage times and footprint. */
export function requestLine(rt: Runtime, outcome: HookOutcome): string {
	const p = outcome.plan;
	const g = p.geometry;
	const state = rt.state;
	const fold = p.layer
		? ` fold#${p.layer.seq} blocks=${layerMasks(p.layer).length} after=${formatTokens(p.usageAfter)}`
		: "";
	return `[context-fold] req=${rt.requests} usage=${formatTokens(p.usage.tokens)}${g ? `/${formatTokens(g.window)}` : ""} (${p.usage.source}) state=${p.state}${fold} mass=${formatTokens(p.mass)}${pricedText(p)} masked=${p.maskedBlocks} ~${formatTokens(p.maskedTokens)} layers=${state.index.layers.length} cacheAvg=${fmtRatio(state.cacheAvg())} held=${state.index.byCode.size} views=${state.views.size} facts=${state.facts.size} hook=${outcome.ms.toFixed(2)}ms${stagesText(outcome)}${footprintText(rt)}`;
}

/** Milliseconds per stage of the hook (sync, view, plan, persist, apply). */
function stagesText(outcome: HookOutcome): string {
	const s = outcome.stages;
	return ` stages=${[s.sync, s.view, s.plan, s.persist, s.apply].map((ms) => ms.toFixed(2)).join("/")}`;
}

/**
 * The extension's own memory: characters it holds in fold state (digests and digest facts), its map
 * sizes, the entries and bytes the ledger index covers, and originals kept in memory (sessions without
 * a file only). None of it grows with the bytes of what was folded.
 */
function footprintText(rt: Runtime): string {
	const f = rt.state.footprint();
	const l = rt.ledger?.stats;
	return ` state: blocks=${f.foldedBlocks} digestChars=${f.digestChars} factChars=${f.factChars} facts=${f.facts} verified=${f.verified} keys=${f.keys} rawRefs=${f.rawRefs} events=${f.events} ledger: entries=${l?.entries ?? 0} indexedBytes=${l?.bytesIndexed ?? 0} memoryChars=${rt.memory?.heldChars ?? 0}`;
}

function fmtRatio(r: number | null): string {
	return r === null ? "n/a" : `${Math.round(r * 100)}%`;
}

function isOffValue(v: string): boolean {
	const s = v.trim().toLowerCase();
	return s === "" || s === "0" || s === "off" || s === "false";
}

/** The priced rule's numbers for this request (rent against the rent it must reach, and the rewrite, tok-eq), or the fixed ladder's step. */
function pricedText(p: FoldPlan): string {
	if (p.fixed !== null) return `/${formatTokens(p.fixed.step)}`;
	const d = p.pricing.decision;
	const e = d.fire ? d.event : d.best;
	const cold = p.pricing.cold === null ? "" : ` cold=${p.pricing.cold}`;
	if (e === null) return cold;
	const due = Math.max(0, RENT_MULTIPLE * e.rewrite);
	return ` rent=${formatTokens(e.rent)}/${formatTokens(due)} rewrite=${formatTokens(Math.max(0, e.rewrite))}${cold}`;
}
