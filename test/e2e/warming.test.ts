// Pi 1.6.0's prompt-cache warming against the fake model, with context-fold loaded: Pi refreshes a
// prefix that will be reused, context-fold stops it from refreshing one that the next request is going
// to rewrite, and the inactivity warning counts real refreshes.
//
// What Pi needs before it sends a refresh (read in 1.6.0's dist; see docs/pi-api-surface.md):
// - the model declares `promptCache.short` (the default retention tier) longer than 10 s; the refresh
//   is due min(0.9 × ttl, ttl − 10 s) after the request it repeats (pi-ai cache-warming.js);
// - `cacheWarming` is "idle" (the default) to warm between runs, not only during them;
// - it expects to save at least $0.05 per refresh. Idle: 0.15 × (prompt × (cacheWrite − cacheRead)) −
//   (prompt × cacheRead + 1 output token), prices per million from models.json. At the harness's
//   default prices (3.75 / 0.30) that needs a ~230k-token prompt, which is why an earlier attempt with
//   a 118k context never saw one; the prices here make a 30k prompt worth warming.
// The `api` does not matter (only Anthropic reasoning requests are refused as not replayable), so the
// harness's openai-completions fake serves. A refresh is the last request replayed with a one-token
// output cap (`max_completion_tokens: 1`); a successful one is recorded as a `usage` entry of kind
// `cache_warm`.
import { describe, expect, test } from "bun:test";
import { bigOutputCommand, ensureBundle, foldedCodes, messageBytes, scenarioPool } from "./cf.ts";
import {
	bash,
	call,
	entriesOfType,
	forEachPiVersion,
	httpError,
	type RecordedRequest,
	type Reply,
	type RpcEvent,
	replySequence,
	type Scenario,
	startRpc,
	startTui,
	text,
	tmuxSkipAllowed,
	toolCalls,
} from "./harness/index.ts";

const TIMEOUT = 90_000;
const TTL_S = 15; // refreshes come 5 s after the request they repeat
const REFRESH_MS = 5_000;
const IDLE_MINUTES = 0.13; // 7.8 s: between the first refresh (5 s) and the second (10 s)
const bundle = ensureBundle();
const scenario = scenarioPool();

const isRefresh = (req: RecordedRequest) => req.body.max_completion_tokens === 1;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const expiryNotices = (events: readonly RpcEvent[]) =>
	events.filter(
		(e) =>
			e.type === "extension_ui_request" &&
			e.method === "notify" &&
			String(e.message).includes("cache may have expired"),
	);

/** A fake whose prices make Pi's refreshes pay off, with a 15 s cache lifetime and a short idle interval. */
function warmingScenario(): Promise<Scenario> {
	return scenario({
		model: {
			contextWindow: 200_000,
			promptCache: { short: TTL_S },
			cost: { input: 30, output: 15, cacheRead: 1, cacheWrite: 100 },
		},
		compaction: { enabled: false },
		settings: { cacheWarming: "idle" },
		env: { CONTEXTFOLD_CACHE_IDLE_MINUTES: String(IDLE_MINUTES) },
	});
}

/** Real requests follow `replies`; refreshes get `refresh()`. */
function script(s: Scenario, replies: Reply[], refresh: () => Reply) {
	const real = replySequence(replies);
	s.fake.setScript((req, index) => (isRefresh(req) ? refresh() : real(req, index)));
}

async function until(what: string, check: () => boolean, timeoutMs: number): Promise<void> {
	const deadline = Date.now() + timeoutMs;
	while (!check()) {
		if (Date.now() > deadline) throw new Error(`${what} not seen in ${timeoutMs} ms`);
		await sleep(50);
	}
}

