// The environment and command line for a sandboxed Pi: nothing from the caller's keys, config or temp dirs leaks in.
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { Sandbox } from "./sandbox.ts";

export const PI_VERSIONS = ["0.80.6", "1.6.0"] as const;
export type PiVersion = (typeof PI_VERSIONS)[number];

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");
/** Pi needs Node >= 22.19; the machine's own node may be older, so always use the pinned one. */
export const NODE_BIN = join(REPO_ROOT, "node_modules/.bin/node");

const PACKAGE_DIRS: Record<PiVersion, string> = {
	"0.80.6": join(REPO_ROOT, "node_modules/pi-legacy"),
	"1.6.0": join(REPO_ROOT, "node_modules/@earendil-works/pi-coding-agent"),
};

/** The CLI script from the package's own `bin` (dist/cli.js in 0.80.6, dist/bundle/cli.js in 1.6.0). */
export function piCliPath(version: PiVersion): string {
	const dir = PACKAGE_DIRS[version];
	const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as {
		version: string;
		bin: string | Record<string, string>;
	};
	if (pkg.version !== version) throw new Error(`${dir} holds Pi ${pkg.version}, expected ${version}`);
	const bin = typeof pkg.bin === "string" ? pkg.bin : pkg.bin.pi;
	if (!bin) throw new Error(`${dir}/package.json has no pi bin`);
	return join(dir, bin);
}

/**
 * Variables dropped from the caller's environment: provider credentials, context-fold's own switches,
 * Pi's config overrides, proxies (the fake is on loopback) and runtime hooks that would change Node.
 */
const DROPPED = [
	/API_KEY/i,
	/TOKEN/i,
	/SECRET/i,
	/CREDENTIALS/i,
	/PASSWORD/i,
	/^(ANTHROPIC|OPENAI|AZURE|AWS|GOOGLE|GEMINI|VERTEX|MISTRAL|GROQ|XAI|OPENROUTER|DEEPSEEK|CEREBRAS|COPILOT|HF)_/,
	/^CONTEXTFOLD/,
	/^PI_/,
	/^XDG_/,
	/^(HTTP|HTTPS|ALL|NO)_PROXY$/i,
	/^NODE_(OPTIONS|PATH|EXTRA_CA_CERTS|COMPILE_CACHE)$/,
	/^BUN_/,
	/^TMUX/,
];

export function sanitizedEnv(source: NodeJS.ProcessEnv = process.env): Record<string, string> {
	const env: Record<string, string> = {};
	for (const [key, value] of Object.entries(source)) {
		if (value === undefined || DROPPED.some((re) => re.test(key))) continue;
		env[key] = value;
	}
	return env;
}

/** The preload that records every network connection Pi's process attempts (see net-guard.mjs). */
export const NET_GUARD = join(REPO_ROOT, "test/e2e/harness/net-guard.mjs");

/** Where the network guard of a sandbox's Pi runs writes its records. */
export function netLogPath(sandbox: Sandbox): string {
	return join(sandbox.root, "net.jsonl");
}

/** host:port of the fake model this sandbox points Pi at: the one connection a run may make. */
function fakeTarget(sandbox: Sandbox): string {
	try {
		const models = JSON.parse(readFileSync(join(sandbox.agentDir, "models.json"), "utf8")) as {
			providers?: Record<string, { baseUrl?: string }>;
		};
		return Object.values(models.providers ?? {})
			.map((p) => {
				const url = new URL(p.baseUrl ?? "");
				return `${url.hostname}:${url.port}`;
			})
			.join(",");
	} catch {
		return "";
	}
}

export interface NetRecord {
	kind: "tcp" | "udp" | "dns";
	target: string;
	allowed: boolean;
	pid: number;
	/** argv[1] of the process: Pi's CLI, or a tool it ran (npm, node scripts) that inherited the preload. */
	script: string;
	stack?: string;
}

/** Every connection attempt recorded in this sandbox so far. */
export function netRecords(sandbox: Sandbox): NetRecord[] {
	const path = netLogPath(sandbox);
	if (!existsSync(path)) return [];
	return readFileSync(path, "utf8")
		.split("\n")
		.filter((l) => l.length > 0)
		.map((l) => JSON.parse(l) as NetRecord);
}

/** Connections Pi's own process (the one context-fold runs in) made to anything but the fake model. */
export function netViolations(sandbox: Sandbox): NetRecord[] {
	const clis = new Set(PI_VERSIONS.map((v) => piCliPath(v)));
	return netRecords(sandbox).filter((r) => !r.allowed && clis.has(r.script));
}

/** Env for one Pi run: sanitized caller env, then sandbox isolation, then sandbox env, then `extra`. */
export function piEnv(sandbox: Sandbox, extra: Record<string, string> = {}): Record<string, string> {
	const env: Record<string, string> = {
		...sanitizedEnv(),
		HOME: sandbox.home,
		TMPDIR: sandbox.tmp,
		PI_CODING_AGENT_DIR: sandbox.agentDir,
		PI_OFFLINE: "1",
		PI_SKIP_VERSION_CHECK: "1",
		PI_TELEMETRY: "0",
		...sandbox.env,
		...extra,
	};
	// Every run records its network connections; Scenario.dispose fails the test on any but the fake's.
	env.NODE_OPTIONS = [`--import ${NET_GUARD}`, env.NODE_OPTIONS].filter((o) => o !== undefined && o !== "").join(" ");
	env.CF_NET_LOG = netLogPath(sandbox);
	env.CF_NET_ALLOW = fakeTarget(sandbox);
	return env;
}

export interface PiArgsOptions {
	/** Extension paths, each passed as `-e`. */
	extensions?: string[];
	/** Resume this session file (`--session`). */
	session?: string;
	/** Continue the most recent session (`-c`). */
	continue?: boolean;
	/** `-ne`: no extension discovery and, on 1.6.0, no built-in extensions. */
	noExtensions?: boolean;
	/** Extra CLI arguments, placed before the prompt. */
	args?: string[];
}

export function piArgs(sandbox: Sandbox, options: PiArgsOptions): string[] {
	const args = ["--session-dir", sandbox.sessionDir];
	for (const ext of options.extensions ?? []) args.push("-e", ext);
	if (options.session) args.push("--session", options.session);
	if (options.continue) args.push("-c");
	if (options.noExtensions) args.push("-ne");
	args.push(...(options.args ?? []));
	return args;
}

/** Registers one set of tests per Pi version, e.g. `forEachPiVersion((v) => describe(`pi ${v}`, ...))`. */
export function forEachPiVersion(fn: (version: PiVersion) => void): void {
	for (const version of PI_VERSIONS) fn(version);
}
