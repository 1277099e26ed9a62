// The release tooling: the five targets, file names, SHA256SUMS in sha256sum's format, the Mach-O
// signature check, and a workflow that builds, signs and smoke-runs every one of them.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { checkMachOSignature } from "../../scripts/macho-signature.ts";
import { binaryName, TARGETS, writeSums } from "../../scripts/release.ts";
import { REPO } from "./helpers.ts";

const dir = mkdtempSync(join(tmpdir(), "cf-release-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("release", () => {
	test("five targets, named by version and platform", () => {
		expect(Object.keys(TARGETS)).toEqual(["linux-x64", "linux-arm64", "darwin-x64", "darwin-arm64", "windows-x64"]);
		expect(binaryName("1.2.3", "linux-x64")).toBe("context-fold-1.2.3-linux-x64");
		expect(binaryName("1.2.3", "windows-x64")).toBe("context-fold-1.2.3-windows-x64.exe");
	});

	test("SHA256SUMS: '<sha256>  <file>' per binary, sorted, as sha256sum -c reads it", () => {
		writeFileSync(join(dir, "context-fold-1.0.0-linux-x64"), "abc");
		writeFileSync(join(dir, "context-fold-1.0.0-darwin-arm64"), "");
		writeFileSync(join(dir, "notes.txt"), "not a binary");
		writeSums(dir);
		expect(readFileSync(join(dir, "SHA256SUMS"), "utf8")).toBe(
			[
				"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855  context-fold-1.0.0-darwin-arm64",
				"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad  context-fold-1.0.0-linux-x64",
				"",
			].join("\n"),
		);
	});

	test("the signature check tells Mach-O from other files", () => {
		expect(checkMachOSignature(join(dir, "notes.txt"))).toEqual({ status: "not-macho" });
	});

	test("the workflow: tag-triggered, tests first, every target built, darwin re-signed, all smoke-run, sums after signing", () => {
		const wf = Bun.YAML.parse(readFileSync(join(REPO, ".github/workflows/release.yml"), "utf8")) as {
			on: { push: { tags: string[] } };
			jobs: Record<
				string,
				{
					needs?: string | string[];
					steps: Array<{ run?: string }>;
					strategy?: { matrix: { include: Array<Record<string, string>> } };
				}
			>;
		};
		expect(wf.on.push.tags).toEqual(["v*"]);
		expect(wf.jobs.build?.needs).toBe("test");
		expect(wf.jobs.test?.steps.some((s) => s.run === "npm test")).toBe(true);
		expect(wf.jobs.build?.steps.some((s) => s.run === "npm run release")).toBe(true);
		const signed = wf.jobs.macos?.strategy?.matrix.include.map((m) => m.target);
		expect(signed).toEqual(["darwin-x64", "darwin-arm64"]);
		const smoked = wf.jobs.smoke?.strategy?.matrix.include.map((m) => m.file?.replace(/\.exe$/, ""));
		expect([...(signed ?? []), ...(smoked ?? [])].sort()).toEqual(Object.keys(TARGETS).sort());
		const publish = wf.jobs.publish;
		expect(publish?.needs).toEqual(["build", "macos", "smoke"]);
		expect(publish?.steps.map((s) => s.run ?? "").join("\n")).toContain("sha256sum -c SHA256SUMS");
	});
});