forEachPiVersion((version) => {
	describe(`pi ${version}: cache warming coordination`, () => {
		if (version === "0.80.6") {
			// Pi added cache warming and the cache_warming_decision event in 0.86.0; 0.80.6 never warms.
			test.skip("cache_warming_decision does not exist in Pi 0.80.6 (added in 0.86.0)", () => {});
			return;
		}

		test(
			"a prefix that will not fold: Pi warms it, context-fold lets it, and the idle clock counts the refreshes",
			async () => {
				const s = await warmingScenario();
				let refreshes: "ok" | "fail" = "ok";
				const replies: Reply[] = [];
				// ~30k tokens: under the first fold threshold (25-30 % of 200k), over the advisories' 20k.
				for (let i = 0; i < 6; i++) replies.push(bash(bigOutputCommand(`w${i}`, 5000), `call_w${i}`));
				replies.push(text("built"));
				script(s, replies, () => (refreshes === "ok" ? text("k") : httpError(503, "refresh refused")));
				const rpc = await startRpc({ version, sandbox: s.sandbox, extensions: [bundle] });
				s.defer(() => rpc.close());
				await rpc.promptAndWait("build");
				const settledAt = Date.now();
				const lastReal = s.fake.request(-1);
				expect(isRefresh(lastReal)).toBe(false);
				expect(foldedCodes(lastReal)).toEqual([]);

				// Two refreshes while Pi sits idle, each the last request replayed byte for byte.
				await s.fake.waitForRequests(lastReal.index + 3, 4 * REFRESH_MS);
				const sent = s.fake.requests.slice(lastReal.index + 1);
				expect(sent.every(isRefresh)).toBe(true);
				for (const r of sent) expect(messageBytes(r)).toEqual(messageBytes(lastReal));
				await until("two cache_warm entries", () => entriesOfType(s.sandbox.readSession(), "usage").length >= 2, 5_000);
				const warms = entriesOfType(s.sandbox.readSession(), "usage");
				expect(warms.every((e) => e.kind === "cache_warm" && e.provider === "fake")).toBe(true);
				// Pi's own decision, not an extension override.
				expect(warms.every((e) => e.note === undefined)).toBe(true);

				// The idle interval (7.8 s) ran out after the first refresh (5 s), and nothing was said:
				// the refresh restarted the clock.
				await until("the idle interval", () => Date.now() - settledAt > IDLE_MINUTES * 60_000 + 500, 10_000);
				expect(expiryNotices(rpc.events)).toHaveLength(0);

				// Refreshes start failing: the clock keeps the last good one, and the warning comes once.
				refreshes = "fail";
				await rpc.waitFor((e) => expiryNotices([e]).length > 0, { timeoutMs: 20_000 });
				expect(s.fake.requests.slice(lastReal.index + 1).every(isRefresh)).toBe(true);
				await sleep(1_000);
				expect(expiryNotices(rpc.events)).toHaveLength(1);
				expect(String(expiryNotices(rpc.events)[0]?.message)).toMatch(
					/^context-fold: cache may have expired: ~\d+k tok may rebill\. Consider \/fold-handoff$/,
				);
			},
			TIMEOUT,
		);

		test.skipIf(tmuxSkipAllowed())(
			"a prefix the next request will fold: context-fold stops Pi's refresh, /session says so, and the next request folds",
			async () => {
				const s = await warmingScenario();
				// Five big results in one parallel call: delivered for the first time by the run's last
				// request, so no fold yet; once answered they are foldable (~80k > threshold, mass > step).
				const calls = [];
				for (let i = 0; i < 5; i++)
					calls.push(call("bash", { command: bigOutputCommand(`f${i}`, 16_000) }, `call_f${i}`));
				script(s, [toolCalls(calls), text("all five ran"), text("continuing")], () => text("k"));
				const tui = await startTui({ version, sandbox: s.sandbox, extensions: [bundle], width: 160, height: 60 });
				s.defer(() => tui.kill());
				await tui.waitForReady();
				tui.type("run the five builds");
				tui.sendKeys("Enter");
				await tui.waitFor("all five ran", 30_000);
				const lastReal = s.fake.request(-1);
				expect(s.fake.requests).toHaveLength(2);
				expect(foldedCodes(lastReal)).toEqual([]);

				// Past the refresh (5 s) and its deadline (5 s + 5 s): nothing reached the fake.
				await sleep(2 * REFRESH_MS + 1_000);
				expect(s.fake.requests).toHaveLength(2);
				expect(entriesOfType(s.sandbox.readSession(), "usage")).toHaveLength(0);
				// Pi's own verdict was to warm (savings >= $0.05); the extension overrode it.
				tui.type("/session");
				tui.sendKeys("Enter");
				const screen = await tui.waitFor("Cache Warming");
				expect(screen).toMatch(
					/Status: Stopped \(extension override, 15% continuation probability, expected savings \$\d+\.\d+ >= \$0\.050\)/,
				);
				// With no refresh, the cache really is going cold, and the inactivity warning says so.
				await tui.waitFor("cache may have expired", 10_000);

				// The plan that stopped the refresh was right: the next request carries a fold.
				tui.type("go on");
				tui.sendKeys("Enter");
				await tui.waitFor("continuing", 30_000);
				expect(s.fake.requests).toHaveLength(3);
				expect(foldedCodes(s.fake.request(-1)).length).toBeGreaterThan(0);
				tui.type("/quit");
				tui.sendKeys("Enter");
				await tui.waitForExit();
			},
			TIMEOUT,
		);
	});
});
