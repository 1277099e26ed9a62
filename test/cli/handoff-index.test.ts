// handoff through main(argv, io): a session that never folded gets an index extracted from its own
// messages (no pointer to a seed index that does not exist), Pi's temporary files stay out of it,
// and a session with an index is not read past its header.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { extractSeedRecord } from "../../src/core/seed/extract.ts";
import { sessionDataDir } from "../../src/store/paths.ts";
import { appendSeedRecord } from "../../src/store/seed-index.ts";
import { foldInput } from "../core/seed/fixtures.ts";
import { memIo, runCli } from "./helpers.ts";
import { writeFoldedSession } from "./sessions-fixture.ts";

let root = "";
let env: NodeJS.ProcessEnv = {};
const TEMP = "/var/folders/49/l4171l3n219_xwq30fmyzr8w0000gn/T/pi-bash-a4cd2460b5b4e0be.log";
const OUTPUT = [
	"FAIL src/auth/login.test.ts > rejects an expired token",
	"Error: expected 401, got 500 at src/auth/login.ts:42",
	"",
	`[Showing lines 1801-3000 of 3000. Full output: ${TEMP}]`,
].join("\n");

beforeAll(() => {
	root = mkdtempSync(join(tmpdir(), "cf-handoff-"));
	env = { PI_CODING_AGENT_DIR: join(root, "agent"), HOME: join(root, "home") };
	mkdirSync(join(root, "s"));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));
const io = () => memIo({ env, cwd: root });

describe("handoff", () => {
	test("a session that never folded: the index is extracted from its messages, and says so", async () => {
		const id = "0190abcd-0000-7000-8000-000000000001";
		const path = writeFoldedSession(join(root, "s", "never.jsonl"), {
			id,
			text: OUTPUT,
			command: "npm test -- src/auth",
			fullOutputPath: TEMP,
			unfolded: true,
		});
		const r = await runCli(["handoff", path, "--goal", "fix the login test", "--json"], io());
		expect(r.code).toBe(0);
		const j = JSON.parse(r.stdout);
		expect(j).toMatchObject({ schema: "context-fold/handoff@1", indexPath: null, records: 1, invalid: 0 });
		const seed = readFileSync(j.path, "utf8");
		expect(seed).toContain(
			"- No seed index had been written (nothing was folded or compacted), so the index below was extracted from the session's messages when this seed was written.",
		);
		expect(seed).not.toContain("seed-index.jsonl");
		expect(seed).not.toContain("(The index is empty");
		expect(seed).toContain("src/auth/login.ts");
		expect(seed).toContain("npm test -- src/auth");
		expect(seed).toContain("Error: expected 401, got 500 at src/auth/login.ts:42");
		expect(seed).toContain("run the tests");
		// Pi's own temporary file is no file of the project, and its hex is no identifier.
		expect(seed).not.toContain("pi-bash");
		expect(seed).not.toContain("a4cd2460b5b4e0be");
		expect(seed).not.toContain("l4171l3n219_xwq30fmyzr8w0000gn");
		expect(seed).not.toMatch(/\b1801\b|\b3000\b/);
		// The index file itself was not invented.
		expect(existsSync(join(sessionDataDir(id, env), "seed-index.jsonl"))).toBe(false);
		const text = await runCli(["handoff", path], io());
		expect(text.stdout.split("\n")[1]).toBe(
			"  from the session's messages (it never folded or compacted, so no seed index had been written)",
		);
	});

	test("with an index, only the header is read: damage further down the file does not matter", async () => {
		const id = "0190abcd-0000-7000-8000-000000000002";
		const path = writeFoldedSession(join(root, "s", "indexed.jsonl"), { id, text: "ok", unfolded: true });
		appendFileSync(path, "{not json\n".repeat(3));
		appendSeedRecord(sessionDataDir(id, env), extractSeedRecord(foldInput()));
		const r = await runCli(["handoff", path, "--goal", "go on"], io());
		expect(r.code).toBe(0);
		// A whole read would have said "3 unreadable lines ... were skipped".
		expect(r.stderr).toBe("");
		expect(r.stdout).toContain(`  from 1 index record in ${join(sessionDataDir(id, env), "seed-index.jsonl")}`);
	});

	test("a missing file and a file that is not a session keep their exit codes (3, 5)", async () => {
		expect((await runCli(["handoff", join(root, "nope.jsonl")], io())).code).toBe(3);
		const empty = join(root, "s", "empty.jsonl");
		appendFileSync(empty, "");
		const r = await runCli(["handoff", empty], io());
		expect(r.code).toBe(5);
		expect(r.stderr).toBe(`context-fold: ${empty} is not a Pi session file: it is empty\n`);
	});
});
