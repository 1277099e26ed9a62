/**
 * The core stays pure: no I/O, no clock, no randomness, no Pi. A careful lexical check over every
 * file in src/core (comments and string literals are stripped first so prose cannot trip it).
 */
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";

const CORE = join(import.meta.dir, "../../src/core");

function files(dir: string): string[] {
	return readdirSync(dir).flatMap((name) => {
		const path = join(dir, name);
		return statSync(path).isDirectory() ? files(path) : path.endsWith(".ts") ? [path] : [];
	});
}

/** Remove comments and the contents of string/template literals, keeping line structure. */
export function stripCode(src: string): string {
	let out = "";
	let i = 0;
	while (i < src.length) {
		const c = src[i];
		const n = src[i + 1];
		if (c === "/" && n === "/") {
			while (i < src.length && src[i] !== "\n") i++;
		} else if (c === "/" && n === "*") {
			i += 2;
			while (i < src.length && !(src[i] === "*" && src[i + 1] === "/")) out += src[i++] === "\n" ? "\n" : "";
			i += 2;
		} else if (c === '"' || c === "'" || c === "`") {
			const q = c;
			out += q;
			i++;
			while (i < src.length && src[i] !== q) {
				if (src[i] === "\\") i++;
				i++;
			}
			out += q;
			i++;
		} else {
			out += c;
			i++;
		}
	}
	return out;
}

const FORBIDDEN: Array<[string, RegExp]> = [
	["Date", /\bDate\b/],
	["Math.random", /\bMath\s*\.\s*random\b/],
	["process", /\bprocess\b/],
	["Bun", /\bBun\b/],
	["crypto", /\bcrypto\b/],
	["fetch", /\bfetch\b/],
	["require", /\brequire\b/],
	["timers", /\b(?:setTimeout|setInterval|setImmediate|queueMicrotask|performance)\b/],
	["globalThis", /\bglobalThis\b/],
	["dynamic import", /\bimport\s*\(/],
];

describe("src/core is pure", () => {
	const all = files(CORE);
	test("there are core files to check", () => {
		expect(all.length).toBeGreaterThan(5);
	});
	for (const file of all) {
		const name = relative(CORE, file);
		test(name, () => {
			const src = readFileSync(file, "utf8");
			for (const m of src.matchAll(/^\s*import\s[^;]*?from\s*["']([^"']+)["']/gm)) {
				const spec = m[1] as string;
				expect(spec.startsWith("./") || spec.startsWith("../"), `${name} imports ${spec}`).toBe(true);
				expect(/adapters|store|cli|node:|bun/.test(spec), `${name} imports ${spec}`).toBe(false);
			}
			const code = stripCode(src);
			for (const [label, re] of FORBIDDEN) expect(re.test(code), `${name} uses ${label}`).toBe(false);
		});
	}
	test("the checker catches a violation", () => {
		expect(/\bDate\b/.test(stripCode("const t = Date.now(); // Date"))).toBe(true);
		expect(/\bDate\b/.test(stripCode('const s = "Date"; // Date'))).toBe(false);
	});
});
