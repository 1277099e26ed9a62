// The footer status line as a person sees it in Pi's TUI, under tmux, on both Pi versions.
import { describe, expect, test } from "bun:test";
import { DEFAULT_SETTINGS } from "../../src/core/settings.ts";
import { formatTokens } from "../../src/core/tokens.ts";
import { bigOutputCommand, ensureBundle, scenarioPool } from "./cf.ts";
import { bash, forEachPiVersion, replySequence, startTui, text, tmuxSkipAllowed } from "./harness/index.ts";

const TIMEOUT = 90_000;
const bundle = ensureBundle();
const scenario = scenarioPool();

/** The footer line context-fold owns, as shown on screen. */
function footer(screen: string): string {
	return screen.split("\n").find((l) => l.includes("⧉ context-fold")) ?? "";
}

forEachPiVersion((version) => {
	describe.skipIf(tmuxSkipAllowed())(`pi ${version}: TUI footer`, () => {
		test(
			"gauge below the threshold, then fold count, masked tokens, maskable gauge and cache average",
			async () => {
				const replies = [];
				for (let i = 0; i < 14; i++) replies.push(bash(bigOutputCommand(`u${i}`, 2500), `call_u${i}`));
				replies.push(text("chain finished"));
				const s = await scenario({
					fake: { script: replySequence([text("hello back"), ...replies]) },
					model: { contextWindow: 40_000 },
					compaction: { enabled: false },
				});
				const tui = await startTui({ version, sandbox: s.sandbox, extensions: [bundle], width: 160, height: 50 });
				s.defer(() => tui.kill());
				await tui.waitForReady();
				let screen = await tui.waitFor(/⧉ context-fold ×0/);
				tui.type("hello");
				tui.sendKeys("Enter");
				screen = await tui.waitFor("hello back");
				screen = await tui.waitFor(/next fold at \d+% ctx/);
				const pct = Math.round(DEFAULT_SETTINGS.coldFoldAt * 100);
				// One response without a cache read so far: the cold threshold is the one binding.
				expect(footer(screen)).toContain(`next fold at ${pct}% ctx`);
				expect(footer(screen)).toMatch(/^.*⧉ context-fold ×0 · ~0 tok masked · next fold at \d+% ctx/);

				tui.type("run the chain");
				tui.sendKeys("Enter");
				await tui.waitFor("chain finished", 60_000);
				screen = await tui.waitFor(/⧉ context-fold ×[1-9]/);
				const line = footer(screen);
				expect(line).toMatch(
					new RegExp(
						`⧉ context-fold ×[1-9]\\d* · ~\\d+(\\.\\d)?k tok masked · next fold: \\d+(\\.\\d)?k?/${formatTokens(DEFAULT_SETTINGS.foldStep * 40_000).replace(".", "\\.")} maskable · cache avg \\d+%`,
					),
				);

				tui.type("/quit");
				tui.sendKeys("Enter");
				await tui.waitForExit();
			},
			TIMEOUT,
		);

		test(
			"fold points pinned by hand: the notice on screen once at start, the menu names the rule",
			async () => {
				const s = await scenario({ fake: { script: replySequence([text("hello back")]) } });
				const tui = await startTui({
					version,
					sandbox: s.sandbox,
					extensions: [bundle],
					width: 160,
					height: 50,
					env: { CONTEXTFOLD_FOLD_STEP: "0.1" },
				});
				s.defer(() => tui.kill());
				await tui.waitForReady();
				let screen = await tui.waitFor("fold points pinned by hand: CONTEXTFOLD_FOLD_STEP=0.1 (environment)");
				expect(screen).toContain("The priced fold rule is off for this session");
				tui.type("/context-fold");
				tui.sendKeys("Enter");
				screen = await tui.waitFor("Discard retained images");
				expect(screen).toContain("fold rule: fixed: set by hand (CONTEXTFOLD_FOLD_STEP)");
				tui.sendKeys("Escape");
				await tui.waitForGone("Discard retained images");
				tui.type("hello");
				tui.sendKeys("Enter");
				screen = await tui.waitFor("hello back");
				// Once: a prompt and the menu never bring it back.
				expect(screen.split("fold points pinned by hand").length - 1).toBe(1);
				tui.type("/quit");
				tui.sendKeys("Enter");
				await tui.waitForExit();
			},
			TIMEOUT,
		);

		test(
			"the floor: over budget with nothing left to fold says so",
			async () => {
				const s = await scenario({
					fake: { script: replySequence([text("read it all"), text("still here")]) },
					model: { contextWindow: 4_000 },
					compaction: { enabled: false },
				});
				const tui = await startTui({ version, sandbox: s.sandbox, extensions: [bundle], width: 160, height: 50 });
				s.defer(() => tui.kill());
				await tui.waitForReady();
				// A prompt bigger than the budget (0.75 x 4k): user text is never folded. Typed in
				// pieces because tmux refuses very long send-keys commands.
				tui.type("please keep all of this: ");
				for (let i = 0; i < 16; i++) tui.type("lorem ipsum dolor sit amet ".repeat(37));
				tui.sendKeys("Enter");
				await tui.waitFor("read it all", 30_000);
				tui.type("and now?");
				tui.sendKeys("Enter");
				const screen = await tui.waitFor("⚠ no more folds possible (over budget)", 30_000);
				expect(footer(screen)).toContain("⧉ context-fold ×0");
				tui.type("/quit");
				tui.sendKeys("Enter");
				await tui.waitForExit();
			},
			TIMEOUT,
		);
	});
});
