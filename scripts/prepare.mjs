/**
 * npm's `prepare` step (run by `npm install` in a clone, and by `npm pack`): builds dist/index.js, the
 * bundle Pi loads through index.js, with the esbuild options in scripts/extension-build.json, the same
 * ones `npm run build` uses. A development install has esbuild in node_modules. A production install
 * (`npm install --omit=dev`, which is what `pi install git:...` runs in its clone) has not: esbuild is
 * then run at the version package.json pins, through `npm exec`, which fetches it into npm's cache.
 * Plain JavaScript, so it runs on whichever Node runs npm.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

/** esbuild's command line for a build-options object (entry points, flags, `--external:` lists). */
export function esbuildArgs(options) {
	const args = [];
	for (const [key, value] of Object.entries(options)) {
		const flag = `--${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
		if (key === "entryPoints") args.unshift(...value);
		else if (Array.isArray(value)) for (const v of value) args.push(`${flag}:${v}`);
		else if (value === true) args.push(flag);
		else if (value === false) continue;
		else if (typeof value === "string") args.push(`${flag}=${value}`);
		else throw new Error(`scripts/extension-build.json: no command-line form for ${key}=${JSON.stringify(value)}`);
	}
	return args;
}

function run(command, args) {
	const r = spawnSync(command, args, { cwd: ROOT, stdio: "inherit" });
	if (r.error) throw r.error;
	if (r.status !== 0) process.exit(r.status ?? 1);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
	const options = JSON.parse(readFileSync(join(ROOT, "scripts/extension-build.json"), "utf8"));
	const args = esbuildArgs(options);
	const local = join(ROOT, "node_modules/esbuild/bin/esbuild");
	if (existsSync(local)) {
		run(local, args);
	} else {
		const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
		const esbuild = `esbuild@${pkg.devDependencies.esbuild}`;
		console.log(`prepare: esbuild is not installed (a production install); running ${esbuild} through npm exec`);
		// npm sets npm_execpath for its scripts: the same npm, on the same Node, runs the exec.
		const npm = process.env.npm_execpath;
		const exec = ["exec", "--yes", `--package=${esbuild}`, "--", "esbuild", ...args];
		if (npm) run(process.execPath, [npm, ...exec]);
		else run(process.platform === "win32" ? "npm.cmd" : "npm", exec);
	}
	console.log(`prepare: built ${options.outfile}`);
}
