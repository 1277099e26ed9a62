// The packed tarball installed the way users install it: `npm pack`, unpacked, then real Pi's own
// `pi install` into an isolated agent directory, on Pi 0.80.6 and 1.6.0. The extension must then be
// active in a plain `pi -p` (no -e): its tools reach the model. And the CLI from the same tarball
// runs through npm's bin on Node 22 (`npx context-fold`).
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { ensureCli } from "../cli/build.ts";
import { ensureBundle, REPO } from "./cf.ts";
import { expectSuccess, forEachPiVersion, runPrint, type Scenario, startScenario, text } from "./harness/index.ts";
import { NODE_BIN, piEnv } from "./harness/pi-env.ts";
import { runToExit } from "./harness/process.ts";

const TIMEOUT = 120_000;
let work = "";
let packageDir = "";

beforeAll(() => {
	ensureBundle();
	ensureCli();
	work = mkdtempSync(join(tmpdir(), "cf-install-"));
	const r = spawnSync("npm", ["pack", "--ignore-scripts", "--pack-destination", work], { cwd: REPO, encoding: "utf8" });
	if (r.status !== 0) throw new Error(`npm pack failed: ${r.stderr}`);
	const tarball = readdirSync(work).find((f) => f.endsWith(".tgz"));
	if (tarball === undefined) throw new Error(`npm pack wrote no tarball into ${work}`);
	execFileSync("tar", ["xzf", join(work, tarball), "-C", work]);
	packageDir = join(work, "package");
}, 60_000);

afterAll(() => rmSync(work, { recursive: true, force: true }));

const scenarios: Scenario[] = [];
afterEach(async () => {
	for (const s of scenarios.splice(0)) await s.dispose();
});

test("the unpacked tarball is exactly the package: no sources, no node_modules", () => {
	expect(readdirSync(packageDir).sort()).toEqual(["CHANGELOG.md", "LICENSE", "README.md", "dist", "package.json"]);
	expect(readdirSync(join(packageDir, "dist")).sort()).toEqual(["cli.js", "index.js"]);
});

test("npx context-fold runs the packed CLI on Node 22, with nothing else installed", () => {
	const project = join(work, "project");
	mkdirSync(project);
	writeFileSync(join(project, "package.json"), '{"name":"p","version":"1.0.0","private":true}');
	const tarball = readdirSync(work).find((f) => f.endsWith(".tgz")) as string;
	const npm = (args: string[]) =>
		execFileSync("npm", args, {
			cwd: project,
			encoding: "utf8",
			// Node 22 first on PATH: the bin's `#!/usr/bin/env node` must find it, as on a user's machine.
			env: { ...process.env, PATH: `${dirname(NODE_BIN)}:${process.env.PATH}`, npm_config_update_notifier: "false" },
		});
	npm(["install", "--offline", "--ignore-scripts", "--no-audit", "--no-fund", join(work, tarball)]);
	expect(readdirSync(join(project, "node_modules")).filter((n) => !n.startsWith("."))).toEqual(["context-fold"]);
	const version = JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")).version;
	expect(npm(["exec", "--offline", "--", "context-fold", "--version"]).trim()).toBe(version);
	const sessions = JSON.parse(
		npm(["exec", "--offline", "--", "context-fold", "sessions", "--json", "--session-dir", project]),
	);
	expect(sessions).toMatchObject({ schema: "context-fold/sessions@1", total: 0 });
}, 60_000);

forEachPiVersion((version) => {
	describe(`pi ${version}: pi install of the packed package`, () => {
		test(
			"installs into the agent's settings, and a plain run has the extension active",
			async () => {
				const s = await startScenario({ fake: { script: () => text("ok") } });
				scenarios.push(s);
				const env = piEnv(s.sandbox);
				const install = await runToExit(version, ["install", packageDir], {
					cwd: s.sandbox.cwd,
					env,
					timeoutMs: 60_000,
				});
				expectSuccess(install);
				const settings = JSON.parse(readFileSync(join(s.sandbox.agentDir, "settings.json"), "utf8")) as {
					packages?: Array<string | { source: string }>;
				};
				const sources = (settings.packages ?? []).map((p) => (typeof p === "string" ? p : p.source));
				expect(sources).toHaveLength(1);
				expect(sources[0]).toMatch(/^(\.\.\/)+.*cf-install-\w+\/package$/);
				const list = expectSuccess(await runToExit(version, ["list"], { cwd: s.sandbox.cwd, env, timeoutMs: 60_000 }));
				// Pi writes the path relative to the agent directory and lists it with its resolved location.
				expect(list.stdout).toContain(`User packages:\n  ${sources[0]}\n    ${packageDir}\n`);
				expectSuccess(await runPrint({ version, sandbox: s.sandbox, prompt: "hello" }));
				const tools = (s.fake.turnRequests()[0]?.body.tools ?? []).map((t) => t.function.name);
				expect(tools).toContain("recall_folded");
				expect(tools).toContain("unfold");
			},
			TIMEOUT,
		);
	});
});
