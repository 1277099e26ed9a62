/**
 * Release binaries: the CLI compiled with Bun for every supported platform, into dist/release/, with
 * SHA256SUMS beside them. Cross-compiling fetches each target's Bun runtime from the npm registry.
 * The binary for the machine running this is smoke-run with --version; the others cannot run here.
 *
 *   bun scripts/release.ts                     every target
 *   bun scripts/release.ts --targets linux-x64,darwin-arm64
 *   bun scripts/release.ts --sums dist/release (only rewrite SHA256SUMS, e.g. after macOS signing)
 */
import { createHash } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { arch, platform } from "node:os";
import { join } from "node:path";
import { compileBinary, smokeRun } from "./build.ts";
import { checkMachOSignature, describeSignature } from "./macho-signature.ts";

export const TARGETS = {
	"linux-x64": "bun-linux-x64",
	"linux-arm64": "bun-linux-arm64",
	"darwin-x64": "bun-darwin-x64",
	"darwin-arm64": "bun-darwin-arm64",
	"windows-x64": "bun-windows-x64",
} as const satisfies Record<string, Bun.Build.CompileTarget>;

export type ReleaseTarget = keyof typeof TARGETS;

const OUT = "dist/release";
const pkg = JSON.parse(readFileSync("package.json", "utf8")) as { version: string };

export function binaryName(version: string, target: ReleaseTarget): string {
	return `context-fold-${version}-${target}${target.startsWith("windows") ? ".exe" : ""}`;
}

/** SHA256SUMS in the format `sha256sum -c` reads: "<hex>  <file>", sorted by file name. */
export function writeSums(dir: string): string {
	const files = readdirSync(dir)
		.filter((f) => f.startsWith("context-fold-"))
		.sort();
	const lines = files.map(
		(f) =>
			`${createHash("sha256")
				.update(readFileSync(join(dir, f)))
				.digest("hex")}  ${f}`,
	);
	const path = join(dir, "SHA256SUMS");
	writeFileSync(path, `${lines.join("\n")}\n`);
	return path;
}

function hostTarget(): ReleaseTarget | null {
	const os = platform() === "win32" ? "windows" : platform();
	const cpu = arch() === "arm64" ? "arm64" : arch() === "x64" ? "x64" : null;
	const name = `${os}-${cpu}`;
	return name in TARGETS ? (name as ReleaseTarget) : null;
}

async function main(argv: readonly string[]): Promise<void> {
	const sumsAt = argv.indexOf("--sums");
	if (sumsAt >= 0) {
		const dir = argv[sumsAt + 1] ?? OUT;
		console.log(`wrote ${writeSums(dir)}`);
		return;
	}
	const at = argv.indexOf("--targets");
	const wanted = at >= 0 ? (argv[at + 1] ?? "").split(",").filter(Boolean) : Object.keys(TARGETS);
	for (const t of wanted)
		if (!(t in TARGETS)) throw new Error(`unknown target ${t}; known: ${Object.keys(TARGETS).join(", ")}`);
	rmSync(OUT, { recursive: true, force: true });
	mkdirSync(OUT, { recursive: true });
	const host = hostTarget();
	for (const t of wanted as ReleaseTarget[]) {
		const file = join(OUT, binaryName(pkg.version, t));
		const started = performance.now();
		await compileBinary(file, TARGETS[t]);
		console.log(`built ${file} (${TARGETS[t]}) in ${((performance.now() - started) / 1000).toFixed(1)} s`);
		if (t === host) smokeRun(`./${file}`);
		else console.log(`  not run here (this machine is ${host ?? `${platform()}-${arch()}`})`);
		if (t.startsWith("darwin")) console.log(`  code signature: ${describeSignature(checkMachOSignature(file))}`);
	}
	console.log(`wrote ${writeSums(OUT)}`);
}

if (import.meta.main) await main(process.argv.slice(2));
