// Cache advisories on real Pi: the inactivity warning (on resume with a shifted clock, and when the
// interval runs out while Pi sits idle), the observed-cold notice (once per streak), and the
// optional send confirmation in the TUI.
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { bigOutputCommand, ensureBundle, scenarioPool } from "./cf.ts";
import {
	bash,
	expectSuccess,
	forEachPiVersion,
	type RpcEvent,
	replySequence,
	runPrint,
	type Scenario,
	startRpc,
	startTui,
	text,
	tmuxSkipAllowed,
	type UsageHook,
} from "./harness/index.ts";

const TIMEOUT = 90_000;
const HOUR = 3_600_000;
const bundle = ensureBundle();
const REPLAY_CLOCK = join(import.meta.dir, "fixtures/replay-clock.ts");
const scenario = scenarioPool();
const notifies = (events: readonly RpcEvent[], needle: string) =>
	events.filter(
		(e) => e.type === "extension_ui_request" && e.method === "notify" && String(e.message).includes(needle),
	);

/** A session carrying ~30k tokens, written by a first headless run. */
async function carriedSession(s: Scenario, version: typeof import("./harness/index.ts")["PI_VERSIONS"][number]) {
	const replies = [];
	for (let i = 0; i < 6; i++) replies.push(bash(bigOutputCommand(`c${i}`, 5000), `call_c${i}`));
	replies.push(text("built"));
	s.fake.setScript(replySequence(replies));
	expectSuccess(await runPrint({ version, sandbox: s.sandbox, prompt: "build", extensions: [bundle] }));
}

