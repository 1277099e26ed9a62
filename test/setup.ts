// Isolate every test run: a private HOME and agent dir, no provider keys, no context-fold env leaking in.
import { afterAll } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { removeTraceDir } from "./helpers/traces.ts";

const root = mkdtempSync(join(tmpdir(), "cf-test-"));
process.env.HOME = join(root, "home");
process.env.PI_CODING_AGENT_DIR = join(root, "agent");
for (const key of Object.keys(process.env)) {
	if (key.startsWith("CONTEXTFOLD") || key.endsWith("_API_KEY")) delete process.env[key];
}
afterAll(() => {
	rmSync(root, { recursive: true, force: true });
	removeTraceDir();
});
