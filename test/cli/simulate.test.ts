// `context-fold simulate` on generated sessions, through main(argv, io): the summary first and a
// chart, the table on request; each request priced as its model (pi-ai's catalog, models.json or a
// preset, said which) and checked against the costs the session states; and a baseline that cannot
// have happened in the window flagged in text, JSON and HTML.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PRICE_PRESETS } from "../../src/core/accounting.ts";
import { modelCatalog, unpriced } from "../../src/core/model-catalog.ts";
import { agentDir, memIo, runCli } from "./helpers.ts";
import { type ToolLoop, toolLoopSession } from "./simulate-fixtures.ts";

const sandbox = agentDir();
afterAll(() => sandbox.cleanup());
const io = () => memIo({ env: sandbox.env });
/**
 * The fixed ladder at its default points (the test seam): these chart tests need fold events at known
 * requests in a short session, which the priced rule (rightly) does not make in 13 requests a minute apart.
 */
const fixedIo = () => memIo({ env: { ...sandbox.env, CONTEXTFOLD_TEST_FIXED_FOLDS: "1" } });
const OPUS = { input: 5, output: 25, cacheRead: 0.5, cacheWrite: 6.25 };

let files = 0;
function session(o: ToolLoop = {}): string {
	const path = join(sandbox.root, `s${++files}.jsonl`);
	writeFileSync(path, toolLoopSession(o));
	return path;
}

async function json(argv: string[], through = io) {
	const r = await runCli([...argv, "--json"], through());
	expect(r.code).toBe(0);
	return JSON.parse(r.stdout).sessions[0];
}

