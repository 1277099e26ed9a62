// The /context-fold menu and its settings file, driven the way a person would: RPC dialogs and the TUI.
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { FoldDecisionRecord } from "../../src/core/layers.ts";
import { firedWords, paybackWords } from "../../src/core/payback.ts";
import { DEFAULT_SETTINGS } from "../../src/core/settings.ts";
import { bigOutputCommand, ensureBundle, foldEvents, scenarioPool } from "./cf.ts";
import {
	bash,
	FAKE_PROVIDER,
	forEachPiVersion,
	type PiRpc,
	type PiVersion,
	type RpcEvent,
	replySequence,
	runPrint,
	type Scenario,
	startRpc,
	startTui,
	text,
	tmuxSkipAllowed,
	type UiRequest,
} from "./harness/index.ts";

const TIMEOUT = 60_000;
const MENU = ["Status", "Settings", "Discard retained images", "Close"];
const bundle = ensureBundle();
const scenario = scenarioPool();

const settingsPath = (s: Scenario) => join(s.sandbox.agentDir, "context-fold.json");
const PRICED_OFF = "The priced fold rule is off for this session: folds come at these fixed points, as in 0.1.0.";
const readJson = (path: string) => JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown>;

async function rpcFor(s: Scenario, version: PiVersion, env?: Record<string, string>): Promise<PiRpc> {
	const rpc = await startRpc({ version, sandbox: s.sandbox, extensions: [bundle], ...(env && { env }) });
	s.defer(() => rpc.close());
	return rpc;
}

const optionsOf = (q: UiRequest) => (q.options as string[] | undefined) ?? [];
const isNotify = (e: RpcEvent) => e.type === "extension_ui_request" && e.method === "notify";
const notifyText = (e: RpcEvent) => String(e.message ?? "");

/** One answer to a dialog: pick the select option starting with a prefix, type into an input, or Escape. */
type Step = { pick: string } | { type: string } | { cancel: true };

/** Runs one `/context-fold ...` invocation to its end, answering each dialog with the next step. */
async function drive(rpc: PiRpc, command: string, steps: Step[]): Promise<{ dialogs: UiRequest[]; notes: string[] }> {
	const since = rpc.cursor();
	const done = rpc.prompt(command);
	const dialogs: UiRequest[] = [];
	let scanned = since;
	for (const step of steps) {
		const q = (await rpc.waitFor(
			(e) => e.type === "extension_ui_request" && (e.method === "select" || e.method === "input"),
			{ since: scanned },
		)) as UiRequest;
		scanned = rpc.events.indexOf(q) + 1;
		dialogs.push(q);
		if ("cancel" in step) rpc.answerUi(q.id, { cancelled: true });
		else if ("type" in step) {
			expect(q.method).toBe("input");
			rpc.answerUi(q.id, { value: step.type });
		} else {
			expect(q.method).toBe("select");
			const option = optionsOf(q).find((o) => o.startsWith(step.pick));
			if (option === undefined)
				throw new Error(`no option starting with "${step.pick}" in ${JSON.stringify(q.options)}`);
			rpc.answerUi(q.id, { value: option });
		}
	}
	const response = await done;
	expect(response.success).toBe(true);
	// Nothing left open: every dialog the command raised was answered.
	const raised = rpc.events
		.slice(since)
		.filter((e) => e.type === "extension_ui_request" && (e.method === "select" || e.method === "input"));
	expect(raised).toHaveLength(steps.length);
	return { dialogs, notes: rpc.events.slice(since).filter(isNotify).map(notifyText) };
}

