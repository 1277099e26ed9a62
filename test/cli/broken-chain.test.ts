// A session whose message chain is broken (bytes garbled in the middle: the entry the rest continue
// from is lost): status and simulate say what their figures cover instead of presenting them as the
// session's, through main(argv, io).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { memIo, runCli } from "./helpers.ts";

const T = "2025-12-01T10:00:00.000Z";
let root = "";
let broken = "";
let intact = "";

/** A v3 session of `n` exchanges (a prompt and an answer with usage), each entry continuing from the last. */
function exchanges(n: number): string[] {
	const lines = [
		JSON.stringify({
			type: "session",
			version: 3,
			id: "0190beef-0000-7000-8000-000000000001",
			timestamp: T,
			cwd: "/p",
		}),
	];
	let parent: string | null = null;
	for (let i = 1; i <= n; i++) {
		for (const role of ["user", "assistant"] as const) {
			const id = `${role[0]}${i}`;
			const message =
				role === "user"
					? { role, content: [{ type: "text", text: `step ${i}` }], timestamp: i }
					: {
							role,
							content: [{ type: "text", text: `done ${i}` }],
							api: "anthropic-messages",
							provider: "anthropic",
							model: "claude-sonnet-4-5",
							usage: { input: 100, output: 10, cacheRead: 1_000 * i, cacheWrite: 100 },
							stopReason: "stop",
							timestamp: i,
						};
			lines.push(JSON.stringify({ type: "message", id, parentId: parent, timestamp: T, message }));
			parent = id;
		}
	}
	return lines;
}

beforeAll(() => {
	root = mkdtempSync(join(tmpdir(), "cf-broken-"));
	const lines = exchanges(20);
	intact = join(root, "intact.jsonl");
	writeFileSync(intact, `${lines.join("\n")}\n`);
	// Garble the bytes of the 11th answer (line 23): the 12th prompt continues from an entry that is gone.
	const damaged = [...lines];
	damaged[22] = "x".repeat((damaged[22] as string).length);
	broken = join(root, "broken.jsonl");
	writeFileSync(broken, `${damaged.join("\n")}\n`);
});
afterAll(() => rmSync(root, { recursive: true, force: true }));
const io = () => memIo({ env: { PI_CODING_AGENT_DIR: join(root, "agent") }, cwd: root });

const NOTE = (path: string) =>
	`the message chain of ${path} is broken at line 24 (it continues from entry a11, which is not in the file): the figures cover only the 18 entries from there on, 9 of the file's 19 responses, not the whole session`;

describe("a broken message chain", () => {
	test("status says what its figures cover, in the text, the JSON and on stderr", async () => {
		const r = await runCli(["status", broken], io());
		expect(r.code).toBe(0);
		expect(r.stdout.split("\n")[1]).toBe(`  ⚠ ${NOTE(broken)}`);
		expect(r.stdout).toContain("(9 responses)");
		expect(r.stderr).toContain(NOTE(broken));
		const j = JSON.parse((await runCli(["status", broken, "--json"], io())).stdout);
		expect(j.session.brokenChain).toEqual({ line: 24, missingParent: "a11", responses: 9, fileResponses: 19 });
	});

	test("an intact session says nothing of the kind", async () => {
		const r = await runCli(["status", intact, "--json"], io());
		expect(JSON.parse(r.stdout).session.brokenChain).toBeNull();
		expect(r.stderr).toBe("");
	});

	test("simulate says it too", async () => {
		const r = await runCli(["simulate", broken, "--json"], io());
		expect(r.code).toBe(0);
		expect(r.stderr).toContain(NOTE(broken));
	});
});
