// The marker guard on real Pi (0.80.6 and 1.6.0): after a fold, a model that copies a digest of this
// session into a write is blocked with a reason that names recall_folded; a marker whose code is not
// this session's passes; recall_folded itself takes a marker; on 1.6.0 a write another tool makes
// (ctx.executeTool, parentToolCallId) is blocked the same way.
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { renderGuardReason } from "../../src/adapters/pi/marker-guard.ts";
import { bigOutputCommand, contentText, ensureBundle, lastToolText, scenarioPool } from "./cf.ts";
import {
	bash,
	DEFAULT_SUMMARY,
	expectSuccess,
	forEachPiVersion,
	httpError,
	type RecordedRequest,
	type Reply,
	runPrint,
	type Scenario,
	text,
	toolCall,
} from "./harness/index.ts";

const TIMEOUT = 120_000;
const bundle = ensureBundle();
const scenario = scenarioPool();
const NESTED = join(import.meta.dir, "fixtures/nested-write.ts");
const FOREIGN_CODE = "0f0f0f";
const MARKER = /^\{#([0-9a-f]{6,64}) FOLDED\}/;

/** The first folded tool result of a request: its code and the digest text the model saw. */
function firstDigest(req: RecordedRequest): { code: string; digest: string } | undefined {
	for (const m of req.body.messages) {
		if (m.role !== "tool") continue;
		const t = contentText(m.content);
		const hit = MARKER.exec(t);
		if (hit) return { code: hit[1] as string, digest: t };
	}
	return undefined;
}

/**
 * Bulk bash output until the first fold reaches the model, then the given steps, each built from
 * the digest seen at the fold.
 */
function afterFold(steps: Array<(seen: { code: string; digest: string }) => Reply>) {
	let bulk = 0;
	let seen: { code: string; digest: string } | undefined;
	let next = 0;
	return (req: RecordedRequest): Reply => {
		if (req.isSummaryRequest) return text(DEFAULT_SUMMARY);
		seen ??= firstDigest(req);
		if (seen === undefined) {
			if (bulk >= 25) return httpError(500, "no fold after 25 outputs");
			bulk += 1;
			return bash(bigOutputCommand(`g${bulk}`, 2500), `call_g${bulk}`);
		}
		const step = steps[next++];
		return step === undefined ? text("done") : step(seen);
	};
}

function toolResultEntry(s: Scenario, callId: string): { text: string; isError: boolean } {
	const e = s.sandbox
		.readSession()
		.find((x) => x.type === "message" && x.message?.role === "toolResult" && x.message.toolCallId === callId);
	if (!e?.message) throw new Error(`no tool result for ${callId}`);
	return { text: contentText(e.message.content as never), isError: e.message.isError === true };
}

function codesOf(s: Scenario): Set<string> {
	const codes = new Set<string>();
	for (const e of s.sandbox.readSession()) {
		if (e.type !== "custom" || e.customType !== "context-fold") continue;
		for (const b of (e.data as { blocks?: Array<{ code: string }> }).blocks ?? []) codes.add(b.code);
	}
	return codes;
}

/** A scenario whose fake folds first (small window), then answers with `steps`. */
function guardScenario(steps: Parameters<typeof afterFold>[0]): Promise<Scenario> {
	return scenario({
		fake: { script: afterFold(steps) },
		model: { contextWindow: 40_000 },
		compaction: { enabled: false },
	});
}

forEachPiVersion((version) => {
	describe(`pi ${version}: marker guard`, () => {
		test(
			"a write carrying a digest of this session is blocked with the reason; a foreign marker passes; recall takes a marker",
			async () => {
				let code = "";
				const s = await guardScenario([
					(seen) => {
						code = seen.code;
						return toolCall("write", { path: "copy.txt", content: seen.digest }, "call_copy");
					},
					() =>
						toolCall("write", { path: "other.txt", content: `{#${FOREIGN_CODE} FOLDED} not ours\n` }, "call_foreign"),
					(seen) => toolCall("recall_folded", { code: `{#${seen.code} FOLDED}`, lines: "1-2" }, "call_recall"),
				]);
				expectSuccess(await runPrint({ version, sandbox: s.sandbox, prompt: "build", extensions: [bundle] }));
				expect(code).toMatch(/^[0-9a-f]{6,}$/);

				const blocked = toolResultEntry(s, "call_copy");
				expect(blocked).toEqual({ text: renderGuardReason([code]), isError: true });
				expect(blocked.text).toContain(`recall_folded code=${code}`);
				expect(existsSync(join(s.sandbox.cwd, "copy.txt"))).toBe(false);

				expect(codesOf(s).has(FOREIGN_CODE)).toBe(false);
				expect(toolResultEntry(s, "call_foreign").isError).toBe(false);
				expect(readFileSync(join(s.sandbox.cwd, "other.txt"), "utf8")).toBe(`{#${FOREIGN_CODE} FOLDED} not ours\n`);

				const recall = toolResultEntry(s, "call_recall");
				expect(recall.isError).toBe(false);
				expect(recall.text.startsWith(`{#${code}} bash`)).toBe(true);
				// The model saw the block reason as the write's result.
				const afterCopy = s.fake.requests.find((r) => r.body.messages.some((m) => m.tool_call_id === "call_copy"));
				expect(afterCopy && lastToolText(afterCopy)).toBe(renderGuardReason([code]));
			},
			TIMEOUT,
		);

		if (version === "1.6.0") {
			test(
				"a nested write (another tool's ctx.executeTool) carrying a digest is blocked too",
				async () => {
					let code = "";
					const s = await guardScenario([
						(seen) => {
							code = seen.code;
							const contentB64 = Buffer.from(seen.digest, "utf8").toString("base64");
							return toolCall("nested_write", { path: "nested.txt", contentB64 }, "call_nested");
						},
						() =>
							toolCall(
								"nested_write",
								{ path: "plain.txt", contentB64: Buffer.from("plain text\n").toString("base64") },
								"call_plain",
							),
					]);
					expectSuccess(await runPrint({ version, sandbox: s.sandbox, prompt: "build", extensions: [bundle, NESTED] }));
					expect(toolResultEntry(s, "call_nested").text).toBe(`nested: isError=true ${renderGuardReason([code])}`);
					expect(existsSync(join(s.sandbox.cwd, "nested.txt"))).toBe(false);
					expect(toolResultEntry(s, "call_plain").text).toStartWith("nested: isError=false");
					expect(readFileSync(join(s.sandbox.cwd, "plain.txt"), "utf8")).toBe("plain text\n");
				},
				TIMEOUT,
			);
		}
	});
});
