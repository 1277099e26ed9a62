// What `npm pack` ships: exactly the extension bundle, the Node CLI and the documents; every path the
// manifest names is in the pack; the extension bundle holds no CLI code and no clack; the changelog
// uses headings Pi can read.
import { beforeAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { build } from "esbuild";
// Pi's own changelog reader, straight from its module.
import { parseChangelog } from "../../node_modules/@earendil-works/pi-coding-agent/dist/utils/changelog.js";
import { ensureCli } from "./build.ts";
import { REPO } from "./helpers.ts";

interface Manifest {
	version: string;
	pi: { extensions: string[] };
	bin: Record<string, string>;
	exports: Record<string, string>;
	files: string[];
	dependencies?: Record<string, string>;
	devDependencies: Record<string, string>;
	peerDependencies: Record<string, string>;
}

const pkg = JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")) as Manifest;
let packed: string[] = [];

beforeAll(() => {
	ensureCli();
	const r = spawnSync("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], { cwd: REPO, encoding: "utf8" });
	if (r.status !== 0) throw new Error(`npm pack failed: ${r.stderr}`);
	packed =
		(JSON.parse(r.stdout) as Array<{ files: Array<{ path: string }> }>)[0]?.files.map((f) => f.path).sort() ?? [];
}, 60_000);

const strip = (p: string) => p.replace(/^\.\//, "");

describe("npm pack", () => {
	test("holds exactly what users need", () => {
		expect(packed).toEqual(["CHANGELOG.md", "LICENSE", "README.md", "dist/cli.js", "dist/index.js", "package.json"]);
	});

	test("every path in pi.extensions, bin and exports is in the pack", () => {
		const named = [...pkg.pi.extensions, ...Object.values(pkg.bin), ...Object.values(pkg.exports)].map(strip);
		expect(named.length).toBe(4);
		for (const p of named) expect(packed).toContain(p);
		expect(pkg.bin).toEqual({ "context-fold": "dist/cli.js" });
		expect(readFileSync(join(REPO, "dist/cli.js"), "utf8").startsWith("#!/usr/bin/env node\n")).toBe(true);
	});

	test("no runtime dependencies: Pi's packages are peers, clack is a dev dependency bundled into the CLI", () => {
		expect(pkg.dependencies).toBeUndefined();
		expect(pkg.devDependencies["@clack/prompts"]).toBeDefined();
		for (const peer of Object.keys(pkg.peerDependencies)) expect(pkg.peerDependencies[peer]).toBe("*");
		expect(readFileSync(join(REPO, "dist/cli.js"), "utf8")).toContain("Which session?");
	});
});

describe("the extension bundle", () => {
	test("contains no CLI code and no clack (checked on the shipped file and on esbuild's own input list)", async () => {
		const shipped = readFileSync(join(REPO, "dist/index.js"), "utf8");
		for (const needle of ["@clack", "sisteransi", "Which session?", "context-fold/simulate@1", "renderMainUsage"]) {
			expect(shipped).not.toContain(needle);
		}
		const result = await build({
			entryPoints: [join(REPO, "src/adapters/pi/index.ts")],
			bundle: true,
			write: false,
			metafile: true,
			format: "esm",
			platform: "node",
			external: ["@earendil-works/*", "@mariozechner/*", "typebox", "typebox/*"],
			logLevel: "silent",
		});
		const inputs = Object.keys(result.metafile.inputs);
		expect(inputs.some((i) => i.includes("src/cli/") || i.includes("bin/"))).toBe(false);
		expect(inputs.some((i) => i.includes("node_modules/"))).toBe(false);
	});
});

describe("CHANGELOG.md", () => {
	test("Pi reads its headings, and the newest one is the package version", () => {
		const entries = parseChangelog(join(REPO, "CHANGELOG.md")) as Array<{
			major: number;
			minor: number;
			patch: number;
		}>;
		expect(entries.length).toBeGreaterThan(0);
		const first = entries[0] as { major: number; minor: number; patch: number };
		expect(`${first.major}.${first.minor}.${first.patch}`).toBe(pkg.version);
		const headings = readFileSync(join(REPO, "CHANGELOG.md"), "utf8").match(/^## .*$/gm) ?? [];
		// An `[Unreleased]` section on top is allowed: Pi skips a heading it cannot parse.
		for (const h of headings) expect(h).toMatch(/^## (\[\d+\.\d+\.\d+\]|\[Unreleased\]$)/);
		expect(headings.slice(1).some((h) => h === "## [Unreleased]")).toBe(false);
	});
});
