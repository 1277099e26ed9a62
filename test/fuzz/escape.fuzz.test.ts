/**
 * Escaping of echoed text, as a property. Whatever a model passes to recall_folded or unfold, and
 * whatever a person passes to `context-fold recall` (codes, grep=, lines=, search=, options; ANSI
 * escapes, BEL, backspace, DEL, CR, NUL, C1 controls, line separators, line breaks), an answer quotes
 * it back escaped: no control character reaches the answer, and a line break in an argument never
 * adds a line. The originals hold no control characters and no "_", so any raw control character in
 * an answer could only be an echo, and an argument with its controls replaced (by a no-break space where trim()
 * would drop them, else "_") must give an answer with as many lines. Recalled bytes themselves are never escaped (test/store/recall.test.ts).
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import fc from "fast-check";
import { registerTools } from "../../src/adapters/pi/tools.ts";
import { CONTROL_CHAR } from "../../src/core/escape.ts";
import { addRecord, emptyIndex, FOLD_STATE_VERSION, type MaskedBlock } from "../../src/core/layers.ts";
import { Ledger } from "../../src/store/ledger.ts";
import { memIo, runCli } from "../cli/helpers.ts";
import { params, RUNS, report, TIMEOUT } from "./config.ts";
import { sha } from "./oracles.ts";

const dir = mkdtempSync(join(tmpdir(), "cf-fuzz-escape-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ORIGINAL = Array.from(
	{ length: 40 },
	(_, i) => `line ${i + 1} of the build: ${i % 7 === 0 ? "error" : "ok"}`,
).join("\n");
const CODE = "be11ed";
const block: MaskedBlock = {
	code: CODE,
	entryId: "t1",
	blockIndex: 0,
	kind: "toolResult",
	toolName: "bash",
	sha256: sha(ORIGINAL),
	chars: ORIGINAL.length,
	bytes: Buffer.byteLength(ORIGINAL),
	lines: 40,
	tokens: Math.ceil(ORIGINAL.length / 4),
	digest: `{#${CODE} FOLDED} bash`,
};
const layer = {
	type: "layer" as const,
	v: FOLD_STATE_VERSION,
	seq: 1,
	reason: "threshold" as const,
	lastResponseAt: 0,
	usageBefore: 0,
	usageAfter: 0,
	blocks: [block],
};
const session = join(dir, "s.jsonl");
writeFileSync(
	session,
	`${[
		{ type: "session", version: 3, id: "e5ca9e00-0000-4000-8000-000000000001", timestamp: "t", cwd: dir },
		{
			type: "message",
			id: "t1",
			parentId: null,
			timestamp: "2025-01-01T00:00:00Z",
			message: { role: "toolResult", toolCallId: "c1", toolName: "bash", content: [{ type: "text", text: ORIGINAL }] },
		},
		{ type: "custom", customType: "context-fold", id: "cf1", parentId: "t1", timestamp: "t", data: layer },
	]
		.map((e) => JSON.stringify(e))
		.join("\n")}\n`,
);
const index = emptyIndex();
addRecord(index, layer);
const ledger = new Ledger(session);

interface Tool {
	execute(id: string, params: Record<string, string>): Promise<{ content: Array<{ text: string }> }>;
}
const tools = new Map<string, Tool>();
registerTools({ registerTool: (t: Tool & { name: string }) => tools.set(t.name, t) } as unknown as ExtensionAPI, {
	sources: () => ({ index, ledger }),
	recallTokens: () => 4000,
	commitUnfold: () => {},
});

const CONTROLS = [
	"\u001b[31m",
	"\u001b]0;title\u0007",
	"\u0007",
	"\b",
	"\u007f",
	"\r",
	"\n",
	"\u0000",
	"\u009b2J",
	"\u2028",
	"\t",
];
/** A control character other than a line break (line breaks are checked by counting lines). */
const rawControl = (s: string) => CONTROL_CHAR.test(s.replace(/\n/g, ""));
const CONTROLS_G = new RegExp(CONTROL_CHAR.source, "g");
/** Controls that trim() removes: replaced by a no-break space (also trimmed, and in no original), so a sanitized argument parses the same way. */
const TRIMMED = /[\t\n\v\f\r\u2028\u2029]/g;

