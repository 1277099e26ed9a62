/**
 * Build the shipped artifacts:
 *   dist/index.js  the extension, one ESM file for Node >= 22 (Pi's packages and typebox external)
 * Run with `npm run build` (Bun executes this script; esbuild does the bundling).
 */
import { build } from "esbuild";

const external = ["@earendil-works/*", "@mariozechner/*", "typebox", "typebox/*"];

await build({
	entryPoints: ["src/adapters/pi/index.ts"],
	outfile: "dist/index.js",
	bundle: true,
	format: "esm",
	platform: "node",
	target: "node22",
	external,
	legalComments: "none",
	sourcemap: false,
	logLevel: "warning",
});
console.log("built dist/index.js");
