/**
 * Build the shipped artifacts:
 *   dist/index.js       the extension, one ESM file for Node >= 22 (Pi's packages and typebox external)
 *   dist/cli.js         the CLI for Node >= 22 (`npx context-fold`), bundled by esbuild, clack inside
 *   dist/context-fold   the same CLI as a standalone Bun executable for this machine
 * Run with `npm run build` (Bun executes this script). `--only extension|cli|binary` builds one.
 * First, src/core/model-catalog.generated.ts is brought up to date from the installed pi-ai catalogs
 * (scripts/gen-model-catalog.ts), so the CLI builds embed the prices of the Pi they were built with.
 * Both CLI builds get the version from package.json baked in, and the binary is smoke-run with
 * --version before the build counts as done.
 */
import { spawnSync } from "node:child_process";
import { chmodSync, readFileSync } from "node:fs";
import { type BuildOptions, build } from "esbuild";
import { updateCatalogFile } from "./gen-model-catalog.ts";

/** The extension's build, shared with scripts/prepare.mjs (npm's `prepare`, which may run without Bun). */
export const EXTENSION_BUILD = JSON.parse(readFileSync("scripts/extension-build.json", "utf8")) as BuildOptions;
const pkg = JSON.parse(readFileSync("package.json", "utf8")) as { version: string };
/** The CLI reads this global (src/cli/version.ts); undefined when running from source. */
export const VERSION_DEFINE = { CONTEXT_FOLD_VERSION: JSON.stringify(pkg.version) };
export const CLI_ENTRY = "bin/context-fold.ts";

async function buildExtension(): Promise<void> {
	await build(EXTENSION_BUILD);
	console.log(`built ${EXTENSION_BUILD.outfile}`);
}

async function buildNodeCli(): Promise<void> {
	await build({
		entryPoints: [CLI_ENTRY],
		outfile: "dist/cli.js",
		bundle: true,
		format: "esm",
		platform: "node",
		target: "node22",
		define: VERSION_DEFINE,
		// The CLI must not need Pi: nothing is external but Node's own modules.
		legalComments: "none",
		sourcemap: false,
		logLevel: "warning",
	});
	chmodSync("dist/cli.js", 0o755);
	console.log("built dist/cli.js");
}

/** Compile the CLI with Bun; `target` cross-compiles (see scripts/release.ts). */
export async function compileBinary(outfile: string, target?: Bun.Build.CompileTarget): Promise<void> {
	const result = await Bun.build({
		entrypoints: [CLI_ENTRY],
		compile: {
			outfile,
			...(target !== undefined && { target }),
			// A binary must behave the same wherever it runs: never pick up a bunfig.toml or .env there.
			autoloadBunfig: false,
			autoloadDotenv: false,
			autoloadTsconfig: false,
			autoloadPackageJson: false,
		},
		define: VERSION_DEFINE,
		minify: true,
		// Precompiled bytecode roughly halves the cold start: nothing is parsed at launch.
		bytecode: true,
		format: "esm",
	});
	if (!result.success) {
		for (const log of result.logs) console.error(log);
		throw new Error(`bun build --compile failed for ${outfile}`);
	}
}

/** Run a built binary with --version and require the baked-in version back. */
export function smokeRun(binary: string): void {
	const run = spawnSync(binary, ["--version"], { encoding: "utf8", timeout: 30_000 });
	const out = (run.stdout ?? "").trim();
	if (run.status !== 0 || out !== pkg.version) {
		throw new Error(
			`smoke run failed: ${binary} --version gave exit ${run.status} and "${out}" (expected "${pkg.version}")\n${run.stderr ?? ""}`,
		);
	}
	console.log(`smoke run: ${binary} --version -> ${out}`);
}

async function buildBinary(): Promise<void> {
	await compileBinary("dist/context-fold");
	console.log("built dist/context-fold");
	smokeRun("./dist/context-fold");
}

if (import.meta.main) {
	const only = process.argv.includes("--only") ? process.argv[process.argv.indexOf("--only") + 1] : undefined;
	const steps: Record<string, () => Promise<void>> = {
		extension: buildExtension,
		cli: buildNodeCli,
		binary: buildBinary,
	};
	if (only !== undefined && !(only in steps)) {
		console.error(`--only takes one of ${Object.keys(steps).join(", ")}`);
		process.exit(2);
	}
	try {
		await updateCatalogFile();
	} catch (error) {
		// Without Pi's packages (a production install) the committed catalog is built in as it is.
		console.warn(`model catalog: kept the committed one (${(error as Error).message})`);
	}
	for (const [name, step] of Object.entries(steps)) if (only === undefined || only === name) await step();
}