forEachPiVersion((version) => {
	describe(`pi ${version}: /context-fold over RPC`, () => {
		test(
			"menu items, Status, Close, Escape, the shortcuts and an unknown subcommand",
			async () => {
				const s = await scenario();
				const rpc = await rpcFor(s, version);

				let r = await drive(rpc, "/context-fold", [{ pick: "Status" }]);
				expect(optionsOf(r.dialogs[0] as UiRequest)).toEqual(MENU);
				// The sandbox runs the fixed ladder through the test seam: named, but no notice about pins (below).
				expect(String(r.dialogs[0]?.title)).toBe(
					"context-fold\nfold rule: fixed: test seam CONTEXTFOLD_TEST_FIXED_FOLDS=1",
				);
				expect(r.notes).toHaveLength(1);
				expect(r.notes[0]).toStartWith("context-fold status");
				expect(r.notes[0]).toContain("folds: 0 events");
				expect(r.notes[0]).toContain("\n  rule: fixed fold points (test seam CONTEXTFOLD_TEST_FIXED_FOLDS=1)\n");

				r = await drive(rpc, "/context-fold", [{ pick: "Close" }]);
				expect(r.notes).toEqual([]);
				r = await drive(rpc, "/context-fold", [{ cancel: true }]);
				expect(r.notes).toEqual([]);
				// Escape in Settings goes back up to the menu; Escape there closes it.
				r = await drive(rpc, "/context-fold", [{ pick: "Settings" }, { cancel: true }, { cancel: true }]);
				expect(optionsOf(r.dialogs[2] as UiRequest)).toEqual(MENU);
				r = await drive(rpc, "/context-fold", [{ pick: "Discard retained images" }]);
				expect(r.notes).toEqual(["context-fold: No retained images."]);

				r = await drive(rpc, "/context-fold status", []);
				expect(r.notes[0]).toStartWith("context-fold status");
				r = await drive(rpc, "/context-fold discard-images", []);
				expect(r.notes).toEqual(["context-fold: No retained images."]);
				r = await drive(rpc, "/context-fold settings", [{ pick: "Back" }]);
				expect(String(r.dialogs[0]?.title)).toContain(settingsPath(s));
				r = await drive(rpc, "/context-fold config", [{ cancel: true }]);
				r = await drive(rpc, "/context-fold frobnicate", []);
				expect(r.notes).toEqual([
					'context-fold: unknown subcommand "frobnicate". Use /context-fold alone for the menu, or one of: status, config, settings, discard-images.',
				]);
				expect(s.fake.requests).toHaveLength(0);
				expect(existsSync(settingsPath(s))).toBe(false);
				expect(rpc.events.filter((e) => isNotify(e) && notifyText(e).includes("pinned by hand"))).toEqual([]);
			},
			TIMEOUT,
		);

		test(
			"Settings lists every knob with value and source; an edit is saved 0600 and folds the next request earlier",
			async () => {
				const replies = [0, 1, 2].map((i) => bash(bigOutputCommand(`m${i}`, 3000), `call_m${i}`));
				const s = await scenario({
					fake: { script: replySequence([...replies, text("chain done"), text("after the edit")]) },
					model: { contextWindow: 100_000 },
					compaction: { enabled: false },
					// Only the entry threshold gates folding here: a tiny step and tail.
					env: { CONTEXTFOLD_FOLD_STEP: "0.01", CONTEXTFOLD_TAIL: "500" },
				});
				const rpc = await rpcFor(s, version);
				await rpc.promptAndWait("run the chain");
				// ~10k tokens on a 100k window: under the default first-fold threshold, so nothing folded.
				expect(foldEvents(s.fake.requests)).toEqual([]);

				const r = await drive(rpc, "/context-fold config", [
					{ pick: "Pin first fold at" },
					{ type: "0.05" },
					{ pick: "Back" },
				]);
				const rows = optionsOf(r.dialogs[0] as UiRequest);
				expect(rows).toEqual([
					// A fold point set by hand: the fixed ladder decides, and every point shows its value.
					"Fold rule: fixed: set by hand (CONTEXTFOLD_FOLD_STEP)",
					`Pin first fold at (fraction of window): ${DEFAULT_SETTINGS.foldAt} · default`,
					"Pin fold step (fraction of window): 0.01 · env CONTEXTFOLD_FOLD_STEP",
					"Pin cold first fold at (fraction of window): 0.25 · default",
					"Budget (fraction of window): 0.75 · default",
					"Budget cap (tokens): 200000 · default",
					"Protected tail (tokens): 500 · env CONTEXTFOLD_TAIL",
					"Hard compaction: det · default",
					"Early compaction: priced · default",
					"Reconstruction estimate (tokens): 18000 · default",
					`Cache inactivity warning (minutes) for ${FAKE_PROVIDER}: 30 · default fallback`,
					"Confirm potentially cold prompts: off · default",
					"Recall answer cap (tokens): 4000 · default",
					"Back",
				]);
				const input = r.dialogs[1] as UiRequest & { title: string; placeholder?: string };
				expect(input.title).toContain(
					`Pin first fold at (fraction of window): now ${DEFAULT_SETTINGS.foldAt} (default)`,
				);
				expect(input.title).toContain("a number > 0 and <= 1");
				expect(input.placeholder).toBe(String(DEFAULT_SETTINGS.foldAt));
				expect(r.notes).toEqual([
					`context-fold: saved Pin first fold at (fraction of window) = 0.05 in ${settingsPath(s)}. Applies now.`,
				]);
				expect(optionsOf(r.dialogs[2] as UiRequest).slice(0, 2)).toEqual([
					"Fold rule: fixed: set by hand (foldAt in the file, CONTEXTFOLD_FOLD_STEP)",
					"Pin first fold at (fraction of window): 0.05 · file",
				]);

				expect(readJson(settingsPath(s))).toEqual({ v: 1, foldAt: 0.05 });
				expect(statSync(settingsPath(s)).mode & 0o777).toBe(0o600);

				// Live: the very next request folds, with no restart.
				const before = s.fake.requests.length;
				await rpc.promptAndWait("and now?");
				expect(foldEvents(s.fake.requests)).toEqual([before]);
				const status = await drive(rpc, "/context-fold status", []);
				expect(status.notes[0]).toContain("folds: 1 event,");
			},
			TIMEOUT,
		);

		test(
			"select knobs, invalid input, default removes the saved value; unknown fields survive",
			async () => {
				const s = await scenario();
				writeFileSync(settingsPath(s), JSON.stringify({ note: "hand written", tail: 9000 }));
				const rpc = await rpcFor(s, version);
				const r = await drive(rpc, "/context-fold settings", [
					{ pick: "Hard compaction" },
					{ pick: "native" },
					{ pick: "Confirm potentially cold prompts" },
					{ pick: "on" },
					{ pick: "Protected tail" },
					{ type: "lots" },
					{ pick: "Protected tail" },
					{ type: "default" },
					{ cancel: true },
				]);
				expect(optionsOf(r.dialogs[1] as UiRequest)).toEqual(["det", "native", "default"]);
				expect(optionsOf(r.dialogs[3] as UiRequest)).toEqual(["on", "off", "default"]);
				expect(optionsOf(r.dialogs[4] as UiRequest)).toContain("Protected tail (tokens): 9000 · file");
				expect(r.notes).toContain(
					'context-fold: "lots" is not a valid Protected tail (tokens): expected a whole number from 0 to 10000000. Nothing was saved.',
				);
				const last = optionsOf(r.dialogs[8] as UiRequest);
				expect(last).toContain("Hard compaction: native · file");
				expect(last).toContain("Confirm potentially cold prompts: on · file");
				expect(last).toContain("Protected tail (tokens): 20000 · default");
				expect(readJson(settingsPath(s))).toEqual({
					v: 1,
					note: "hand written",
					compact: "native",
					confirmColdPrompt: "on",
				});
			},
			TIMEOUT,
		);

		test(
			"an environment variable shadowing a saved value is flagged, and a save says it still overrides",
			async () => {
				const s = await scenario();
				writeFileSync(settingsPath(s), JSON.stringify({ v: 1, foldAt: 0.5, cacheIdleMinutes: 20 }));
				const rpc = await rpcFor(s, version, {
					CONTEXTFOLD_FOLD_AT: "0.6",
					CONTEXTFOLD_CACHE_IDLE_MINUTES: "5",
				});
				// The variable pins a fold point: said once at session start (before the menu is opened).
				await rpc.waitFor((e) => isNotify(e) && notifyText(e).includes("CONTEXTFOLD_FOLD_AT=0.6 (environment)"));
				const r = await drive(rpc, "/context-fold config", [
					{ pick: "Pin first fold at" },
					{ type: "0.4" },
					{ cancel: true },
				]);
				const rows = optionsOf(r.dialogs[0] as UiRequest);
				expect(rows).toContain(
					"Pin first fold at (fraction of window): 0.6 · env CONTEXTFOLD_FOLD_AT (shadows saved 0.5)",
				);
				expect(rows).toContain(
					`Cache inactivity warning (minutes) for ${FAKE_PROVIDER}: 5 · env CONTEXTFOLD_CACHE_IDLE_MINUTES (shadows saved 20)`,
				);
				expect(r.notes).toEqual([
					`context-fold: saved Pin first fold at (fraction of window) = 0.4 in ${settingsPath(s)}. CONTEXTFOLD_FOLD_AT=0.6 still overrides it in this session.`,
				]);
				expect(optionsOf(r.dialogs[2] as UiRequest)).toContain(
					"Pin first fold at (fraction of window): 0.6 · env CONTEXTFOLD_FOLD_AT (shadows saved 0.4)",
				);
				expect(readJson(settingsPath(s))).toEqual({ v: 1, foldAt: 0.4, cacheIdleMinutes: 20 });
			},
			TIMEOUT,
		);

		test(
			"the idle row names the provider and saves an override for it; default removes only that one",
			async () => {
				const s = await scenario();
				writeFileSync(
					settingsPath(s),
					JSON.stringify({ v: 1, cacheIdleMinutes: 45, providerCacheIdleMinutes: { openai: 15 } }),
				);
				const rpc = await rpcFor(s, version);
				const idle = `Cache inactivity warning (minutes) for ${FAKE_PROVIDER}`;
				let r = await drive(rpc, "/context-fold settings", [{ pick: idle }, { type: "10" }, { cancel: true }]);
				expect(optionsOf(r.dialogs[0] as UiRequest)).toContain(`${idle}: 45 · file fallback`);
				expect(String(r.dialogs[1]?.title)).toContain("removes the saved override");
				expect(optionsOf(r.dialogs[2] as UiRequest)).toContain(`${idle}: 10 · file, ${FAKE_PROVIDER} override`);
				expect(r.notes).toEqual([`context-fold: saved ${idle} = 10 in ${settingsPath(s)}. Applies now.`]);
				expect(readJson(settingsPath(s))).toEqual({
					v: 1,
					cacheIdleMinutes: 45,
					providerCacheIdleMinutes: { openai: 15, [FAKE_PROVIDER]: 10 },
				});

				r = await drive(rpc, "/context-fold settings", [{ pick: idle }, { type: "default" }, { cancel: true }]);
				expect(optionsOf(r.dialogs[2] as UiRequest)).toContain(`${idle}: 45 · file fallback`);
				expect(r.notes).toEqual([`context-fold: saved ${idle} back to default in ${settingsPath(s)}. Applies now.`]);
				// Only this provider's override went; the other provider's and the fallback stay.
				expect(readJson(settingsPath(s))).toEqual({
					v: 1,
					cacheIdleMinutes: 45,
					providerCacheIdleMinutes: { openai: 15 },
				});
			},
			TIMEOUT,
		);

		test(
			"a corrupt settings file is reported at start and never overwritten by the menu",
			async () => {
				const s = await scenario();
				const corrupt = '{ "foldAt": 0.5, oops }\n';
				writeFileSync(settingsPath(s), corrupt);
				const rpc = await rpcFor(s, version);
				const warning = await rpc.waitFor((e) => isNotify(e) && notifyText(e).includes("is not valid JSON"));
				expect(notifyText(warning)).toContain(settingsPath(s));

				const r = await drive(rpc, "/context-fold config", [
					{ pick: "Pin first fold at" },
					{ pick: "Hard compaction" },
					{ cancel: true },
				]);
				expect(String(r.dialogs[0]?.title)).toContain(`⚠ ${settingsPath(s)} is not valid JSON`);
				expect(r.notes).toHaveLength(2);
				for (const note of r.notes) {
					expect(note).toContain(`${settingsPath(s)} is not valid JSON`);
					expect(note).toContain("it was not changed and nothing was saved");
				}
				expect(readFileSync(settingsPath(s), "utf8")).toBe(corrupt);
			},
			TIMEOUT,
		);
	});

	describe(`pi ${version}: the fold rule in the menu`, () => {
		test(
			"fold points set by hand: one notice at session start, naming each setting and the way back",
			async () => {
				const s = await scenario();
				writeFileSync(settingsPath(s), JSON.stringify({ v: 1, foldStep: 0.1 }));
				const rpc = await rpcFor(s, version, { CONTEXTFOLD_FOLD_AT: "0.4" });
				const notice = await rpc.waitFor((e) => isNotify(e) && notifyText(e).includes("pinned by hand"));
				expect(notifyText(notice)).toBe(
					`context-fold: fold points pinned by hand: CONTEXTFOLD_FOLD_AT=0.4 (environment), foldStep 0.1 (context-fold.json). ${PRICED_OFF} Unset them (or choose "default" in /context-fold Settings) to return to the priced rule.`,
				);
				expect((notice as { notifyType?: string }).notifyType).toBe("warning");

				const r = await drive(rpc, "/context-fold", [{ pick: "Status" }]);
				expect(String(r.dialogs[0]?.title)).toBe(
					"context-fold\nfold rule: fixed: set by hand (CONTEXTFOLD_FOLD_AT, foldStep in the file)",
				);
				expect(r.notes[0]).toContain(
					"\n  rule: fixed fold points, set by hand: CONTEXTFOLD_FOLD_AT=0.4 (environment), foldStep 0.1 (context-fold.json); the priced rule is off until they are unset\n",
				);
				// Picking the rule row repeats the notice's words.
				const settings = await drive(rpc, "/context-fold settings", [{ pick: "Fold rule" }, { cancel: true }]);
				expect(settings.notes).toEqual([notifyText(notice)]);
				// Once per session: the menu and status never repeat it on their own.
				expect(rpc.events.filter((e) => isNotify(e) && notifyText(e) === notifyText(notice))).toHaveLength(2);
			},
			TIMEOUT,
		);

		test(
			"the priced rule: named in the menu with the last fold's payback; a pin switches to fixed points, default back",
			async () => {
				const replies = [0, 1, 2].map((i) => bash(bigOutputCommand(`p${i}`, 3000), `call_p${i}`));
				const s = await scenario({
					fake: { script: replySequence([...replies, text("chain done"), text("after the idle")]) },
					model: { contextWindow: 100_000 },
					compaction: { enabled: false },
					foldRule: "priced",
					env: { CONTEXTFOLD_TAIL: "500" },
				});
				// Every request stands an hour after the response before it: the prompt cache is gone, so
				// the priced rule folds everything foldable at once (the rewrite is free).
				const rpc = await rpcFor(s, version, { CONTEXTFOLD_TEST_CLOCK_OFFSET_MS: String(3_600_000) });
				let r = await drive(rpc, "/context-fold", [{ cancel: true }]);
				expect(String(r.dialogs[0]?.title)).toBe("context-fold\nfold rule: priced");

				await rpc.promptAndWait("run the chain");
				await rpc.promptAndWait("and now?");
				expect(foldEvents(s.fake.requests).length).toBeGreaterThan(0);
				const layers = s.sandbox
					.readSession()
					.filter((e) => e.type === "custom" && e.customType === "context-fold")
					.map((e) => e.data as { seq: number; decision?: FoldDecisionRecord });
				const last = layers.at(-1);
				// Folded because the cache was cold (an hour idle), at the fake model's own (Sonnet) prices.
				expect(last?.decision).toMatchObject({ rule: "cold", basis: "model", prices: { input: 3, cacheRead: 0.3 } });
				const record = last?.decision as FoldDecisionRecord;
				expect(record.cold).toBeDefined();

				r = await drive(rpc, "/context-fold", [{ pick: "Status" }]);
				const title = String(r.dialogs[0]?.title).split("\n");
				expect(title.slice(0, 2)).toEqual(["context-fold", "fold rule: priced"]);
				// The record's payback, in tokens and in dollars, in the title and the status alike.
				const payback = `last fold #${last?.seq} (${firedWords("cold", record.cold)}): ${paybackWords(record, record.prices)}`;
				expect(payback).toMatch(/\(\$0\.\d{4}\)/);
				expect(title).toContain(`payback of the ${payback}`);
				expect(r.notes[0]).toMatch(
					/\n {2}rule: priced \(read 0\.10×, write 1\.25× the input price(; cache cold: [^)]+)?\)\n/,
				);
				expect(r.notes[0]).toContain(`\n  payback: ${payback}\n`);
				expect(rpc.events.filter((e) => isNotify(e) && notifyText(e).includes("pinned by hand"))).toEqual([]);

				r = await drive(rpc, "/context-fold settings", [
					{ pick: "Fold rule" },
					{ pick: "Pin first fold at" },
					{ type: "0.5" },
					{ pick: "Pin first fold at" },
					{ type: "default" },
					{ cancel: true },
				]);
				const rows = optionsOf(r.dialogs[0] as UiRequest);
				expect(rows.slice(0, 4)).toEqual([
					"Fold rule: priced",
					"Pin first fold at (fraction of window): unset · default",
					"Pin fold step (fraction of window): unset · default",
					"Pin cold first fold at (fraction of window): unset · default",
				]);
				const input = r.dialogs[2] as UiRequest & { title: string; placeholder?: string };
				expect(input.title).toContain("Pin first fold at (fraction of window): now unset (default)");
				expect(input.title).toContain("Set, it turns the priced fold rule off; unset, the priced rule decides.");
				expect(input.placeholder).toBe(String(DEFAULT_SETTINGS.foldAt));
				expect(optionsOf(r.dialogs[3] as UiRequest).slice(0, 3)).toEqual([
					"Fold rule: fixed: set by hand (foldAt in the file)",
					"Pin first fold at (fraction of window): 0.5 · file",
					`Pin fold step (fraction of window): ${DEFAULT_SETTINGS.foldStep} · default`,
				]);
				expect(optionsOf(r.dialogs[5] as UiRequest)[0]).toBe("Fold rule: priced");
				expect(r.notes).toEqual([
					expect.stringMatching(
						/^context-fold: fold rule: priced\. A fold event fires once what re-reading the old output has cost outweighs/,
					),
					`context-fold: saved Pin first fold at (fraction of window) = 0.5 in ${settingsPath(s)}. Applies now. Fold points are pinned now: the priced fold rule is off until they are unset.`,
					`context-fold: saved Pin first fold at (fraction of window) back to default in ${settingsPath(s)}. Applies now. No fold point is pinned now: the priced fold rule decides.`,
				]);
				expect(readJson(settingsPath(s))).toEqual({ v: 1 });
			},
			TIMEOUT,
		);
	});

	describe(`pi ${version}: /context-fold headless`, () => {
		test(
			"print mode: no menu; the bare command and status print the status, config lists the settings",
			async () => {
				const s = await scenario();
				writeFileSync(settingsPath(s), JSON.stringify({ v: 1, tail: 9000 }));
				const bare = await runPrint({ version, sandbox: s.sandbox, prompt: "/context-fold", extensions: [bundle] });
				expect(bare.stderr).toContain("context-fold status");
				const config = await runPrint({
					version,
					sandbox: s.sandbox,
					prompt: "/context-fold config",
					extensions: [bundle],
					env: { CONTEXTFOLD_FOLD_AT: "0.6" },
				});
				expect(config.stderr).toContain(`context-fold settings (saved in ${settingsPath(s)}`);
				expect(config.stderr).toContain("  Protected tail (tokens): 9000 · file");
				expect(config.stderr).toContain("  Pin first fold at (fraction of window): 0.6 · env CONTEXTFOLD_FOLD_AT");
				// The pinned point: the notice at session start (once), and the same words in the listing.
				const notice = `fold points pinned by hand: CONTEXTFOLD_FOLD_AT=0.6 (environment). ${PRICED_OFF} Unset it (or choose "default" in /context-fold Settings) to return to the priced rule.`;
				const lines = config.stderr.split("\n");
				expect(lines.filter((l) => l === `context-fold: ${notice}`)).toHaveLength(1);
				expect(lines).toContain(`  ⚠ ${notice}`);
				expect(lines).toContain("  Fold rule: fixed: set by hand (CONTEXTFOLD_FOLD_AT)");
				// The test seam alone (the sandbox's default) pins nothing anybody set: no notice.
				expect(bare.stderr).not.toContain("pinned by hand");
				expect(s.fake.requests).toHaveLength(0);
			},
			TIMEOUT,
		);
	});
});