forEachPiVersion((version) => {
	describe(`pi ${version}: advisories`, () => {
		test(
			"cache inactivity warning on resume, from an injected clock; none when the cache is fresh",
			async () => {
				const s = await scenario({ model: { contextWindow: 200_000 }, compaction: { enabled: false } });
				await carriedSession(s, version);
				s.fake.setScript(replySequence([text("ok")]));
				const fresh = await startRpc({ version, sandbox: s.sandbox, extensions: [bundle], continue: true });
				s.defer(() => fresh.close());
				await fresh.waitFor((e) => e.type === "extension_ui_request" && e.method === "setStatus");
				// The resume check runs 400 ms after session start (idle-advisor.ts): wait past it, or a warning
				// that should not come would be cut off by the close and the check could not fail.
				await new Promise((r) => setTimeout(r, 800));
				await fresh.close();
				expect(notifies(fresh.events, "cache may have expired")).toHaveLength(0);

				const later = await startRpc({
					version,
					sandbox: s.sandbox,
					extensions: [bundle],
					continue: true,
					env: { CONTEXTFOLD_TEST_CLOCK_OFFSET_MS: String(2 * HOUR) },
				});
				s.defer(() => later.close());
				const warn = await later.waitFor(
					(e) => e.type === "extension_ui_request" && e.method === "notify" && String(e.message).includes("cache"),
				);
				expect(String(warn.message)).toMatch(
					/^context-fold: cache may have expired: ~\d+k tok may rebill\. Consider \/fold-handoff$/,
				);
				await later.close();
				expect(notifies(later.events, "cache may have expired")).toHaveLength(1);
			},
			TIMEOUT,
		);

		test(
			"the idle clock follows a replay clock (CONTEXTFOLD_TEST_CLOCK=replay): recorded gaps decide, not the wall clock",
			async () => {
				const s = await scenario({ model: { contextWindow: 200_000 }, compaction: { enabled: false } });
				await carriedSession(s, version);
				const replies = s.sandbox
					.readSession(s.sandbox.latestSessionFile())
					.filter((e) => e.type === "message" && e.message?.role === "assistant");
				const stamped = Number(replies.at(-1)?.message?.timestamp);
				expect(Number.isFinite(stamped)).toBe(true);
				s.fake.setScript(replySequence([text("ok")]));
				/** Resume with the last reply recorded at `recorded` and a delivery at `now` as Pi starts. */
				const resume = async (recorded: number, now: number, env: Record<string, string>) => {
					const rpc = await startRpc({
						version,
						sandbox: s.sandbox,
						extensions: [REPLAY_CLOCK, bundle],
						continue: true,
						env: { CF_TEST_CLOCK_PAST: JSON.stringify([[stamped, recorded]]), CF_TEST_CLOCK_NOW: String(now), ...env },
					});
					s.defer(() => rpc.close());
					await rpc.waitFor((e) => e.type === "extension_ui_request" && e.method === "setStatus");
					await new Promise((r) => setTimeout(r, 800));
					await rpc.close();
					return notifies(rpc.events, "cache may have expired").length;
				};
				const replay = { CONTEXTFOLD_TEST_CLOCK: "replay" };
				// Recorded ten hours before the wall clock, resumed two recorded hours later: expired. Read
				// against Pi's own stamp, now() would be eight hours before the reply, and no warning.
				expect(await resume(stamped - 10 * HOUR, stamped - 8 * HOUR, replay)).toBe(1);
				// The same clock without the variable is never read: the wall clock has seconds of idle.
				expect(await resume(stamped - 10 * HOUR, stamped - 8 * HOUR, {})).toBe(0);
				// Recorded ten hours after the wall clock, resumed a recorded minute later: fresh. Read
				// against Pi's own stamp, now() would be ten hours after the reply, and a warning.
				expect(await resume(stamped + 10 * HOUR, stamped + 10 * HOUR + 60_000, replay)).toBe(0);
			},
			TIMEOUT,
		);

		test(
			"the idle interval running out while Pi sits idle warns once",
			async () => {
				const s = await scenario({
					model: { contextWindow: 200_000 },
					compaction: { enabled: false },
					env: { CONTEXTFOLD_CACHE_IDLE_MINUTES: "0.03" },
				});
				const replies = [];
				for (let i = 0; i < 6; i++) replies.push(bash(bigOutputCommand(`i${i}`, 5000), `call_i${i}`));
				replies.push(text("built"));
				s.fake.setScript(replySequence(replies));
				const rpc = await startRpc({ version, sandbox: s.sandbox, extensions: [bundle] });
				s.defer(() => rpc.close());
				const since = rpc.cursor();
				await rpc.promptAndWait("build");
				await rpc.waitFor(
					(e) =>
						e.type === "extension_ui_request" &&
						e.method === "notify" &&
						String(e.message).includes("cache may have expired"),
					{
						since,
						timeoutMs: 10_000,
					},
				);
				await new Promise((r) => setTimeout(r, 3_000));
				expect(notifies(rpc.events.slice(since), "cache may have expired")).toHaveLength(1);
				// Off switches the prediction off entirely.
				const off = await startRpc({
					version,
					sandbox: s.sandbox,
					extensions: [bundle],
					continue: true,
					env: { CONTEXTFOLD_CACHE_IDLE_MINUTES: "off", CONTEXTFOLD_TEST_CLOCK_OFFSET_MS: String(2 * HOUR) },
				});
				s.defer(() => off.close());
				await off.waitFor((e) => e.type === "extension_ui_request" && e.method === "setStatus");
				// Past the 400 ms resume check, with the same margin as above.
				await new Promise((r) => setTimeout(r, 800));
				expect(notifies(off.events, "cache")).toHaveLength(0);
			},
			TIMEOUT,
		);

		test(
			"observed cold input: one notice per cold streak, again after a warm response",
			async () => {
				let warm = false;
				const usage: UsageHook = ({ computed }) =>
					warm
						? undefined
						: { input: computed.input + computed.cacheRead + computed.cacheWrite, cacheRead: 0, cacheWrite: 0 };
				const s = await scenario({
					fake: { usage, cache: { mode: "prefix", style: "openai" } },
					model: { contextWindow: 400_000 },
					compaction: { enabled: false },
				});
				const chain = (tag: string) => {
					const r = [];
					for (let i = 0; i < 5; i++) r.push(bash(bigOutputCommand(`${tag}${i}`, 5000), `call_${tag}${i}`));
					r.push(text(`${tag} done`));
					return r;
				};
				s.fake.setScript(replySequence([...chain("a"), ...chain("b"), ...chain("c"), ...chain("d")]));
				const rpc = await startRpc({ version, sandbox: s.sandbox, extensions: [bundle] });
				s.defer(() => rpc.close());
				await rpc.promptAndWait("first, cold");
				await rpc.promptAndWait("second, still cold");
				expect(notifies(rpc.events, "session cold")).toHaveLength(1);
				expect(String(notifies(rpc.events, "session cold")[0]?.message)).toMatch(
					/session cold: rebilled ~\d+k tok as fresh input\. Consider \/fold-handoff/,
				);
				warm = true;
				await rpc.promptAndWait("warm again");
				warm = false;
				await rpc.promptAndWait("cold again");
				expect(notifies(rpc.events, "session cold")).toHaveLength(2);
			},
			TIMEOUT,
		);

		test.skipIf(tmuxSkipAllowed())(
			"send confirmation in the TUI: Keep draft returns the text to the editor and sends nothing; Send anyway sends",
			async () => {
				const s = await scenario({ model: { contextWindow: 200_000 }, compaction: { enabled: false } });
				await carriedSession(s, version);
				s.fake.setScript(replySequence([text("sent after confirming")]));
				const before = s.fake.requests.length;
				const tui = await startTui({
					version,
					sandbox: s.sandbox,
					extensions: [bundle],
					continue: true,
					width: 140,
					height: 45,
					env: { CONTEXTFOLD_CONFIRM_COLD_PROMPT: "on", CONTEXTFOLD_TEST_CLOCK_OFFSET_MS: String(2 * HOUR) },
				});
				s.defer(() => tui.kill());
				await tui.waitForReady();
				await tui.waitFor("cache may have expired");
				tui.type("please continue with the fix");
				tui.sendKeys("Enter");
				let screen = await tui.waitFor("Keep draft");
				expect(screen).toContain("Send anyway");
				tui.sendKeys("Enter"); // the first option: Keep draft
				await tui.waitForGone("Send anyway");
				screen = await tui.waitFor("please continue with the fix");
				expect(s.fake.requests.length).toBe(before);
				tui.sendKeys("Enter"); // submit the restored draft again
				await tui.waitFor("Send anyway");
				tui.sendKeys("Down");
				tui.sendKeys("Enter");
				await tui.waitFor("sent after confirming", 30_000);
				expect(s.fake.requests.length).toBe(before + 1);
				tui.type("/quit");
				tui.sendKeys("Enter");
				await tui.waitForExit();
			},
			TIMEOUT,
		);
	});
});
