// The wire watchdog and fold cost accounting, driven by the fake's usage reports on real Pi.
import { describe, expect, test } from "bun:test";
import { bigOutputCommand, ensureBundle, foldEvents, foldedCodes, scenarioPool } from "./cf.ts";
import {
	bash,
	call,
	expectSuccess,
	forEachPiVersion,
	type RecordedRequest,
	replySequence,
	runPrint,
	startRpc,
	text,
	toolCalls,
	type UsageHook,
} from "./harness/index.ts";

const TIMEOUT = 120_000;
const bundle = ensureBundle();
const scenario = scenarioPool();
const OFF_WIRE = "the rewrite never reached the wire";

/** A usage hook that pretends the first fold never reached the provider: the old prompt is read back whole. */
function pretendOffWire(): UsageHook {
	const seen = new Set<string>();
	let previousTotal = 0;
	return ({ req, computed }) => {
		const codes = foldedCodes(req);
		const fresh = codes.some((c) => !seen.has(c));
		for (const c of codes) seen.add(c);
		const total = computed.input + computed.cacheRead + computed.cacheWrite;
		let patch: { cacheRead: number; cacheWrite: number; input: number } | undefined;
		if (fresh && previousTotal > 0) {
			// What a provider fed the original history would report: the whole old prompt from cache.
			patch = { cacheRead: previousTotal, cacheWrite: Math.max(0, total - previousTotal) + 2000, input: 0 };
		}
		previousTotal = patch ? patch.cacheRead + patch.cacheWrite : total;
		return patch;
	};
}

forEachPiVersion((version) => {
	describe(`pi ${version}: wire watchdog`, () => {
		test(
			"a fold whose rewrite never reached the wire is reported once, on stderr, and flagged",
			async () => {
				const replies = [];
				for (let i = 0; i < 16; i++) replies.push(bash(bigOutputCommand(`w${i}`, 2500), `call_w${i}`));
				replies.push(text("done"));
				const s = await scenario({
					fake: { script: replySequence(replies), usage: pretendOffWire() },
					model: { contextWindow: 40_000 },
					compaction: { enabled: false },
				});
				const r = expectSuccess(await runPrint({ version, sandbox: s.sandbox, prompt: "go", extensions: [bundle] }));
				expect(foldEvents(s.fake.requests).length).toBeGreaterThan(0);
				expect(r.stderr.split("\n").filter((l) => l.includes(OFF_WIRE))).toHaveLength(1);
				// Interactive surfaces: the footer flag and the status flag (over RPC, as Pi's UI events).
				s.fake.setScript(replySequence([text("again")]));
				const rpc = await startRpc({ version, sandbox: s.sandbox, extensions: [bundle], continue: true });
				s.defer(() => rpc.close());
				await rpc.promptAndWait("once more");
				const footers = rpc.uiRequests.filter((q) => q.method === "setStatus").map((q) => String(q.statusText ?? ""));
				expect(footers.at(-1)).toContain("⚠ fold not on wire");
				await rpc.prompt("/context-fold status");
				const notes = await rpc.waitFor(
					(e) =>
						e.type === "extension_ui_request" &&
						e.method === "notify" &&
						String(e.message).includes("context-fold status"),
				);
				expect(String(notes.message)).toContain("⚠ a fold was committed but never reached the provider");
			},
			TIMEOUT,
		);

		test(
			"folds on consecutive requests that did reach the wire do not cry wolf",
			async () => {
				// Two ~12k-token results per turn on a 40k window: over the budget right after a fold.
				const replies = [];
				for (let i = 0; i < 6; i++) {
					replies.push(
						toolCalls([
							call("bash", { command: bigOutputCommand(`x${i}a`, 11_000) }, `call_x${i}a`),
							call("bash", { command: bigOutputCommand(`x${i}b`, 11_000) }, `call_x${i}b`),
						]),
					);
				}
				replies.push(text("done"));
				const s = await scenario({
					fake: { script: replySequence(replies) },
					model: { contextWindow: 60_000 },
					compaction: { enabled: false },
					env: { CONTEXTFOLD_TAIL: "1000" },
				});
				const r = expectSuccess(await runPrint({ version, sandbox: s.sandbox, prompt: "go", extensions: [bundle] }));
				const events = foldEvents(s.fake.requests);
				const consecutive = events.filter((e, k) => k > 0 && e - (events[k - 1] as number) === 1);
				expect(consecutive.length).toBeGreaterThan(0);
				expect(r.stderr).not.toContain(OFF_WIRE);
				// Every fold's rewrite shows up as a cache miss on the request that carried it.
				for (const e of events) {
					const req = s.fake.requests[e] as RecordedRequest;
					const prev = s.fake.requests[e - 1] as RecordedRequest;
					const prevTotal = (prev.reportedUsage?.cacheRead ?? 0) + (prev.reportedUsage?.cacheWrite ?? 0);
					expect(req.reportedUsage?.cacheRead ?? 0).toBeLessThan(prevTotal * 0.98);
				}
			},
			TIMEOUT,
		);
	});
});