forEachPiVersion((version) => {
	describe.skipIf(tmuxSkipAllowed())(`pi ${version}: /context-fold in the TUI`, () => {
		/** The footer line context-fold owns, as shown on screen. */
		const footer = (screen: string) => screen.split("\n").find((l) => l.includes("⧉ context-fold")) ?? "";

		async function tuiAfterOnePrompt() {
			const s = await scenario({
				fake: { script: replySequence([text("hello back"), text("second answer")]) },
				model: { contextWindow: 40_000 },
			});
			const tui = await startTui({ version, sandbox: s.sandbox, extensions: [bundle], width: 120, height: 40 });
			s.defer(() => tui.kill());
			await tui.waitForReady();
			tui.type("hello");
			tui.sendKeys("Enter");
			await tui.waitFor("hello back");
			// One response, no cache read yet: the cold threshold is the one the gauge shows.
			await tui.waitFor("next fold at 25% ctx");
			return { s, tui };
		}

		test(
			"arrow keys and Enter reach Status; Escape closes the menu and the editor works again",
			async () => {
				const { tui } = await tuiAfterOnePrompt();
				tui.type("/context-fold");
				tui.sendKeys("Enter");
				let screen = await tui.waitFor("Discard retained images");
				expect(screen).toMatch(/→ Status\n\s+Settings\n\s+Discard retained images\n\s+Close/);
				// The title says which rule decides (the sandbox's test seam here).
				expect(screen).toContain("fold rule: fixed: test seam CONTEXTFOLD_TEST_FIXED_FOLDS=1");
				// Down to Close and back up to Status: the arrow moves with the keys.
				tui.sendKeys("Down", "Down", "Down");
				screen = await tui.waitFor(/→ Close/);
				tui.sendKeys("Up", "Up", "Up");
				await tui.waitFor(/→ Status/);
				tui.sendKeys("Enter");
				screen = await tui.waitFor("context-fold status");
				expect(screen).toContain("folds: 0 events");
				await tui.waitForGone("Discard retained images");

				tui.type("/context-fold");
				tui.sendKeys("Enter");
				await tui.waitFor("Discard retained images");
				tui.sendKeys("Escape");
				await tui.waitForGone("Discard retained images");
				tui.type("still here?");
				tui.sendKeys("Enter");
				await tui.waitFor("second answer");
			},
			TIMEOUT,
		);

		test(
			"a settings edit shows in the list, persists to the file and moves the footer gauge at once",
			async () => {
				const { s, tui } = await tuiAfterOnePrompt();
				tui.type("/context-fold");
				tui.sendKeys("Enter");
				await tui.waitFor("Discard retained images");
				tui.sendKeys("Down", "Enter");
				let screen = await tui.waitFor("→ Fold rule: fixed: test seam CONTEXTFOLD_TEST_FIXED_FOLDS=1");
				expect(screen).toContain(`context-fold settings (saved in ${settingsPath(s)})`);
				expect(screen).toContain(`Pin first fold at (fraction of window): ${DEFAULT_SETTINGS.foldAt} · default`);
				expect(screen).toContain("Pin cold first fold at (fraction of window): 0.25 · default");
				// The list shows its first ten rows; the provider's idle row, further down, is checked over RPC.
				expect(screen).toContain("Early compaction: priced · default");

				tui.sendKeys("Down", "Down", "Down");
				await tui.waitFor("→ Pin cold first fold at");
				tui.sendKeys("Enter");
				screen = await tui.waitFor("Pin cold first fold at (fraction of window): now 0.25 (default)");
				expect(screen).toContain('Enter a number > 0 and <= 1. "default" removes the saved value');
				tui.type("0.1");
				tui.sendKeys("Enter");
				screen = await tui.waitFor("Pin cold first fold at (fraction of window): 0.1 · file");
				expect(screen).toContain("context-fold: saved Pin cold first fold at (fraction of window) = 0.1");
				// Now pinned by hand, in the file: the rule row says so.
				expect(screen).toContain("Fold rule: fixed: set by hand (coldFoldAt in the file)");
				// Live: the footer's gauge already reads the new threshold, before any new request.
				expect(footer(screen)).toContain("next fold at 10% ctx");
				expect(readJson(settingsPath(s))).toEqual({ v: 1, coldFoldAt: 0.1 });

				// Escape backs out one level at a time: settings, then the menu.
				tui.sendKeys("Escape");
				await tui.waitFor("Discard retained images");
				tui.sendKeys("Escape");
				screen = await tui.waitForGone("Discard retained images");
				expect(footer(screen)).toContain("next fold at 10% ctx");
				tui.type("/quit");
				tui.sendKeys("Enter");
				await tui.waitForExit();
			},
			TIMEOUT,
		);
	});
});
