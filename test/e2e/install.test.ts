// Every install form the README documents, done the way a user does it, with real Pi 0.80.6 and 1.6.0
// in an isolated agent directory:
//   - the `npm pack` tarball, unpacked into a directory named context-fold: `pi install <dir>`, `pi -e <dir>`;
//   - a built clone: `pi install <clone>`, `pi -e <clone>` (its bundle built by the `prepare` script);
//   - a git source: `pi install git:host/you/context-fold`, cloned from a local repository (git's
//     `url.<local>.insteadOf`), built by `prepare` during the production `npm install` Pi runs in its clone;
//   - an npm source as it will be once published: `npm:context-fold` in the settings, with the package
//     already where Pi's npm install would put it (the registry does not have it yet).
// In each, a plain `pi -p` (no -e unless the form is -e) has the extension active: its tools reach the
// model. The TUI's [Extensions] list names it `context-fold` (the git source by its repository path).
// And the CLI from the same tarball runs through npm's bin on Node 22 (`npx context-fold`).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { execFileSync, spawnSync } from "node:child_process";
import {
	cpSync,
	existsSync,
	mkdirSync,
	mkdtempSync,
	readdirSync,
	readFileSync,
	rmSync,
	symlinkSync,
	writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { ensureCli } from "../cli/build.ts";
import { userNpmConfig } from "../helpers/npm.ts";
import { ensureBundle, REPO } from "./cf.ts";
import {
	expectSuccess,
	forEachPiVersion,
	type PiVersion,
	runPrint,
	type Scenario,
	startScenario,
	startTui,
	text,
	tmuxSkipAllowed,
} from "./harness/index.ts";
import { NODE_BIN, piEnv } from "./harness/pi-env.ts";
import { runToExit } from "./harness/process.ts";

const TIMEOUT = 120_000;
/** What the git source is called; git rewrites it to the local repository (see gitEnv). */
const GIT_SOURCE = "git:git.example.invalid/you/context-fold";
const GIT_URL = "https://git.example.invalid/you/context-fold";

let work = "";
let tarball = "";
/** The tarball unpacked as the README says: into a directory named context-fold. */
let unpacked = "";
/** The local repository a git install clones from (the working tree's files, committed). */
let origin = "";
/** A clone of it, built by its own `prepare` script. */
let clone = "";

const git = (cwd: string, ...args: string[]) =>
	execFileSync("git", ["-c", "user.name=test", "-c", "user.email=test@example.invalid", ...args], {
		cwd,
		encoding: "utf8",
		stdio: ["ignore", "pipe", "pipe"],
	});

beforeAll(() => {
	ensureBundle();
	ensureCli();
	work = mkdtempSync(join(tmpdir(), "cf-install-"));
	const r = spawnSync("npm", ["pack", "--ignore-scripts", "--pack-destination", work], { cwd: REPO, encoding: "utf8" });
	if (r.status !== 0) throw new Error(`npm pack failed: ${r.stderr}`);
	const packed = readdirSync(work).find((f) => f.endsWith(".tgz"));
	if (packed === undefined) throw new Error(`npm pack wrote no tarball into ${work}`);
	tarball = join(work, packed);
	unpacked = join(work, "unpacked/context-fold");
	mkdirSync(unpacked, { recursive: true });
	execFileSync("tar", ["xzf", tarball, "-C", unpacked, "--strip-components=1"]);

	// The repository as a contributor would push it: every file git tracks or would track, committed.
	origin = join(work, "origin/context-fold");
	const files = git(REPO, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
		.split("\0")
		.filter((f) => f !== "" && existsSync(join(REPO, f)));
	for (const f of files) cpSync(join(REPO, f), join(origin, f), { recursive: true });
	git(origin, "init", "-q", "-b", "main");
	git(origin, "add", "-A");
	git(origin, "commit", "-q", "-m", "context-fold");

	// A clone with its development install (node_modules), built by `prepare` as `npm install` runs it.
	clone = join(work, "clone/context-fold");
	mkdirSync(dirname(clone), { recursive: true });
	git(dirname(clone), "clone", "-q", origin, clone);
	symlinkSync(join(REPO, "node_modules"), join(clone, "node_modules"));
	execFileSync(NODE_BIN, ["scripts/prepare.mjs"], { cwd: clone, stdio: "pipe" });
}, 120_000);

afterAll(() => rmSync(work, { recursive: true, force: true }));

/**
 * npm as Pi runs it for a git install, configured as this machine's user has it (the sandbox's HOME
 * has no npm configuration: the registry's CA file, proxy and cache come from the user's and the global
 * npmrc), with Node 22 first on PATH. `prepare` fetches esbuild through that npm and its cache.
 */
function npmEnv(): Record<string, string> {
	return {
		PATH: `${dirname(NODE_BIN)}:${process.env.PATH}`,
		npm_config_globalconfig: userNpmConfig("globalconfig"),
		npm_config_userconfig: userNpmConfig("userconfig"),
		npm_config_cache: userNpmConfig("cache"),
		npm_config_prefer_offline: "true",
		npm_config_audit: "false",
		npm_config_fund: "false",
		npm_config_update_notifier: "false",
	};
}

/** git's own configuration in the environment: the git source's URL is fetched from the local repository. */
function gitEnv(): Record<string, string> {
	return { GIT_CONFIG_COUNT: "1", GIT_CONFIG_KEY_0: `url.${origin}.insteadOf`, GIT_CONFIG_VALUE_0: GIT_URL };
}

async function pi(version: PiVersion, s: Scenario, args: string[], env: Record<string, string> = {}) {
	return expectSuccess(
		await runToExit(version, args, { cwd: s.sandbox.cwd, env: piEnv(s.sandbox, env), timeoutMs: 90_000 }),
	);
}

/** A plain print run: the extension's tools reach the model. */
async function expectActive(version: PiVersion, s: Scenario, extensions: string[] = []): Promise<void> {
	const before = s.fake.turnRequests().length;
	expectSuccess(await runPrint({ version, sandbox: s.sandbox, prompt: "hello", extensions }));
	const tools = (s.fake.turnRequests()[before]?.body.tools ?? []).map((t) => t.function.name);
	expect(tools).toContain("recall_folded");
	expect(tools).toContain("unfold");
}

/** The TUI's [Extensions] list, as shown at start, once context-fold's footer says it is active. */
async function listedExtensions(version: PiVersion, s: Scenario, extensions: string[] = []): Promise<string> {
	const tui = await startTui({ version, sandbox: s.sandbox, extensions, width: 120, height: 40 });
	s.defer(() => tui.kill());
	const screen = await tui.waitFor(/⧉ context-fold/, 30_000);
	const lines = screen.split("\n");
	const at = lines.findIndex((l) => l.trim() === "[Extensions]");
	if (at < 0) throw new Error(`no [Extensions] section on screen:\n${screen}`);
	tui.kill();
	return (lines[at + 1] ?? "").trim();
}

/** The package sources in the agent's settings.json. */
function installedSources(s: Scenario): string[] {
	const settings = JSON.parse(readFileSync(join(s.sandbox.agentDir, "settings.json"), "utf8")) as {
		packages?: Array<string | { source: string }>;
	};
	return (settings.packages ?? []).map((p) => (typeof p === "string" ? p : p.source));
}

test("the unpacked tarball is exactly the package: the entry, the bundles, the documents", () => {
	expect(readdirSync(unpacked).sort()).toEqual([
		"CHANGELOG.md",
		"LICENSE",
		"README.md",
		"dist",
		"index.js",
		"package.json",
	]);
	expect(readdirSync(join(unpacked, "dist")).sort()).toEqual(["cli.js", "index.js"]);
});

test("prepare builds in a clone the very bundle `npm run build` builds", () => {
	expect(readFileSync(join(clone, "dist/index.js"))).toEqual(readFileSync(join(REPO, "dist/index.js")));
	// The clone's tree is untouched by the build: dist/ is ignored.
	expect(git(clone, "status", "--porcelain")).toBe("");
});

test("the packed CLI runs on Node 22 through npm's bin (npx context-fold) and installed with npm install -g", () => {
	const project = join(work, "project");
	mkdirSync(project);
	writeFileSync(join(project, "package.json"), '{"name":"p","version":"1.0.0","private":true}');
	const npm = (args: string[]) =>
		execFileSync("npm", args, {
			cwd: project,
			encoding: "utf8",
			// Node 22 first on PATH: the bin's `#!/usr/bin/env node` must find it, as on a user's machine.
			env: { ...process.env, PATH: `${dirname(NODE_BIN)}:${process.env.PATH}`, npm_config_update_notifier: "false" },
		});
	npm(["install", "--offline", "--ignore-scripts", "--no-audit", "--no-fund", tarball]);
	expect(readdirSync(join(project, "node_modules")).filter((n) => !n.startsWith("."))).toEqual(["context-fold"]);
	const version = JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")).version;
	expect(npm(["exec", "--offline", "--", "context-fold", "--version"]).trim()).toBe(version);
	const sessions = JSON.parse(
		npm(["exec", "--offline", "--", "context-fold", "sessions", "--json", "--session-dir", project]),
	);
	expect(sessions).toMatchObject({ schema: "context-fold/sessions@1", total: 0 });
	// As a command on PATH: `npm install -g` of the tarball (into a private prefix here).
	const prefix = join(work, "global");
	npm(["install", "-g", "--prefix", prefix, "--offline", "--ignore-scripts", "--no-audit", "--no-fund", tarball]);
	const env = { ...process.env, PATH: `${dirname(NODE_BIN)}:${process.env.PATH}` };
	expect(execFileSync(join(prefix, "bin/context-fold"), ["--version"], { encoding: "utf8", env }).trim()).toBe(version);
}, 60_000);

interface InstallForm {
	name: string;
	/** Installs into the scenario's agent directory; returns the `-e` paths a run needs (none if installed). */
	setup(version: PiVersion, s: Scenario): Promise<string[]>;
	/** What the TUI's [Extensions] list must call it. */
	label: string;
}

const FORMS: InstallForm[] = [
	{
		name: "the unpacked tarball, installed: pi install <dir>",
		label: "context-fold",
		async setup(version, s) {
			await pi(version, s, ["install", unpacked]);
			const sources = installedSources(s);
			expect(sources).toHaveLength(1);
			expect(sources[0]).toMatch(/^(\.\.\/)+.*cf-install-\w+\/unpacked\/context-fold$/);
			const list = await pi(version, s, ["list"]);
			// Pi writes the path relative to the agent directory and lists it with its resolved location.
			expect(list.stdout).toContain(`User packages:\n  ${sources[0]}\n    ${unpacked}\n`);
			return [];
		},
	},
	{
		name: "the unpacked tarball, one session: pi -e <dir>",
		label: "context-fold",
		setup: async () => [unpacked],
	},
	{
		name: "a built clone, installed: pi install <clone>",
		label: "context-fold",
		async setup(version, s) {
			await pi(version, s, ["install", clone]);
			expect(installedSources(s)).toHaveLength(1);
			return [];
		},
	},
	{
		name: "a built clone, one session: pi -e <clone>",
		label: "context-fold",
		setup: async () => [clone],
	},
	{
		name: `a git source: pi install ${GIT_SOURCE}`,
		// Pi names a git package by its repository path.
		label: "you/context-fold",
		async setup(version, s) {
			await pi(version, s, ["install", GIT_SOURCE], { ...npmEnv(), ...gitEnv() });
			expect(installedSources(s)).toEqual([GIT_SOURCE]);
			const checkout = join(s.sandbox.agentDir, "git/git.example.invalid/you/context-fold");
			// A production install: no development dependency came along, and `prepare` built the bundle.
			expect(existsSync(join(checkout, "node_modules/esbuild"))).toBe(false);
			expect(readFileSync(join(checkout, "dist/index.js"))).toEqual(readFileSync(join(REPO, "dist/index.js")));
			return [];
		},
	},
	{
		name: "an npm source, as once published: npm:context-fold",
		label: "context-fold",
		async setup(_version, s) {
			// The registry does not have it yet: the package is put where Pi's npm install would put it.
			cpSync(unpacked, join(s.sandbox.agentDir, "npm/node_modules/context-fold"), { recursive: true });
			s.sandbox.updateSettings({ packages: ["npm:context-fold"] });
			return [];
		},
	},
];

forEachPiVersion((version) => {
	for (const form of FORMS) {
		describe(`pi ${version}: ${form.name}`, () => {
			let s: Scenario;
			let extensions: string[] = [];
			beforeAll(async () => {
				// quietStartup off: Pi 1.6.0 lists the loaded extensions at start only then (0.80.6 by default).
				s = await startScenario({ fake: { script: () => text("ok") }, settings: { quietStartup: false } });
				extensions = await form.setup(version, s);
			}, TIMEOUT);
			afterAll(async () => {
				await s?.dispose();
			});

			test("a plain run has the extension active: its tools reach the model", async () => {
				await expectActive(version, s, extensions);
			});

			test.skipIf(tmuxSkipAllowed())(
				`the TUI's [Extensions] list names it ${form.label}`,
				async () => {
					expect(await listedExtensions(version, s, extensions)).toBe(form.label);
				},
				TIMEOUT,
			);
		});
	}
});
