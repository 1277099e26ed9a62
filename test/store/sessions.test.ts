// Finding Pi's sessions on disk: where they are (flag, environment, settings.json, Pi's layout), the
// header facts of one file, the listing newest first, `pi -c`'s choice and a session argument; every
// unreadable, missing, malformed or misplaced file is left out, never an error.
import { describe, expect, test } from "bun:test";
import { chmodSync, mkdirSync, utimesSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { defaultSessionDir } from "../../src/store/paths.ts";
import {
	findSession,
	listSessions,
	mostRecentSession,
	type SessionInfo,
	type SessionPlaces,
	sessionInfo,
	sessionPlaces,
} from "../../src/store/sessions.ts";
import { tempDirs } from "../helpers/temp-dirs.ts";
import { asUnprivileged, openToOthers } from "../helpers/unprivileged.ts";

const tempDir = tempDirs("cf-sessions-");

/** A private temp dir holding an agent dir; `env` points Pi (and us) at it. */
function sandbox() {
	const root = tempDir();
	const agent = join(root, "agent");
	mkdirSync(agent);
	return { root, agent, env: { PI_CODING_AGENT_DIR: agent } as NodeJS.ProcessEnv };
}

const T0 = Date.parse("2025-01-01T00:00:00Z");
const header = (fields: Record<string, unknown>) => JSON.stringify({ type: "session", timestamp: "x", ...fields });

/** Write a session file with the given text and a fixed modification time (minutes after T0). */
function writeAt(path: string, text: string, minute = 0): string {
	mkdirSync(join(path, ".."), { recursive: true });
	writeFileSync(path, text);
	const at = new Date(T0 + minute * 60_000);
	utimesSync(path, at, at);
	return path;
}

const session = (id: string, cwd: string) => `${header({ version: 3, id, cwd })}\n`;
const paths = (infos: readonly SessionInfo[]) => infos.map((i) => i.path);

describe("sessionPlaces", () => {
	test("no flag, environment or setting: Pi's per-project layout under the agent dir", () => {
		const { agent, env } = sandbox();
		expect(sessionPlaces({ env, cwd: "/work/p/" })).toEqual({
			root: join(agent, "sessions"),
			cwd: "/work/p",
			cwdDir: join(agent, "sessions", "--work-p--"),
			custom: null,
			customFrom: null,
		});
	});

	test("--session-dir wins over the environment and settings.json; relative to cwd, ~ expanded", () => {
		const { agent, env } = sandbox();
		writeFileSync(join(agent, "settings.json"), JSON.stringify({ sessionDir: "/from/settings" }));
		const both = { ...env, PI_CODING_AGENT_SESSION_DIR: "/from/env" };
		expect(sessionPlaces({ flag: "rel/dir", env: both, cwd: "/work/p" })).toMatchObject({
			custom: "/work/p/rel/dir",
			customFrom: "--session-dir",
		});
		expect(sessionPlaces({ flag: "~/s", env: both, cwd: "/work/p" }).custom).toBe(join(homedir(), "s"));
	});

	test("an empty flag is no flag: PI_CODING_AGENT_SESSION_DIR, ~ expanded, wins over settings.json", () => {
		const { agent, env } = sandbox();
		writeFileSync(join(agent, "settings.json"), JSON.stringify({ sessionDir: "/from/settings" }));
		const places = sessionPlaces({ flag: "", env: { ...env, PI_CODING_AGENT_SESSION_DIR: "~/env" }, cwd: "/w" });
		expect(places).toMatchObject({ custom: join(homedir(), "env"), customFrom: "PI_CODING_AGENT_SESSION_DIR" });
	});

	test("an empty PI_CODING_AGENT_SESSION_DIR is unset: settings.json's sessionDir applies", () => {
		const { agent, env } = sandbox();
		writeFileSync(join(agent, "settings.json"), JSON.stringify({ sessionDir: "~/from-settings", other: 1 }));
		expect(sessionPlaces({ env: { ...env, PI_CODING_AGENT_SESSION_DIR: "" }, cwd: "/w" })).toMatchObject({
			custom: join(homedir(), "from-settings"),
			customFrom: "settings.json",
		});
	});

	const unusable: Array<[string, (settings: string) => void]> = [
		["settings.json missing", () => {}],
		["not JSON", (p) => writeFileSync(p, "{ sessionDir: ")],
		["JSON null", (p) => writeFileSync(p, "null")],
		["sessionDir not a string", (p) => writeFileSync(p, JSON.stringify({ sessionDir: 42 }))],
		["sessionDir empty", (p) => writeFileSync(p, JSON.stringify({ sessionDir: "" }))],
		["settings.json a directory", (p) => mkdirSync(p)],
	];
	for (const [name, make] of unusable) {
		test(`${name}: no custom directory`, () => {
			const { agent, env } = sandbox();
			make(join(agent, "settings.json"));
			expect(sessionPlaces({ env, cwd: "/w" })).toMatchObject({ custom: null, customFrom: null });
		});
	}

	test("settings.json unreadable (permission denied): no custom directory", () => {
		const { root, agent, env } = sandbox();
		const settings = join(agent, "settings.json");
		writeFileSync(settings, JSON.stringify({ sessionDir: "/from/settings" }));
		// The same file is used when it can be read, so the denial is what leaves it out.
		expect(sessionPlaces({ env, cwd: "/w" }).custom).toBe("/from/settings");
		chmodSync(settings, 0o000);
		openToOthers(root, agent);
		expect(asUnprivileged(() => sessionPlaces({ env, cwd: "/w" }))).toMatchObject({ custom: null, customFrom: null });
	});
});

describe("sessionInfo", () => {
	test("the header's id, cwd and version, the file's size and modification time", () => {
		const { root } = sandbox();
		const text = `${header({ version: 3, id: "abc", cwd: "/p" })}\n{"type":"message"}\n`;
		const path = writeAt(join(root, "s.jsonl"), text, 5);
		expect(sessionInfo(path)).toEqual({
			path,
			id: "abc",
			cwd: "/p",
			version: 3,
			size: Buffer.byteLength(text),
			mtimeMs: T0 + 5 * 60_000,
		});
	});

	test("a header without a version is v1; a non-string id or cwd reads as null", () => {
		const { root } = sandbox();
		const path = writeAt(join(root, "s.jsonl"), header({ id: 7, cwd: ["/p"], version: "3" }));
		expect(sessionInfo(path)).toMatchObject({ id: null, cwd: null, version: 1 });
	});

	test("like Pi, blank, unparsable and non-object lines before the header are skipped", () => {
		const { root } = sandbox();
		const text = `\n   \nnot json\n[1,2]\n"text"\n${header({ id: "late", cwd: "/p", version: 2 })}`;
		// No newline after the header: the last line still counts.
		expect(sessionInfo(writeAt(join(root, "s.jsonl"), text))).toMatchObject({ id: "late", version: 2 });
	});

	test("a header longer than one read (16 KiB) is read whole", () => {
		const { root } = sandbox();
		const cwd = `/${"d".repeat(40_000)}`;
		expect(sessionInfo(writeAt(join(root, "s.jsonl"), session("long", cwd)))?.cwd).toBe(cwd);
	});

	const notSessions: Array<[string, string]> = [
		["an empty file", ""],
		["only blank lines", "\n \n\t\n"],
		["only unparsable lines", "{\nnope\n"],
		["a first object that is not a header", `{"type":"message","id":"a"}\n${header({ id: "s" })}\n`],
		["a header after more than 1 MiB of other lines", `${"x".repeat((1 << 20) + 1)}\n${header({ id: "s" })}\n`],
	];
	for (const [name, text] of notSessions) {
		test(`${name}: null`, () => {
			const { root } = sandbox();
			expect(sessionInfo(writeAt(join(root, "s.jsonl"), text))).toBeNull();
		});
	}

	test("a missing file, a directory: null", () => {
		const { root } = sandbox();
		expect(sessionInfo(join(root, "missing.jsonl"))).toBeNull();
		mkdirSync(join(root, "dir.jsonl"));
		expect(sessionInfo(join(root, "dir.jsonl"))).toBeNull();
	});

	test("an unreadable file (permission denied): null", () => {
		const { root } = sandbox();
		const path = writeAt(join(root, "s.jsonl"), session("s", "/p"));
		expect(sessionInfo(path)?.id).toBe("s");
		chmodSync(path, 0o000);
		openToOthers(root);
		expect(asUnprivileged(() => sessionInfo(path))).toBeNull();
	});
});

describe("listSessions", () => {
	test("Pi's layout: every project's .jsonl files with a header, newest first", () => {
		const { env } = sandbox();
		const places = sessionPlaces({ env, cwd: "/w" });
		const a = writeAt(join(places.root, "--a--", "1_a.jsonl"), session("a", "/a"), 1);
		const b = writeAt(join(places.root, "--b--", "2_b.jsonl"), session("b", "/b"), 3);
		const c = writeAt(join(places.root, "--b--", "3_c.jsonl"), session("c", "/b"), 2);
		writeAt(join(places.root, "--b--", "notes.txt"), session("txt", "/b"), 9);
		writeAt(join(places.root, "--b--", "bad.jsonl"), "not a session\n", 9);
		writeAt(join(places.root, "loose.jsonl"), session("loose", "/"), 9);
		mkdirSync(join(places.root, "--b--", "sub.jsonl"));
		expect(paths(listSessions(places))).toEqual([b, c, a]);
		expect(listSessions(places).map((s) => s.id)).toEqual(["b", "c", "a"]);
	});

	test("equal modification times: by file name, last first, whatever order the directory lists them in", () => {
		const { env } = sandbox();
		const places = sessionPlaces({ env, cwd: "/w" });
		// Created out of name order, in two folders, all at the same minute.
		for (const [dir, name] of [
			["--x--", "c"],
			["--y--", "e"],
			["--x--", "a"],
			["--y--", "b"],
			["--x--", "f"],
			["--y--", "d"],
		]) {
			writeAt(join(places.root, dir as string, `${name}.jsonl`), session(name as string, "/w"), 1);
		}
		expect(listSessions(places).map((s) => s.id)).toEqual(["f", "e", "d", "c", "b", "a"]);
	});

	test("a custom directory is flat: its own .jsonl files only", () => {
		const { root, env } = sandbox();
		const custom = join(root, "custom");
		const x = writeAt(join(custom, "x.jsonl"), session("x", "/p"), 2);
		const y = writeAt(join(custom, "y.jsonl"), session("y", "/q"), 4);
		writeAt(join(custom, "nested", "z.jsonl"), session("z", "/p"), 6);
		expect(paths(listSessions(sessionPlaces({ flag: custom, env, cwd: "/w" })))).toEqual([y, x]);
	});

	test("a missing root, a missing custom directory, a custom path that is a file: nothing", () => {
		const { root, env } = sandbox();
		expect(listSessions(sessionPlaces({ env, cwd: "/w" }))).toEqual([]);
		expect(listSessions(sessionPlaces({ flag: join(root, "nope"), env, cwd: "/w" }))).toEqual([]);
		const file = writeAt(join(root, "file.jsonl"), session("f", "/w"));
		expect(listSessions(sessionPlaces({ flag: file, env, cwd: "/w" }))).toEqual([]);
	});

	test("an unreadable project directory (permission denied) is left out; the others are listed", () => {
		const { root, agent, env } = sandbox();
		const places = sessionPlaces({ env, cwd: "/w" });
		const open = writeAt(join(places.root, "--open--", "o.jsonl"), session("o", "/open"), 1);
		const closed = writeAt(join(places.root, "--closed--", "c.jsonl"), session("c", "/closed"), 2);
		expect(paths(listSessions(places))).toEqual([closed, open]);
		chmodSync(join(places.root, "--closed--"), 0o000);
		openToOthers(root, agent, places.root, join(places.root, "--open--"));
		expect(asUnprivileged(() => paths(listSessions(places)))).toEqual([open]);
	});
});

describe("mostRecentSession", () => {
	test("Pi's layout: the newest session of the working directory's own folder", () => {
		const { env } = sandbox();
		const places = sessionPlaces({ env, cwd: "/work/p" });
		writeAt(join(places.cwdDir, "old.jsonl"), session("old", "/work/p"), 1);
		const newest = writeAt(join(places.cwdDir, "new.jsonl"), session("new", "/elsewhere"), 2);
		writeAt(join(places.cwdDir, "newer-but-no-header.jsonl"), "{}\n", 3);
		writeAt(join(defaultSessionDir("/work/other", env), "other.jsonl"), session("other", "/work/other"), 9);
		// The folder says whose sessions they are: the header's cwd is not checked here.
		expect(mostRecentSession(places)?.path).toBe(newest);
	});

	test("a custom directory: the newest whose header's cwd is the working directory", () => {
		const { root, env } = sandbox();
		const custom = join(root, "custom");
		const places = sessionPlaces({ flag: custom, env, cwd: "/work/p" });
		const mine = writeAt(join(custom, "mine.jsonl"), session("mine", "/work/p/"), 1);
		writeAt(join(custom, "theirs.jsonl"), session("theirs", "/work/q"), 2);
		writeAt(join(custom, "nocwd.jsonl"), `${header({ id: "nocwd" })}\n`, 3);
		expect(mostRecentSession(places)?.path).toBe(mine);
	});

	test("a custom directory that is the working directory's own folder is not filtered by cwd", () => {
		const { env } = sandbox();
		const cwdDir = defaultSessionDir("/work/p", env);
		const places = sessionPlaces({ flag: cwdDir, env, cwd: "/work/p" });
		const theirs = writeAt(join(cwdDir, "theirs.jsonl"), session("theirs", "/work/q"), 2);
		expect(mostRecentSession(places)?.path).toBe(theirs);
	});

	test("no session, no folder: null", () => {
		const { root, env } = sandbox();
		expect(mostRecentSession(sessionPlaces({ env, cwd: "/work/p" }))).toBeNull();
		const custom = join(root, "custom");
		writeAt(join(custom, "theirs.jsonl"), session("theirs", "/work/q"));
		expect(mostRecentSession(sessionPlaces({ flag: custom, env, cwd: "/work/p" }))).toBeNull();
	});
});

describe("findSession", () => {
	function places(): SessionPlaces {
		const { root, env } = sandbox();
		const custom = join(root, "custom");
		writeAt(join(custom, "1.jsonl"), session("abc-1", "/p"), 1);
		writeAt(join(custom, "2.jsonl"), session("abc-2", "/p"), 2);
		writeAt(join(custom, "3.jsonl"), session("abc", "/p"), 3);
		writeAt(join(custom, "4.jsonl"), session("dup", "/p"), 4);
		writeAt(join(custom, "5.jsonl"), session("dup", "/p"), 5);
		writeAt(join(custom, "6.jsonl"), session("xyz-unique", "/p"), 6);
		writeAt(join(custom, "7.jsonl"), session("dup-longer", "/p"), 7);
		return sessionPlaces({ flag: custom, env, cwd: "/work/p" });
	}

	test("anything that looks like a path is a path (resolved against cwd, ~ expanded), read or not", () => {
		const p = places();
		expect(findSession("sub/s", p)).toEqual({ type: "found", path: "/work/p/sub/s", by: "path" });
		expect(findSession("x.jsonl", p)).toEqual({ type: "found", path: "/work/p/x.jsonl", by: "path" });
		expect(findSession("a\\b", p)).toEqual({ type: "found", path: "/work/p/a\\b", by: "path" });
		expect(findSession("~/s/x", p)).toEqual({ type: "found", path: join(homedir(), "s/x"), by: "path" });
		expect(findSession("/abs/missing", p)).toEqual({ type: "found", path: "/abs/missing", by: "path" });
	});

	test("an exact id wins over a longer id it prefixes", () => {
		const p = places();
		expect(findSession("abc", p)).toEqual({ type: "found", path: join(p.custom as string, "3.jsonl"), by: "id" });
	});

	test("a unique prefix finds its session", () => {
		const p = places();
		expect(findSession("xyz", p)).toEqual({ type: "found", path: join(p.custom as string, "6.jsonl"), by: "prefix" });
	});

	test("two sessions with the same id (not those it prefixes), or a prefix of several: ambiguous, newest first", () => {
		const p = places();
		const dir = p.custom as string;
		const dup = findSession("dup", p);
		expect(dup.type === "ambiguous" && paths(dup.matches)).toEqual([join(dir, "5.jsonl"), join(dir, "4.jsonl")]);
		const prefix = findSession("abc-", p);
		expect(prefix.type === "ambiguous" && paths(prefix.matches)).toEqual([join(dir, "2.jsonl"), join(dir, "1.jsonl")]);
	});

	test("no match: not found, naming where it looked", () => {
		const p = places();
		expect(findSession("zzz", p)).toEqual({ type: "not-found", searched: p.custom as string });
		const { env } = sandbox();
		const layout = sessionPlaces({ env, cwd: "/w" });
		expect(findSession("zzz", layout)).toEqual({ type: "not-found", searched: layout.root });
	});
});