describe("simulate: summary first, a chart, the table on request", () => {
	const path = session({ statedPrices: OPUS });

	test("the summary comes first, then the chart; no per-request table unless --table", async () => {
		const r = await runCli(["simulate", path, "--window", "30000"], fixedIo());
		expect(r.code).toBe(0);
		const lines = r.stdout.split("\n");
		expect(lines[0]).toBe(`session 5e551000-0000-4000-8000-000000000001  ${path}`);
		expect(r.stdout).not.toMatch(/^req\s+reported/m);
		const chart = r.stdout.slice(r.stdout.indexOf("  context per request"));
		expect(r.stdout.indexOf("est. cost")).toBeLessThan(r.stdout.indexOf("  context per request"));
		expect(chart).toBe(
			[
				"  context per request (prompt tokens): . without folding, * with folding, # both",
				"   30k |",
				"       |            .",
				"       |----------..- budget",
				"       |         .",
				"       |       .# * *",
				"   15k |      #* * *",
				"       |    ##",
				"       |---#--------- fold-at",
				"       | ##",
				"       |#",
				"     0 +-------------",
				"               F FCCC",
				"        1          13",
				"        request",
				"        F fold event, C compaction (folded arm)",
				"        lines: budget 23k, fold-at 9.0k",
				"",
			].join("\n"),
		);
		// --no-table is still accepted, and is the default.
		expect((await runCli(["simulate", path, "--window", "30000", "--no-table"], fixedIo())).stdout).toBe(r.stdout);
		// The priced rule has no fixed first-fold point: no fold-at line, the legend names the budget alone.
		const priced = await runCli(["simulate", path, "--window", "30000"], io());
		expect(priced.stdout).not.toContain("fold-at");
		expect(priced.stdout).toContain("\n        lines: budget 23k\n");
		// Nothing pinned, nothing said; the test seam is not a pin either.
		expect(priced.stderr).toBe("");
		expect(r.stderr).toBe("");
	});

	test("fold points pinned by hand replay the fixed ladder, and the notice says so once", async () => {
		const env = { ...sandbox.env, CONTEXTFOLD_FOLD_STEP: "0.06" };
		const r = await runCli(["simulate", path, session({ statedPrices: OPUS }), "--window", "30000"], memIo({ env }));
		expect(r.code).toBe(0);
		expect(r.stderr).toBe(
			'fold points pinned by hand: CONTEXTFOLD_FOLD_STEP=0.06 (environment). The priced fold rule is off for this session: folds come at these fixed points, as in 0.1.0. Unset it (or choose "default" in /context-fold Settings) to return to the priced rule.\n',
		);
		// The same folds as the ladder at its default points.
		const pinned = await json(["simulate", path, "--window", "30000"], () => memIo({ env }));
		const seam = await json(["simulate", path, "--window", "30000"], fixedIo);
		expect(pinned.summary.foldEvents).toBe(seam.summary.foldEvents);
		expect(pinned.summary.foldEvents).toBeGreaterThan(0);
	});

	test("--table adds every request after the chart; with --no-table it is a usage error", async () => {
		const r = await runCli(["simulate", path, "--window", "30000", "--table"], io());
		expect(r.code).toBe(0);
		const lines = r.stdout.split("\n");
		const head = lines.findIndex((l) => /^req\s+reported\s+no fold\s+folded/.test(l));
		expect(head).toBeGreaterThan(lines.findIndex((l) => l.startsWith("        lines: budget")));
		expect(lines.slice(head + 2).filter((l) => /^\s*\d+ {2}/.test(l))).toHaveLength(13);
		const both = await runCli(["simulate", path, "--table", "--no-table"], io());
		expect(both.code).toBe(2);
		expect(both.stderr.split("\n")[0]).toBe("context-fold: --table and --no-table contradict each other");
	});

	test("--measure openai-json counts the JSON body and says so; a measure it does not know is a usage error", async () => {
		// A window this session never fills: no compaction on either measure.
		const content = await json(["simulate", path, "--window", "200000", "--overhead", "500"]);
		const body = await json(["simulate", path, "--window", "200000", "--overhead", "500", "--measure", "openai-json"]);
		expect(content.summary.overhead).toMatchObject({ tokens: 500, source: "given", measure: "content" });
		expect(body.summary.overhead).toMatchObject({ tokens: 500, source: "given", measure: "openai-json" });
		expect(content.summary.compactions).toMatchObject({ baseline: 0, baselineBy: "recorded" });
		expect(body.summary.compactions).toMatchObject({ baseline: 0, baselineBy: "pi-rule" });
		// JSON keys, tool-call ids and arguments escaped twice: every request of the body weighs more.
		expect(body.requests).toHaveLength(content.requests.length);
		body.requests.forEach((q: { baseline: { prompt: number } }, i: number) => {
			expect(q.baseline.prompt).toBeGreaterThan(content.requests[i].baseline.prompt);
		});
		const text = await runCli(["simulate", path, "--measure", "openai-json"], io());
		expect(text.stdout).toContain("measured as openai-json: chars/4 of the request body, reported back as usage");
		const bad = await runCli(["simulate", path, "--measure", "tiktoken"], io());
		expect(bad.code).toBe(2);
		expect(bad.stderr.split("\n")[0]).toBe('context-fold: --measure must be content or openai-json, got "tiktoken"');
	});

	test("--measure openai-json in a window the session fills: native Pi's summary requests without folding, counted and priced", async () => {
		const argv = ["simulate", path, "--window", "40000", "--overhead", "500", "--measure", "openai-json"];
		const body = await json([...argv, "--price", "anthropic"]);
		const b = body.summary.baseline;
		expect(body.summary.compactions).toMatchObject({ baseline: 1, baselineBy: "pi-rule", recorded: 0 });
		const at = body.requests.filter((q: { baselineCompacted: boolean }) => q.baselineCompacted);
		expect(at).toHaveLength(1);
		const sent = at[0].baselineSummaries;
		expect(sent).toHaveLength(b.summaries.requests);
		// Each as uncached input of its prompt, plus the assumed 1,500-token summary, at $3 and $15 per Mtok.
		for (const s of sent) {
			expect(s).toMatchObject({ input: s.prompt, output: 1_500 });
			expect(s.cost).toBeCloseTo((s.prompt * 3 + 1_500 * 15) / 1e6, 12);
		}
		const prompt = sent.reduce((n: number, s: { prompt: number }) => n + s.prompt, 0);
		const cost = sent.reduce((n: number, s: { cost: number }) => n + s.cost, 0);
		expect(b.summaries).toEqual({ requests: sent.length, prompt, output: 1_500 * sent.length, cost });
		// Part of the arm's totals: every request's own bill, plus the summary requests.
		const turns = body.requests.reduce((n: number, q: { baseline: { cost: number } }) => n + q.baseline.cost, 0);
		expect(b.cost).toBeCloseTo(turns + cost, 12);
		expect(body.summary.folded.summaries).toEqual({ requests: 0, prompt: 0, output: 0, cost: 0 });
		const text = (await runCli([...argv, "--price", "anthropic", "--table"], io())).stdout;
		const dollars = (n: number) => `$${n.toFixed(4)}`;
		expect(text).toMatch(new RegExp(`^ {2}summary requests +${sent.length} \\(\\${dollars(cost)}\\) +0 *$`, "m"));
		expect(text).toContain(`compaction without folding (${sent.length} summary request`);
		expect(text.replace(/\s+/g, " ")).toContain(
			`Pi's rule decides when to compact on this measure: 1 compaction (0 in the recording), each answered as native Pi answers it, with summary requests to the model: ${sent.length} request${sent.length === 1 ? "" : "s"} in all, ${prompt.toLocaleString("en-US")} prompt tokens billed as uncached input, plus 1,500 output tokens each (an assumed summary size; a real model's varies), ${dollars(cost)} of the cost without folding.`,
		);
		// Keeping the recorded compactions (the default measure), there is no such row.
		const plain = (await runCli(["simulate", path, "--window", "40000"], io())).stdout;
		expect(plain).not.toContain("summary requests");
	});

	test("the chart fits 80 columns and uses no colour, whatever the session", async () => {
		for (const [calls, axis] of [
			[1, "        1 2"],
			[3, "        1  4"],
			[200, `        1${"201".padStart(55)}`],
		] as const) {
			const r = await runCli(["simulate", session({ calls, outputChars: 3000 }), "--window", "40000"], io());
			const chart = r.stdout.slice(r.stdout.indexOf("  context per request"));
			for (const line of chart.split("\n")) expect(line.length).toBeLessThanOrEqual(80);
			expect(chart).not.toContain("\u001b");
			expect(chart.split("\n")).toContain(axis);
		}
	});

	test("--html draws the same marks as the text chart, named as the table names them", async () => {
		const html = join(sandbox.root, "page.html");
		const j = await json(["simulate", path, "--window", "30000", "--html", html], fixedIo);
		const page = readFileSync(html, "utf8");
		expect(j.summary.foldEvents).toBe(3);
		expect(j.summary.compactions.folded).toBe(3);
		expect(page.match(/<title>fold #\d+<\/title>/g)).toHaveLength(3);
		expect(page.match(/<title>compaction \(folded arm\)<\/title>/g)).toHaveLength(3);
		expect(page.match(/<title>compaction \(recorded\)<\/title>/g)).toBeNull();
		expect(page).toContain("compaction (folded arm)</span>");
		expect(page).toContain("Prices: each request's model (listed under each chart)");
	});
});

describe("simulate: each request priced as its model", () => {
	test("a claude-opus session is priced at Opus rates from the catalog, and says so", async () => {
		const path = session({ statedPrices: OPUS });
		const r = await runCli(["simulate", path], io());
		expect(r.stdout).toContain(
			"\n  prices: anthropic/claude-opus-4-5 at $5/$25/$0.50/$6.25 per Mtok in/out/read/write (pi-ai catalog)\n",
		);
		expect(r.stdout).toContain("· window 200,000 (from the pi-ai catalog)");
		const j = await json(["simulate", path]);
		expect(j.prices).toEqual([
			{
				provider: "anthropic",
				model: "claude-opus-4-5",
				prices: OPUS,
				source: { type: "catalog", match: "exact", entry: "anthropic/claude-opus-4-5" },
				requests: 13,
			},
		]);
		// Every bill at Opus rates: the cost is the tokens at those rates.
		const b = j.summary.baseline;
		expect(b.cost).toBeCloseTo((b.cacheRead * 0.5 + b.cacheWrite * 6.25 + b.input * 5 + b.output * 25) / 1e6, 10);
	});

	test("the estimate is checked against the costs the session states", async () => {
		const path = session({ statedPrices: OPUS });
		const j = await json(["simulate", path]);
		expect(j.costCheck.responses).toBe(13);
		expect(j.costCheck.recordedAtPrices).toBeCloseTo(j.costCheck.stated, 12);
		expect(j.costCheck.estimate).toBeCloseTo(j.summary.baseline.cost, 12);
		const r = await runCli(["simulate", path], io());
		const stated = `$${j.costCheck.stated.toFixed(4)}`;
		expect(r.stdout).toContain(`\n  check against the costs the session states (13 responses, ${stated}):\n`);
		expect(r.stdout).toMatch(
			/\n {4}its recorded usage at these prices \$0\.\d{4} \(0\.0%\), the estimate without folding \$0\.\d{4} \([+-]\d+\.\d%\)\n/,
		);
		// No stated cost, no check.
		const bare = await json(["simulate", session()]);
		expect(bare.costCheck).toBeNull();
		expect((await runCli(["simulate", session()], io())).stdout).not.toContain("check against");
	});

	test("--price is an explicit override for every request", async () => {
		const path = session({ statedPrices: OPUS });
		const r = await runCli(["simulate", path, "--price", "anthropic"], io());
		expect(r.stdout).toContain(
			"\n  prices: anthropic preset for every request (--price): $3/$15/$0.30/$3.75 per Mtok in/out/read/write\n",
		);
		const preset = await json(["simulate", path, "--price", "anthropic"]);
		const catalog = await json(["simulate", path]);
		expect(preset.summary.baseline.prompt).toBe(catalog.summary.baseline.prompt);
		expect(preset.summary.baseline.cost / catalog.summary.baseline.cost).toBeCloseTo(3 / 5, 10);
		// The check then shows what the preset misses.
		expect(preset.costCheck.recordedAtPrices / preset.costCheck.stated).toBeCloseTo(3 / 5, 10);
	});

	test.each([
		[
			"a custom provider serving a catalog model",
			"my-proxy",
			"claude-opus-4-5",
			"(pi-ai catalog as anthropic/claude-opus-4-5, same id)",
		],
		[
			"a dated id of a catalog family",
			"anthropic",
			"claude-opus-4-5-29990101",
			"(pi-ai catalog as anthropic/claude-opus-4-5, same family)",
		],
		["an unknown model", "acme", "acme-large", "(anthropic preset: not in the pi-ai catalog or models.json)"],
		[
			"an unknown model of an OpenAI-style provider",
			"openai",
			"gpt-from-the-future",
			"(openai preset: not in the pi-ai catalog or models.json)",
		],
	])("%s", async (_, provider, model, words) => {
		const r = await runCli(["simulate", session({ provider, model })], io());
		expect(r.code).toBe(0);
		expect(r.stdout).toContain(`\n  prices: ${provider}/${model} at `);
		expect(
			r.stdout
				.split("\n")
				.find((l) => l.startsWith("  prices: "))
				?.endsWith(words),
		).toBe(true);
	});

	test("a tiered model: its tiers are listed, and a request above a threshold is billed at that tier", async () => {
		const entry = modelCatalog().entries.find((e) => e.provider === "opencode" && e.id === "claude-sonnet-4-5");
		const tier = entry?.prices.tiers?.[0];
		expect(tier?.above).toBe(200_000);
		const r = await runCli(["simulate", session({ provider: "opencode", model: "claude-sonnet-4-5" })], io());
		expect(r.stdout).toContain(
			"\n  prices: opencode/claude-sonnet-4-5 at $3/$15/$0.30/$3.75 per Mtok in/out/read/write ($6/$22.50/$0.60/$7.50 above 200,000 tok) (pi-ai catalog)\n",
		);
	});

	test("a model the catalog lists with no price is billed at its provider's preset, saying so", async () => {
		const free = modelCatalog().entries.find((e) => unpriced(e.prices) && e.provider === "google");
		expect(free).toBeDefined();
		const name = `${free?.provider}/${free?.id}`;
		const r = await runCli(["simulate", session({ provider: free?.provider, model: free?.id })], io());
		const p = PRICE_PRESETS.gemini;
		expect(r.stdout).toContain(
			`\n  prices: ${name} at $${p.input}/$${p.output}/$${p.cacheRead}/$${p.cacheWrite} per Mtok in/out/read/write (gemini preset: the pi-ai catalog lists no price for ${name})\n`,
		);
	});

	test("models.json prices and window come before the catalog's", async () => {
		const agent = agentDir();
		try {
			mkdirSync(agent.agentDir, { recursive: true });
			writeFileSync(
				join(agent.agentDir, "models.json"),
				JSON.stringify({
					providers: {
						anthropic: {
							models: [
								{
									id: "claude-opus-4-5",
									contextWindow: 150_000,
									cost: { input: 1, output: 2, cacheRead: 0.1, cacheWrite: 1.5 },
								},
							],
						},
					},
				}),
			);
			const path = join(agent.root, "s.jsonl");
			writeFileSync(path, toolLoopSession());
			const r = await runCli(["simulate", path], memIo({ env: agent.env }));
			expect(r.stdout).toContain("· window 150,000 (from models.json)");
			expect(r.stdout).toContain(
				"\n  prices: anthropic/claude-opus-4-5 at $1/$2/$0.10/$1.50 per Mtok in/out/read/write (models.json)\n",
			);
		} finally {
			agent.cleanup();
		}
	});

	test("a session with two models lists both, most requests first", async () => {
		const text = toolLoopSession({ calls: 3 }).replace(
			/"model":"claude-opus-4-5"(?=.*"stopReason":"stop")/,
			'"model":"claude-sonnet-4-5"',
		);
		const path = join(sandbox.root, "two.jsonl");
		writeFileSync(path, text);
		const r = await runCli(["simulate", path], io());
		expect(r.stdout).toContain(
			[
				"\n  prices, per model:",
				"    anthropic/claude-opus-4-5 at $5/$25/$0.50/$6.25 per Mtok in/out/read/write (pi-ai catalog) · 3 requests",
				"    anthropic/claude-sonnet-4-5 at $3/$15/$0.30/$3.75 per Mtok in/out/read/write (pi-ai catalog) · 1 request\n",
			].join("\n"),
		);
	});
});

describe("simulate: a baseline that cannot have happened is flagged", () => {
	// Recorded in a window large enough for prompts of 60k + the loop; replayed in 64k.
	const path = session({ extraReported: 60_000 });

	test("text, JSON and HTML say the recording does not fit the window", async () => {
		const j = await json(["simulate", path, "--window", "64000"]);
		expect(j.summary.impossibleBaseline).toEqual({
			requests: 11,
			first: 2,
			peak: 85_127,
			window: 64_000,
			compactions: 0,
		});
		const r = await runCli(["simulate", path, "--window", "64000"], io());
		expect(r.stdout).toContain(
			[
				"  warning: the baseline cannot have happened in this window: the provider reported prompts of up",
				"           to 85,127 tokens in a 64,000-token window (11 requests over it, the first is request",
				'           3) with 0 compactions. It was recorded with a larger window; "no folding" below is',
				"           that recording, not Pi in this window.",
			].join("\n"),
		);
		const html = join(sandbox.root, "impossible.html");
		await runCli(["simulate", path, "--window", "64000", "--html", html], io());
		expect(readFileSync(html, "utf8")).toContain(
			'<p class="warning"><strong>Warning:</strong> the baseline cannot have happened in this window: the provider reported prompts of up to 85,127 tokens',
		);
	});

	test("a recording that fits its window is not flagged", async () => {
		const j = await json(["simulate", path]);
		expect(j.window).toBe(200_000);
		expect(j.summary.impossibleBaseline).toBeNull();
		const r = await runCli(["simulate", path], io());
		expect(r.stdout).not.toContain("warning:");
		const html = join(sandbox.root, "fits.html");
		await runCli(["simulate", path, "--html", html], io());
		expect(readFileSync(html, "utf8")).not.toContain('class="warning"');
	});
});
