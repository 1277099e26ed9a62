/**
 * The numbers: whatever the window (0, 1, absent, NaN, 10M, …), the settings and the usage a provider
 * reports (none, zero, negative, NaN, infinite, absurd), token estimates never go negative and the
 * budget math, the accounting, the footer and the status never show NaN or Infinity. Same input,
 * byte-identical plan.
 */
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { type AccountingEvent, accountSession, costOf, foldValue, PRICE_PRESETS } from "../../src/core/accounting.ts";
import type { ViewMessage } from "../../src/core/blocks.ts";
import { emptyIndex } from "../../src/core/layers.ts";
import { planFold } from "../../src/core/plan.ts";
import { foldGeometry } from "../../src/core/policy/geometry.ts";
import { resolveSettings } from "../../src/core/resolved-settings.ts";
import { renderFooter, renderStatus } from "../../src/core/status.ts";
import type { Usage } from "../../src/core/tokens.ts";
import { estimateTokens, formatTokens, groupDigits } from "../../src/core/tokens.ts";
import { check, params, report, TIMEOUT } from "./config.ts";
import { settingsEnvArb, windowArb } from "./gen.ts";
import { checkFinite, sha } from "./oracles.ts";

const weird = fc.oneof(
	{ weight: 4, arbitrary: fc.nat({ max: 200_000 }) },
	{
		weight: 1,
		arbitrary: fc.constantFrom(
			0,
			-0,
			-1,
			-1e9,
			Number.NaN,
			Number.POSITIVE_INFINITY,
			Number.NEGATIVE_INFINITY,
			1e15,
			1.5e308,
			Number.MAX_VALUE,
			Number.MAX_SAFE_INTEGER,
			Number.MIN_VALUE,
		),
	},
	{ weight: 1, arbitrary: fc.double() },
);

const usageArb: fc.Arbitrary<Usage> = fc.record({
	input: weird,
	output: weird,
	cacheRead: weird,
	cacheWrite: weird,
});

const messageArb: fc.Arbitrary<ViewMessage> = fc.oneof(
	fc.record({
		role: fc.constant("user"),
		entryId: fc.option(fc.string({ maxLength: 4 }), { nil: null }),
		timestamp: weird,
		blocks: fc.array(fc.record({ kind: fc.constant("text" as const), text: fc.string({ maxLength: 300 }) }), {
			maxLength: 2,
		}),
	}),
	fc.record(
		{
			role: fc.constant("assistant"),
			entryId: fc.option(fc.string({ maxLength: 4 }), { nil: null }),
			timestamp: weird,
			blocks: fc.array(
				fc.record({
					kind: fc.constantFrom("thinking" as const, "toolCall" as const, "text" as const),
					text: fc.string({ maxLength: 1500 }),
				}),
				{ maxLength: 3 },
			),
			usage: usageArb,
			stopReason: fc.constantFrom("toolUse", "stop", "error", "aborted"),
		},
		{ requiredKeys: ["role", "entryId", "timestamp", "blocks"] },
	),
	fc.record({
		role: fc.constant("toolResult"),
		entryId: fc.option(fc.string({ maxLength: 4 }), { nil: null }),
		timestamp: weird,
		blocks: fc.array(
			fc.oneof(
				fc
					.tuple(fc.nat({ max: 6000 }), fc.string({ maxLength: 20 }))
					.map(([n, s]) => ({ kind: "text" as const, text: `${s}\n${"output line\n".repeat(n / 12)}` })),
				fc.constant({ kind: "image" as const, text: "" }),
			),
			{ maxLength: 2 },
		),
	}),
	fc.record({
		role: fc.constant("compactionSummary"),
		entryId: fc.constant(null),
		timestamp: weird,
		blocks: fc.constant([]),
	}),
) as unknown as fc.Arbitrary<ViewMessage>;

/** No rendered text may show a broken number. */
function noBrokenNumbers(label: string, text: string): void {
	if (/NaN|Infinity|undefined|-\d/.test(text.replace(/\b[0-9a-f]{6}\b/g, ""))) throw new Error(`${label}: ${text}`);
}

