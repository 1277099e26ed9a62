/**
 * The core stays pure: no I/O, no clock, no randomness, no Pi, no store or adapter. Every file in
 * src/core is parsed and checked (test/helpers/purity.ts), and the checker itself is shown to fail on
 * every way a file can reach another module or a forbidden global.
 */
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { purityViolations } from "../helpers/purity.ts";

const CORE = join(import.meta.dir, "../../src/core");

function files(dir: string): string[] {
	return readdirSync(dir).flatMap((name) => {
		const path = join(dir, name);
		return statSync(path).isDirectory() ? files(path) : path.endsWith(".ts") ? [path] : [];
	});
}

describe("src/core is pure", () => {
	const all = files(CORE);
	test("there are core files to check", () => {
		expect(all.length).toBeGreaterThan(5);
	});
	for (const file of all) {
		const name = relative(CORE, file);
		test(name, () => {
			expect(purityViolations(file, readFileSync(file, "utf8"), CORE)).toEqual([]);
		});
	}
});

/** Check an in-memory source as if it were src/core/<at>. */
const check = (source: string, at = "probe.ts") => purityViolations(join(CORE, at), source, CORE);

describe("the purity checker", () => {
	// Each form on its own: the checker must name exactly this violation.
	const modules: Array<[string, string, string[]]> = [
		["a bare import of node:*", 'import "node:fs";', ['side-effect import "node:fs" (line 1)']],
		["a named import of node:*", 'import { readFileSync } from "node:fs";', ['import "node:fs" (line 1)']],
		["a default import of a bare builtin", 'import fs from "fs";', ['import "fs" (line 1)']],
		["a namespace import of bun", 'import * as bun from "bun";', ['import "bun" (line 1)']],
		["an import of Pi", 'import { x } from "@earendil-works/pi-ai";', ['import "@earendil-works/pi-ai" (line 1)']],
		["an import of the store", 'import { a } from "../store/paths.ts";', ['import "../store/paths.ts" (line 1)']],
		[
			"a type-only import of the adapter, from a nested file",
			'import type { S } from "../../adapters/pi/state.ts";',
			['import "../../adapters/pi/state.ts" (line 1)'],
		],
		["a re-export from node:*", 'export { readFileSync } from "node:fs";', ['re-export "node:fs" (line 1)']],
		["a type-only re-export", 'export type { Stats } from "node:fs";', ['re-export "node:fs" (line 1)']],
		["export * from node:*", 'export * from "node:fs";', ['export * "node:fs" (line 1)']],
		["export * as from node:*", 'export * as fs from "node:fs";', ['re-export "node:fs" (line 1)']],
		["import = require", 'import fs = require("node:fs");', ['import = require "node:fs" (line 1)']],
		["a dynamic import", 'const m = await import("node:fs");', ["dynamic import (line 1)"]],
		["a dynamic import of a core file", 'const m = await import("./tokens.ts");', ["dynamic import (line 1)"]],
		["an import type", 'type S = import("node:fs").Stats;', ['import type "node:fs" (line 1)']],
		["declare module", 'declare module "node:fs" {}', ['declare module "node:fs" (line 1)']],
		["a types reference", '/// <reference types="node" />\nexport {};', ['reference types "node"']],
		["a path reference", '/// <reference path="../store/x.ts" />\nexport {};', ['reference path "../store/x.ts"']],
		["import.meta", "const d = import.meta.dir;", ["import.meta (line 1)"]],
		["a sibling of src/core", 'import { x } from "../core-extra/x.ts";', ['import "../core-extra/x.ts" (line 1)']],
	];
	for (const [name, source, expected] of modules) {
		test(`fails on ${name}`, () => {
			const at = name.includes("nested") ? "session/probe.ts" : "probe.ts";
			expect(check(source, at)).toEqual(expected);
		});
	}

	const globals: Array<[string, string, string[]]> = [
		["Date", "const t = Date.now();", ["uses Date (line 1)"]],
		// biome-ignore lint/suspicious/noTemplateCurlyInString: the source under test holds a template literal
		["Date inside a template expression", "const s = `at ${Date.now()}`;", ["uses Date (line 1)"]],
		["Date as a type", "let d: Date | null = null;", ["uses Date (line 1)"]],
		["Math.random", "const r = Math.random();", ["uses Math.random (line 1)"]],
		["Math['random']", 'const r = Math["random"]();', ["uses Math.random (line 1)"]],
		["Math destructured", "const { random } = Math;", ["uses Math as a value (line 1)"]],
		["Math aliased", "const M = Math;", ["uses Math as a value (line 1)"]],
		["Math with a computed key", "const k = 'x'; const f = Math[k];", ["uses Math with a computed key (line 1)"]],
		["process", "const e = process.env;", ["uses process (line 1)"]],
		["Bun", "Bun.write('x', 'y');", ["uses Bun (line 1)"]],
		["crypto", "crypto.getRandomValues(new Uint8Array(1));", ["uses crypto (line 1)"]],
		["fetch", "await fetch('http://localhost');", ["uses fetch (line 1)"]],
		["require", 'const fs = require("node:fs");', ["uses require (line 1)"]],
		["setTimeout", "setTimeout(() => {}, 1);", ["uses timers (line 1)"]],
		["performance", "const t = performance.now();", ["uses timers (line 1)"]],
		["globalThis", "const g = globalThis;", ["uses globalThis (line 1)"]],
	];
	for (const [name, source, expected] of globals) {
		test(`fails on ${name}`, () => expect(check(source)).toEqual(expected));
	}

	test("reports every violation with its line", () => {
		const source = ['import "node:fs";', "export * from 'node:path';", "", "const t = Date.now();"].join("\n");
		expect(check(source)).toEqual([
			'side-effect import "node:fs" (line 1)',
			'export * "node:path" (line 2)',
			"uses Date (line 4)",
		]);
	});

	test("passes what is pure: core imports and re-exports, prose, strings, other Math, a property named Math", () => {
		const source = [
			"/** Date.now() and process.env and import 'node:fs' in prose. */",
			'import { estimateTokens } from "./tokens.ts";',
			'import type { Settings } from "./settings.ts";',
			'export { planFold } from "./plan.ts";',
			'export * from "./session/view.ts";',
			"// Math.random() in a comment",
			"const s = \"Date process Bun require('node:fs')\";",
			// biome-ignore lint/suspicious/noTemplateCurlyInString: the source under test holds a template literal
			"const t = `Math.random ${Math.max(1, 2)}`;",
			"const o = { m: 1 }; const v = (o as { Math?: number }).Math;",
		].join("\n");
		expect(check(source)).toEqual([]);
	});

	test("a nested core file may import up to the core root, not past it", () => {
		expect(check('import { x } from "../tokens.ts";', "session/probe.ts")).toEqual([]);
		expect(check('import { x } from "../../store/x.ts";', "session/probe.ts")).toEqual([
			'import "../../store/x.ts" (line 1)',
		]);
	});
});
