import { afterEach, describe, expect, test } from "bun:test";
import { execFileSync } from "node:child_process";
import {
	chmodSync,
	existsSync,
	lstatSync,
	mkdirSync,
	mkdtempSync,
	readdirSync,
	readFileSync,
	rmSync,
	statSync,
	symlinkSync,
	writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { resolveSettings } from "../../src/core/resolved-settings.ts";
import {
	applyEdits,
	MAX_SETTINGS_BYTES,
	patchSettingsFile,
	readSettingsFile,
	SETTINGS_FILE_VERSION,
	writeSettingsFile,
} from "../../src/store/settings-file.ts";
import { loadSettings } from "../../src/store/settings-load.ts";
import { asUnprivileged } from "../helpers/unprivileged.ts";

const dirs: string[] = [];
afterEach(() => {
	for (const d of dirs.splice(0)) {
		chmodSync(d, 0o700);
		rmSync(d, { recursive: true, force: true });
	}
});
function dir(): string {
	const d = mkdtempSync(join(tmpdir(), "cf-settings-"));
	dirs.push(d);
	return d;
}
const mode = (path: string) => statSync(path).mode & 0o777;
const json = (path: string) => JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown>;

describe("readSettingsFile", () => {
	test("missing, ok, not JSON, not an object", () => {
		const d = dir();
		const path = join(d, "context-fold.json");
		expect(readSettingsFile(path)).toEqual({ status: "missing" });
		writeFileSync(path, '{"foldAt": 0.5}');
		expect(readSettingsFile(path)).toEqual({ status: "ok", data: { foldAt: 0.5 } });
		writeFileSync(path, "{ foldAt: 0.5");
		const bad = readSettingsFile(path);
		expect(bad.status).toBe("invalid");
		expect(bad.status === "invalid" && bad.message).toContain(`${path} is not valid JSON`);
		writeFileSync(path, "[1, 2]");
		const arr = readSettingsFile(path);
		expect(arr.status === "invalid" && arr.message).toBe(`${path} is not a JSON object`);
	});
	test("a newer or nonsense format version is not ours to rewrite", () => {
		const path = join(dir(), "context-fold.json");
		writeFileSync(path, JSON.stringify({ v: SETTINGS_FILE_VERSION + 1 }));
		const newer = readSettingsFile(path);
		expect(newer.status === "invalid" && newer.message).toContain(`format v${SETTINGS_FILE_VERSION + 1}, newer`);
		writeFileSync(path, JSON.stringify({ v: "one" }));
		const nonsense = readSettingsFile(path);
		expect(nonsense.status === "invalid" && nonsense.message).toContain('"v" is "one"');
	});
	test("a directory in the file's place is unreadable, not missing", () => {
		const path = join(dir(), "context-fold.json");
		mkdirSync(path);
		const r = readSettingsFile(path);
		expect(r.status).toBe("unreadable");
		expect(r.status === "unreadable" && r.message).toContain("EISDIR");
	});
});

describe("applyEdits", () => {
	test("sets and removes top-level and nested fields without touching the input", () => {
		const input = { foldAt: 0.5, providerCacheIdleMinutes: { openai: 30 }, note: "mine" };
		const r = applyEdits(input, [
			{ path: ["foldAt"] },
			{ path: ["tail"], value: 5000 },
			{ path: ["providerCacheIdleMinutes", "fake"], value: 10 },
		]);
		expect(r).toEqual({
			ok: true,
			data: { providerCacheIdleMinutes: { openai: 30, fake: 10 }, note: "mine", tail: 5000 },
		});
		expect(input).toEqual({ foldAt: 0.5, providerCacheIdleMinutes: { openai: 30 }, note: "mine" });
	});
	test("removing the last nested key removes the emptied object; a no-op removal leaves objects alone", () => {
		expect(
			applyEdits({ providerCacheIdleMinutes: { fake: 10 } }, [{ path: ["providerCacheIdleMinutes", "fake"] }]),
		).toEqual({ ok: true, data: {} });
		expect(applyEdits({ providerCacheIdleMinutes: {} }, [{ path: ["providerCacheIdleMinutes", "fake"] }])).toEqual({
			ok: true,
			data: { providerCacheIdleMinutes: {} },
		});
		expect(applyEdits({}, [{ path: ["providerCacheIdleMinutes", "fake"] }])).toEqual({ ok: true, data: {} });
	});
	test("a non-object where an object is needed is refused, naming the field", () => {
		expect(
			applyEdits({ providerCacheIdleMinutes: 5 }, [{ path: ["providerCacheIdleMinutes", "fake"], value: 1 }]),
		).toEqual({
			ok: false,
			field: "providerCacheIdleMinutes",
		});
	});
	test("keys are data, never prototypes", () => {
		const r = applyEdits({}, [{ path: ["providerCacheIdleMinutes", "__proto__"], value: 7 }]);
		expect(r.ok).toBe(true);
		const data = r.ok ? r.data : {};
		expect(JSON.stringify(data)).toBe('{"providerCacheIdleMinutes":{"__proto__":7}}');
		expect(({} as Record<string, unknown>).providerCacheIdleMinutes).toBeUndefined();
	});
});

describe("patchSettingsFile", () => {
	test("creates the file (0600) and its directory (0700) with a format version", () => {
		const path = join(dir(), "agent", "context-fold.json");
		const r = patchSettingsFile(path, [{ path: ["foldAt"], value: 0.3 }]);
		expect(r).toEqual({ ok: true, data: { v: SETTINGS_FILE_VERSION, foldAt: 0.3 }, path });
		expect(json(path)).toEqual({ v: 1, foldAt: 0.3 });
		expect(mode(path)).toBe(0o600);
		expect(mode(join(path, ".."))).toBe(0o700);
		expect(readFileSync(path, "utf8").endsWith("}\n")).toBe(true);
		// What was written reads back as the setting it means.
		expect(resolveSettings({ env: {}, file: json(path) }).settings.foldAt).toBe(0.3);
	});
	test("keeps unknown and invalid fields, their order and an existing version; leaves no temp files", () => {
		const d = dir();
		const path = join(d, "context-fold.json");
		const before = { note: "keep me", foldAt: "lots", v: 1, nested: { a: [1, 2] } };
		writeFileSync(path, JSON.stringify(before), { mode: 0o644 });
		const r = patchSettingsFile(path, [{ path: ["tail"], value: 7000 }]);
		expect(r.ok).toBe(true);
		expect(Object.keys(json(path))).toEqual(["note", "foldAt", "v", "nested", "tail"]);
		expect(json(path)).toEqual({ ...before, tail: 7000 });
		expect(mode(path)).toBe(0o600);
		expect(readdirSync(d)).toEqual(["context-fold.json"]);
	});
	test.each([
		["not JSON", "{ foldAt: 0.5", "is not valid JSON"],
		["not an object", '"hello"', "is not a JSON object"],
		["a newer format", '{"v": 9, "foldAt": 0.5}', "format v9, newer"],
		["a non-object provider map", '{"providerCacheIdleMinutes": 5}', '"providerCacheIdleMinutes" is not an object'],
	])("%s: refused, the message names the path, the bytes stay", (_name, text, why) => {
		const d = dir();
		const path = join(d, "context-fold.json");
		writeFileSync(path, text);
		const r = patchSettingsFile(path, [{ path: ["providerCacheIdleMinutes", "fake"], value: 10 }]);
		expect(r.ok).toBe(false);
		const message = r.ok ? "" : r.message;
		expect(message).toContain(path);
		expect(message).toContain(why);
		expect(message).toContain("nothing was saved");
		expect(readFileSync(path, "utf8")).toBe(text);
		expect(readdirSync(d)).toEqual(["context-fold.json"]);
	});
	// Root ignores directory permissions: the write runs as another user (see asUnprivileged).
	test("a write failure is reported, the old file stays and no temp file is left", () => {
		const d = dir();
		const path = join(d, "context-fold.json");
		writeFileSync(path, '{"foldAt": 0.5}');
		chmodSync(d, 0o555);
		const r = asUnprivileged(() => patchSettingsFile(path, [{ path: ["foldAt"], value: 0.3 }]));
		chmodSync(d, 0o700);
		expect(r.ok).toBe(false);
		expect(r.ok ? "" : r.message).toContain(`could not write ${path}`);
		expect(json(path)).toEqual({ foldAt: 0.5 });
		expect(readdirSync(d)).toEqual(["context-fold.json"]);
	});
});

describe("writeSettingsFile", () => {
	test("a failed rename throws and leaves no temp file behind", () => {
		const d = dir();
		const path = join(d, "context-fold.json");
		mkdirSync(path);
		writeFileSync(join(path, "x"), "");
		expect(() => writeSettingsFile(path, { v: 1 })).toThrow();
		expect(readdirSync(d)).toEqual(["context-fold.json"]);
	});
	test("writes through a symlink and keeps the link", () => {
		const d = dir();
		mkdirSync(join(d, "dotfiles"));
		const real = join(d, "dotfiles", "context-fold.json");
		writeFileSync(real, "{}");
		const link = join(d, "context-fold.json");
		symlinkSync(real, link);
		writeSettingsFile(link, { v: 1, tail: 1 });
		expect(lstatSync(link).isSymbolicLink()).toBe(true);
		expect(json(real)).toEqual({ v: 1, tail: 1 });
		expect(existsSync(join(d, "dotfiles", "context-fold.json"))).toBe(true);
	});
});

describe("the one reader of context-fold.json (issue 16)", () => {
	const load = (agent: string, env: NodeJS.ProcessEnv = {}) => loadSettings({ PI_CODING_AGENT_DIR: agent, ...env });

	test("a FIFO, /dev/zero and /dev/urandom in the file's place: reported and ignored at once, never read", () => {
		for (const kind of ["fifo", "/dev/zero", "/dev/urandom"]) {
			const agent = dir();
			const path = join(agent, "context-fold.json");
			if (kind === "fifo") execFileSync("mkfifo", [path]);
			else symlinkSync(kind, path);
			// A blocking open of the FIFO would hang here; reading /dev/zero would never end.
			const r = load(agent);
			expect(r.warnings.map((w) => w.message)).toEqual([
				`${path} is not a regular file; ignored, using defaults and environment.`,
			]);
			expect(r.sources.foldAt).toBe("default");
			expect(patchSettingsFile(path, [{ path: ["tail"], value: 7000 }])).toEqual({
				ok: false,
				message: `${path} is not a regular file; nothing was saved.`,
			});
		}
	});
	test("a file over 1 MiB is reported and ignored; one at the limit is read", () => {
		const agent = dir();
		const path = join(agent, "context-fold.json");
		const body = (n: number) => `{"tail": 7000, "pad": "${"x".repeat(n - 25)}"}`;
		writeFileSync(path, body(MAX_SETTINGS_BYTES + 1));
		expect(readFileSync(path).length).toBe(MAX_SETTINGS_BYTES + 1);
		expect(load(agent).warnings.map((w) => w.message)).toEqual([
			`${path} is larger than 1 MiB; ignored, using defaults and environment.`,
		]);
		writeFileSync(path, body(MAX_SETTINGS_BYTES));
		const ok = load(agent);
		expect(ok.warnings).toEqual([]);
		expect(ok.settings.tail).toBe(7000);
	});
	test("a number too large for a double is quoted as written, and an edit keeps it byte for byte", () => {
		const agent = dir();
		const path = join(agent, "context-fold.json");
		writeFileSync(path, '{"reconTokens": 1e400, "note": -1E999}');
		expect(load(agent).warnings.map((w) => w.message)).toEqual([
			'context-fold.json: "reconTokens" is 1e400; expected a whole number from 0 to 10000000. Using 18000.',
		]);
		expect(patchSettingsFile(path, [{ path: ["tail"], value: 7000 }]).ok).toBe(true);
		expect(readFileSync(path, "utf8")).toBe(
			'{\n  "v": 1,\n  "reconTokens": 1e400,\n  "note": -1E999,\n  "tail": 7000\n}\n',
		);
	});
	test("a bad environment value is quoted escaped: no terminal escape or line break reaches the warning", () => {
		const r = load(dir(), { CONTEXTFOLD_FOLD_AT: "\u001b[2J\u001b[31mred\nsecond line\u0007" });
		expect(r.warnings.map((w) => w.message)).toEqual([
			"CONTEXTFOLD_FOLD_AT=\\u001b[2J\\u001b[31mred\\nsecond line\\u0007 is invalid; expected a number > 0 and <= 1. Using 0.3.",
		]);
	});
});