describe("fuzz: budget math", () => {
	test(
		"plans stay finite and non-negative for every window, setting and usage report; same input, same bytes",
		() => {
			let cases = 0;
			let folds = 0;
			check(
				fc.property(
					fc.array(messageArb, { maxLength: 14 }),
					windowArb,
					settingsEnvArb,
					fc.boolean(),
					(messages, window, env, everCacheRead) => {
						cases++;
						const settings = resolveSettings({ env, file: undefined }).settings;
						const input = { messages, index: emptyIndex(), settings, window, everCacheRead, hash: sha };
						const plan = planFold(input);
						if (JSON.stringify(planFold(input)) !== JSON.stringify(plan))
							throw new Error("planFold is not deterministic");
						if (plan.layer) folds++;
						checkFinite("plan", {
							usage: plan.usage.tokens,
							after: plan.usageAfter,
							mass: plan.mass,
							maskedTokens: plan.maskedTokens,
							maskedBlocks: plan.maskedBlocks,
							geometry: plan.geometry,
							layer: plan.layer && {
								before: plan.layer.usageBefore,
								after: plan.layer.usageAfter,
								blocks: plan.layer.blocks.map((b) => [b.tokens, b.chars, b.bytes, b.lines]),
							},
						});
						const g = foldGeometry(settings, window);
						if (g !== null) checkFinite("geometry", g);
						const footer = renderFooter({ plan, events: plan.layer ? 1 : 0, cacheAvg: null });
						noBrokenNumbers("footer", footer);
					},
				),
				params(),
			);
			report("budget", { cases, folds });
			expect(folds).toBeGreaterThan(0);
		},
		TIMEOUT,
	);

	test(
		"accounting, fold value and the status text stay finite whatever the provider reports",
		() => {
			let cases = 0;
			const eventArb: fc.Arbitrary<AccountingEvent> = fc.oneof(
				fc.record({ type: fc.constant("response" as const), usage: usageArb, timestamp: weird, warm: fc.boolean() }),
				fc.record({ type: fc.constant("fold" as const), seq: fc.nat(), saved: weird }),
				fc.record({ type: fc.constant("unfold" as const), code: fc.constant("abc123"), restored: weird }),
			);
			check(
				fc.property(
					fc.array(eventArb, { maxLength: 30 }),
					fc.array(messageArb, { maxLength: 6 }),
					windowArb,
					(events, messages, window) => {
						cases++;
						const a = accountSession(events);
						checkFinite("accounting", a);
						if (a.sessionRatio !== null && (a.sessionRatio < 0 || a.sessionRatio > 1))
							throw new Error("ratio out of range");
						for (const r of a.perTurn) if (r < 0 || r > 1) throw new Error("per-turn ratio out of range");
						for (const prices of Object.values(PRICE_PRESETS)) {
							checkFinite("foldValue", foldValue(a, prices), false);
							for (const e of events) if (e.type === "response") checkFinite("costOf", costOf(e.usage, prices));
						}
						const plan = planFold({
							messages,
							index: emptyIndex(),
							settings: resolveSettings({ env: {}, file: undefined }).settings,
							window,
							everCacheRead: true,
							hash: sha,
						});
						const status = renderStatus({ plan, events: 1, accounting: a, prices: PRICE_PRESETS.anthropic, flags: {} });
						noBrokenNumbers("status", status.replace(/[+-]\$/g, "$"));
					},
				),
				params(),
			);
			report("accounting", { cases });
		},
		TIMEOUT,
	);

	test(
		"token estimates and number formatting never go negative or non-finite",
		() => {
			check(
				fc.property(weird, (n) => {
					const t = estimateTokens(n);
					if (!Number.isFinite(t) || t < 0) throw new Error(`estimateTokens(${n}) = ${t}`);
					noBrokenNumbers("formatTokens", formatTokens(n));
					noBrokenNumbers("groupDigits", groupDigits(n));
				}),
				params(),
			);
			report("estimates", { cases: params().numRuns ?? 0 });
		},
		TIMEOUT,
	);
});