/** An argument: pieces of text (printable, or "be11ed"/"1-3"/"error" so some requests succeed) and controls. */
const arg = fc
	.array(
		fc.oneof(
			fc.constantFrom(...CONTROLS),
			fc.constantFrom(CODE, "1-3", "7", "error", "line 8", "-", "--grep"),
			fc.string({ maxLength: 12 }).map((s) => s.replace(/_/g, "x")),
		),
		{ minLength: 1, maxLength: 6 },
	)
	.map((parts) => parts.join(""))
	.filter((s) => CONTROL_CHAR.test(s));

type Field = "code" | "grep" | "lines" | "search";
const request = fc.record({
	field: fc.constantFrom<Field>("code", "grep", "lines", "search"),
	value: arg,
});

function toolParams(field: Field, value: string): Record<string, string> {
	if (field === "code" || field === "search") return { [field]: value };
	return { code: CODE, [field]: value };
}

function cliArgs(field: Field, value: string): string[] {
	if (field === "code") return ["recall", session, value];
	if (field === "search") return ["recall", session, "--search", value];
	return ["recall", session, CODE, `--${field}`, value];
}

const lineCount = (s: string) => s.split("\n").length;
const sanitized = (s: string) => s.replace(TRIMMED, "\u00a0").replace(CONTROLS_G, "_");
/** grep= and search= refuse a line break before echoing anything: such an answer is one line. */
const refusesBreak = (field: Field, value: string) => (field === "grep" || field === "search") && value.includes("\n");

function expectEscaped(answer: string, same: string, what: string): void {
	if (rawControl(answer)) throw new Error(`${what}: a raw control character in ${JSON.stringify(answer)}`);
	if (lineCount(answer) !== lineCount(same))
		throw new Error(`${what}: an argument added lines: ${JSON.stringify(answer)} vs ${JSON.stringify(same)}`);
}

describe("fuzz: escaping of echoed text", () => {
	test(
		"recall_folded and unfold quote every argument escaped, on one line",
		async () => {
			let cases = 0;
			await fc.assert(
				fc.asyncProperty(request, async ({ field, value }) => {
					const recall = tools.get("recall_folded") as Tool;
					const got = (await recall.execute("r", toolParams(field, value))).content[0]?.text ?? "";
					const same = refusesBreak(field, value)
						? "one line"
						: ((await recall.execute("r", toolParams(field, sanitized(value)))).content[0]?.text ?? "");
					expectEscaped(got, same, `recall_folded ${field}=`);
					if (field === "code") {
						const unfold = tools.get("unfold") as Tool;
						const u = (await unfold.execute("u", { code: value })).content[0]?.text ?? "";
						const uSame = (await unfold.execute("u", { code: sanitized(value) })).content[0]?.text ?? "";
						expectEscaped(u, uSame, "unfold code=");
					}
					cases++;
				}),
				params(),
			);
			report("escaping (tools)", { cases });
		},
		TIMEOUT,
	);

	test(
		"context-fold recall quotes every argument escaped, on stdout and stderr",
		async () => {
			let cases = 0;
			const io = () => memIo({ cwd: dir, env: { HOME: dir, PI_CODING_AGENT_DIR: join(dir, "agent") } });
			await fc.assert(
				fc.asyncProperty(request, async ({ field, value }) => {
					const got = await runCli(cliArgs(field, value), io());
					const same = refusesBreak(field, value)
						? { code: 2, stdout: "", stderr: "one line\n" }
						: await runCli(cliArgs(field, sanitized(value)), io());
					expect(got.code).toBe(same.code);
					// A usage error (exit 2) prints our usage text after its one-line message: judge the message.
					const message = (r: { code: number; stderr: string }) =>
						r.code === 2 ? `${r.stderr.split("\n")[0]}\n` : r.stderr;
					expectEscaped(got.stdout, same.stdout, `context-fold recall (stdout) ${field}`);
					expectEscaped(message(got), message(same), `context-fold recall (stderr) ${field}`);
					cases++;
				}),
				// The CLI loads the session for every run: a tenth of the cases keeps the suite quick.
				params(Math.max(1, Math.floor(RUNS / 10))),
			);
			report("escaping (CLI)", { cases });
		},
		TIMEOUT,
	);
});
