// A fresh clone is complete and stays as committed. `npm install` rewrites nothing tracked (the
// lockfile is committed as npm writes it); every dependency's install script has been reviewed, so
// npm has nothing to warn about but the engine mismatch the README explains; the recorded traces are
// vendored with their origin and licence, and nothing reads them from outside the repository or skips
// without them. The whole-tree check (`git status` empty after `npm install && npm test`) is .ci/run's.
import { afterAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { gunzipSync } from "node:zlib";
import { userNpmConfig } from "../helpers/npm.ts";
import { TRACE_FILES, TRACE_FIXTURES } from "../helpers/traces.ts";

const REPO = join(import.meta.dir, "../..");
const read = (path: string) => readFileSync(join(REPO, path), "utf8");
const work = mkdtempSync(join(tmpdir(), "cf-clone-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe("npm install on a fresh clone", () => {
	test("leaves package-lock.json byte for byte as committed, with no npm configuration of the user's", () => {
		const dir = join(work, "lock");
		mkdirSync(join(dir, "home"), { recursive: true });
		for (const f of ["package.json", "package-lock.json"]) copyFileSync(join(REPO, f), join(dir, f));
		// Only PATH and an empty HOME: none of the caller's npm settings (npm test exports them) apply.
		// The user's cache serves the registry metadata npm reads; nothing is fetched (--offline).
		const r = spawnSync(
			"npm",
			["install", "--package-lock-only", "--ignore-scripts", "--offline", "--no-audit", "--no-fund"],
			{
				cwd: dir,
				encoding: "utf8",
				env: {
					PATH: process.env.PATH ?? "",
					HOME: join(dir, "home"),
					npm_config_cache: userNpmConfig("cache"),
					npm_config_update_notifier: "false",
				},
			},
		);
		expect(r.status, r.stderr).toBe(0);
		expect(readFileSync(join(dir, "package-lock.json"), "utf8")).toBe(read("package-lock.json"));
		// npm warns of nothing but engines: Pi and its dependencies want Node 22, and npm may run on an older one.
		const warnings = r.stderr.split("\n").filter((l) => l.startsWith("npm warn"));
		expect(warnings.filter((l) => !l.startsWith("npm warn EBADENGINE"))).toEqual([]);
	}, 60_000);

	test("every dependency with an install script is reviewed in allowScripts (npm warns of each one left out)", () => {
		const lock = JSON.parse(read("package-lock.json")) as {
			packages: Record<string, { hasInstallScript?: boolean }>;
		};
		const pkg = JSON.parse(read("package.json")) as { allowScripts?: Record<string, boolean> };
		const withScripts = new Set(
			Object.entries(lock.packages)
				.filter(([, p]) => p.hasInstallScript === true)
				.map(([path]) => path.slice(path.lastIndexOf("node_modules/") + "node_modules/".length)),
		);
		expect(Object.keys(pkg.allowScripts ?? {}).sort()).toEqual([...withScripts].sort());
		// The toolchain's own binaries come from these scripts: they must run.
		for (const tool of ["bun", "esbuild", "node"]) expect(pkg.allowScripts?.[tool]).toBe(true);
	});
});

describe("the vendored traces", () => {
	const readme = readFileSync(join(TRACE_FIXTURES, "README.md"), "utf8");

	test("each decompresses to the bytes its README names by sha256", () => {
		const archives = readdirSync(TRACE_FIXTURES)
			.filter((f) => f.endsWith(".jsonl.gz"))
			.sort();
		expect(archives).toEqual(
			Object.values(TRACE_FILES)
				.map((f) => `${f}.gz`)
				.sort(),
		);
		for (const gz of archives) {
			const sha = createHash("sha256")
				.update(gunzipSync(readFileSync(join(TRACE_FIXTURES, gz))))
				.digest("hex");
			expect(readme).toContain(`| \`${gz}\` |`);
			expect(readme.split("\n").find((l) => l.includes(`\`${gz}\``))).toContain(`\`${sha}\``);
		}
	});

	test("their origin and MIT licence are stated beside them", () => {
		expect(readme).toContain("83378aad7e74a0e2bb8f37c007a9685fb4609d8a");
		expect(readme).toContain("packages/coding-agent/test/fixtures/");
		const licence = readFileSync(join(TRACE_FIXTURES, "LICENSE"), "utf8");
		expect(licence).toContain("MIT License");
		expect(licence).toContain("Copyright (c) Mario Zechner");
		expect(licence).toContain('THE SOFTWARE IS PROVIDED "AS IS"');
	});

	test("no test, benchmark or script reads traces from outside the repository, or skips without them", () => {
		const outside = ["..", "shared"].join("/");
		const offenders: string[] = [];
		const walk = (dir: string) => {
			for (const name of readdirSync(dir)) {
				const path = join(dir, name);
				if (statSync(path).isDirectory()) {
					if (name !== "fixtures" && name !== "golden") walk(path);
					continue;
				}
				if (!/\.(ts|mjs|js)$/.test(name) || path === import.meta.path) continue;
				const text = readFileSync(path, "utf8");
				if (text.includes(outside) || /HAVE_TRACES|haveTraces|TRACES_MISSING/.test(text)) {
					offenders.push(relative(REPO, path));
				}
			}
		};
		for (const dir of ["test", "scripts", "bin"]) walk(join(REPO, dir));
		expect(offenders).toEqual([]);
	});
});

describe("the README's download instructions", () => {
	const readme = read("README.md");
	const section = readme.slice(readme.indexOf("### Getting it"), readme.indexOf("## Configuration"));
	const commands = [...section.matchAll(/```(?:bash|powershell)\n([\s\S]*?)```/g)].map((m) => m[1] as string);

	test("give commands a user can paste: no placeholder, no made-up URL", () => {
		expect(commands.length).toBeGreaterThan(0);
		for (const block of commands) {
			expect(block).not.toMatch(/<[a-z][a-z-]*>/);
			expect(block).not.toMatch(/https?:\/\//);
		}
		expect(section).not.toMatch(/<owner>|<version>/);
	});

	test("name the package's own version", () => {
		const { version } = JSON.parse(read("package.json")) as { version: string };
		expect(commands.join("\n")).toContain(`v=${version};`);
		expect(section).toContain(`context-fold-${version}-windows-x64.exe`);
	});
});
