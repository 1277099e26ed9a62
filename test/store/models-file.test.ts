// <agentDir>/models.json: the context window and prices of the custom models it declares. A missing
// file or a shape that is not Pi's says nothing; a file that exists but cannot be read or parsed is
// reported (and then says nothing); unusable numbers are left out (windows) or count as 0 (prices).
import { describe, expect, test } from "bun:test";
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { readModelsFile } from "../../src/store/models-file.ts";
import { tempDirs } from "../helpers/temp-dirs.ts";
import { asUnprivileged, openToOthers } from "../helpers/unprivileged.ts";

const tempDir = tempDirs("cf-models-");

/** A private agent dir; `write` puts models.json there (text as given, anything else as JSON). */
function agent() {
	const root = tempDir();
	const dir = join(root, "agent");
	mkdirSync(dir);
	const path = join(dir, "models.json");
	const env = { PI_CODING_AGENT_DIR: dir } as NodeJS.ProcessEnv;
	const write = (data: unknown) => writeFileSync(path, typeof data === "string" ? data : JSON.stringify(data));
	return { root, dir, path, env, write };
}

const facts = (env: NodeJS.ProcessEnv) => Object.fromEntries(readModelsFile(env).models);

describe("readModelsFile", () => {
	test("windows and prices by provider/model id", () => {
		const a = agent();
		a.write({
			providers: {
				local: {
					baseUrl: "http://localhost:1234",
					models: [
						{ id: "small", contextWindow: 32_000, cost: { input: 1, output: 2, cacheRead: 0.1, cacheWrite: 1.25 } },
						{ id: "no-cost", contextWindow: 8_000 },
					],
				},
				other: { models: [{ id: "small", cost: { input: 3 } }] },
			},
		});
		expect(readModelsFile(a.env)).toEqual({
			path: a.path,
			models: new Map([
				["local/small", { contextWindow: 32_000, prices: { input: 1, output: 2, cacheRead: 0.1, cacheWrite: 1.25 } }],
				["local/no-cost", { contextWindow: 8_000 }],
				["other/small", { prices: { input: 3, output: 0, cacheRead: 0, cacheWrite: 0 } }],
			]),
			problem: null,
		});
	});

	test("a window that is not a positive number is left out; a price that is not a finite count is 0", () => {
		const a = agent();
		// 1e999 parses to Infinity.
		a.write(
			'{"providers":{"p":{"models":[' +
				'{"id":"zero","contextWindow":0,"cost":{"input":-1,"output":"2","cacheRead":null,"cacheWrite":1e999}},' +
				'{"id":"negative","contextWindow":-5,"cost":{}},' +
				'{"id":"text","contextWindow":"200000"}' +
				"]}}}",
		);
		expect(facts(a.env)).toEqual({
			"p/zero": { prices: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 } },
			"p/negative": { prices: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 } },
			"p/text": {},
		});
	});

	test("entries that are not models are skipped; the same id twice in one provider: the last wins", () => {
		const a = agent();
		a.write({
			providers: {
				p: {
					models: [
						null,
						"a string",
						{ contextWindow: 1000 },
						{ id: 42, contextWindow: 1000 },
						{ id: "m", contextWindow: 1000, cost: "cheap" },
						{ id: "m", contextWindow: 2000 },
					],
				},
				nullProvider: null,
				noModels: { baseUrl: "x" },
				modelsNotAList: { models: { id: "x" } },
			},
		});
		expect(facts(a.env)).toEqual({ "p/m": { contextWindow: 2000 } });
	});

	const empty: Array<[string, unknown]> = [
		["JSON null", "null"],
		["a list", [1, 2]],
		["a number", "7"],
		["no providers", { models: [] }],
		["providers null", { providers: null }],
		["providers a string", { providers: "local" }],
		["providers empty", { providers: {} }],
	];
	for (const [name, data] of empty) {
		test(`${name}: no models, no problem`, () => {
			const a = agent();
			a.write(data);
			expect(readModelsFile(a.env)).toEqual({ path: a.path, models: new Map(), problem: null });
		});
	}

	test("a missing file, or a missing agent dir: no models, no problem", () => {
		const a = agent();
		expect(readModelsFile(a.env)).toEqual({ path: a.path, models: new Map(), problem: null });
		const gone = join(a.root, "no-such-agent");
		expect(readModelsFile({ PI_CODING_AGENT_DIR: gone })).toEqual({
			path: join(gone, "models.json"),
			models: new Map(),
			problem: null,
		});
	});

	test("not JSON: reported with the parser's message", () => {
		const a = agent();
		const text = '{"providers": {';
		a.write(text);
		let message = "";
		try {
			JSON.parse(text);
		} catch (error) {
			message = (error as Error).message;
		}
		expect(message).not.toBe("");
		expect(readModelsFile(a.env)).toEqual({
			path: a.path,
			models: new Map(),
			problem: `${a.path} was not used (${message})`,
		});
	});

	test("a directory where the file should be: reported (EISDIR)", () => {
		const a = agent();
		mkdirSync(a.path);
		expect(readModelsFile(a.env).problem).toBe(`${a.path} was not used (EISDIR)`);
	});

	test("an unreadable file (permission denied): reported (EACCES)", () => {
		const a = agent();
		a.write({ providers: { p: { models: [{ id: "m", contextWindow: 1000 }] } } });
		expect(readModelsFile(a.env).models.size).toBe(1);
		chmodSync(a.path, 0o000);
		openToOthers(a.root, a.dir);
		expect(asUnprivileged(() => readModelsFile(a.env))).toEqual({
			path: a.path,
			models: new Map(),
			problem: `${a.path} was not used (EACCES)`,
		});
	});
});
