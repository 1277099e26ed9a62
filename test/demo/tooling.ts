/**
 * What ledgerline's toolchain prints: tsc (pretty, no colours), npm's failure footer, vitest and the
 * CI log. Pure renderers over the generated project, so every path, line and column in a log is real.
 */
import type { BugSite } from "./project.ts";
import type { Seeded } from "./seeded.ts";

const PACKAGE = "ledgerline@4.2.0";

/** npm's banner before a script's own output. */
export function npmBanner(script: string, command: string): string {
	return `\n> ${PACKAGE} ${script}\n> ${command}\n\n`;
}

/** npm 9's footer when a script fails (what the developer machine in this story runs). */
export function npmErr(script: string, command: string, code: number, log: string): string {
	return [
		`npm ERR! code ${code === 1 ? "1" : "ELIFECYCLE"}`,
		`npm ERR! errno ${code}`,
		`npm ERR! path /home/dev/ledgerline`,
		`npm ERR! command failed`,
		`npm ERR! command sh -c ${command}`,
		`npm ERR! ${PACKAGE} ${script}: \`${command}\``,
		`npm ERR! Exit status ${code}`,
		"npm ERR!",
		`npm ERR! Failed at the ${PACKAGE} ${script} script.`,
		"npm ERR! This is probably not a problem with npm. There is likely additional logging output above.",
		"",
		"npm ERR! A complete log of this run can be found in:",
		`npm ERR!     /home/dev/.npm/_logs/${log}-debug-0.log`,
		"",
	].join("\n");
}

function expand(line: string): string {
	return line.replace(/\t/g, "    ");
}

/** `tsc --pretty` output for the sites still broken, as it prints without a TTY's colours. */
export function tscReport(sites: readonly BugSite[]): string {
	if (sites.length === 0) return "";
	const out: string[] = [];
	for (const s of sites) {
		out.push(`${s.path}:${s.line}:${s.col} - error ${s.code}: ${s.message}`);
		if (s.detail) out.push(`  ${s.detail}`);
		out.push("");
		const prefix = `${s.line} `;
		out.push(`${prefix}${expand(s.text)}`);
		const lead = expand(s.text.slice(0, s.col - 1)).length;
		out.push(`${" ".repeat(prefix.length + lead)}${"~".repeat(s.span)}`, "", "");
	}
	const files = new Map<string, BugSite[]>();
	for (const s of sites) files.set(s.path, [...(files.get(s.path) ?? []), s]);
	out.push(
		`Found ${sites.length} error${sites.length === 1 ? "" : "s"} in ${files.size} file${files.size === 1 ? "" : "s"}.`,
	);
	out.push("", "Errors  Files");
	for (const [path, list] of files) out.push(`${String(list.length).padStart(6)}  ${path}:${list[0]?.line}`);
	return `${out.join("\n")}\n`;
}

const DEPRECATED = [
	"inflight@1.0.6: This module is not supported, and leaks memory. Do not use it.",
	"glob@7.2.3: Glob versions prior to v9 are no longer supported",
	"rimraf@3.0.2: Rimraf versions prior to v4 are no longer supported",
	"@humanwhocodes/config-array@0.13.0: Use @eslint/config-array instead",
	"@humanwhocodes/object-schema@2.0.3: Use @eslint/object-schema instead",
	"eslint@8.57.1: This version is no longer supported. Please see https://eslint.org/version-support for other options.",
	"abab@2.0.6: Use your platform's native atob() and btoa() methods instead",
	"domexception@4.0.0: Use your platform's native DOMException instead",
	"sourcemap-codec@1.4.8: Please use @jridgewell/sourcemap-codec instead",
	"lodash.get@4.4.2: This package is deprecated. Use the optional chaining (?.) operator instead.",
];

/** `gh run view <id> --log-failed`: job, step and timestamp before every line, as gh prints them. */
export function ciLog(r: Seeded, opts: { buildLine: string; sites: readonly BugSite[]; sha: string }): string {
	let ms = Date.UTC(2025, 2, 11, 8, 41, 7);
	const out: string[] = [];
	const emit = (step: string, text: string) => {
		ms += r.int(3, 420);
		const ts = new Date(ms).toISOString().replace(/\.(\d{3})Z$/, (_m, f: string) => `.${f}${r.int(1000, 9999)}Z`);
		for (const line of text.split("\n")) out.push(`build\t${step}\t${ts} ${line}`);
	};
	const setup = "Set up job";
	emit(setup, "Current runner version: '2.322.0'");
	emit(setup, "Operating System\nUbuntu\n24.04.2\nLTS");
	emit(setup, "Runner Image\nImage: ubuntu-24.04\nVersion: 20250302.1");
	emit(
		setup,
		"Included Software: https://github.com/actions/runner-images/blob/ubuntu24/20250302.1/images/ubuntu/Ubuntu2404-Readme.md",
	);
	emit(setup, "GITHUB_TOKEN Permissions\nActions: read\nContents: read\nMetadata: read\nPullRequests: read");
	emit(
		setup,
		"Secret source: Actions\nPrepare workflow directory\nPrepare all required actions\nGetting action download info",
	);
	emit(setup, "Download action repository 'actions/checkout@v4' (SHA:11bd71901bbe5b1630ceea73d27597364c9af683)");
	emit(setup, "Download action repository 'actions/setup-node@v4' (SHA:1d0ff469b7ec7b3cb9d8673fde0c81c44821de2a)");
	emit(setup, "Complete job name: build");
	const checkout = "Run actions/checkout@v4";
	emit(
		checkout,
		"Syncing repository: acme/ledgerline\nGetting Git version info\nTemporarily overriding HOME='/home/runner/work/_temp/3c1a' before making global git config changes",
	);
	emit(
		checkout,
		"/usr/bin/git version\ngit version 2.48.1\nDeleting the contents of '/home/runner/work/ledgerline/ledgerline'",
	);
	emit(
		checkout,
		`Initializing the repository\n/usr/bin/git init /home/runner/work/ledgerline/ledgerline\nhint: Using 'master' as the name for the initial branch.`,
	);
	emit(
		checkout,
		`/usr/bin/git -c protocol.version=2 fetch --no-tags --prune --no-recurse-submodules --depth=1 origin +${opts.sha}:refs/remotes/origin/main`,
	);
	emit(checkout, `From https://github.com/acme/ledgerline\n * [new ref]         ${opts.sha} -> origin/main`);
	emit(
		checkout,
		`/usr/bin/git checkout --progress --force -B main refs/remotes/origin/main\nSwitched to a new branch 'main'\nbranch 'main' set up to track 'origin/main'.`,
	);
	const meta = "Print build metadata";
	emit(
		meta,
		`Run echo "BUILD_ID=$BUILD_ID sha=$GITHUB_SHA ref=$GITHUB_REF runner=$RUNNER_LABEL attempt=$GITHUB_RUN_ATTEMPT"`,
	);
	emit(meta, opts.buildLine);
	emit(meta, "NODE_VERSION=22.14.0\nNPM_CONFIG_FUND=false\nTZ=UTC\nCI=true");
	const node = "Run actions/setup-node@v4";
	emit(
		node,
		"Found in cache @ /opt/hostedtoolcache/node/22.14.0/x64\nEnvironment details\nnode: v22.14.0\nnpm: 10.9.2\nyarn: 1.22.22",
	);
	emit(
		node,
		"/opt/hostedtoolcache/node/22.14.0/x64/bin/npm config get cache\n/home/runner/.npm\nCache hit for: node-cache-Linux-x64-npm-5f1c0e2d",
	);
	emit(
		node,
		"Received 48234496 of 48234496 (100.0%), 61.2 MBs/sec\nCache Size: ~46 MB (48234496 B)\nCache restored successfully",
	);
	const ci = "Run npm ci";
	emit(ci, "npm ci");
	for (let round = 0; round < 2; round++) for (const d of DEPRECATED) emit(ci, `npm warn deprecated ${d}`);
	emit(
		ci,
		"\nadded 1187 packages, and audited 1188 packages in 38s\n\n214 packages are looking for funding\n  run `npm fund` for details\n\nfound 0 vulnerabilities",
	);
	const build = "Run npm run build";
	emit(build, "npm run build");
	emit(build, npmBanner("build", "tsc -p tsconfig.build.json --pretty && node scripts/bundle.mjs").trimEnd());
	for (const line of tscReport(opts.sites).trimEnd().split("\n")) emit(build, line);
	emit(build, "npm error code 2\nnpm error path /home/runner/work/ledgerline/ledgerline");
	emit(
		build,
		"npm error command failed\nnpm error command sh -c tsc -p tsconfig.build.json --pretty && node scripts/bundle.mjs",
	);
	emit(
		build,
		"npm error A complete log of this run can be found in: /home/runner/.npm/_logs/2025-03-11T08_42_31_904Z-debug-0.log",
	);
	emit(build, "##[error]Process completed with exit code 2.");
	const post = "Post Run actions/checkout@v4";
	emit(post, "Post job cleanup.\n/usr/bin/git version\ngit version 2.48.1");
	emit(post, "Temporarily overriding HOME='/home/runner/work/_temp/9e47' before making global git config changes");
	emit(
		post,
		"/usr/bin/git config --local --name-only --get-regexp core\\.sshCommand\n/usr/bin/git submodule foreach --recursive sh -c \"git config --local --name-only --get-regexp 'core\\.sshCommand' && git config --local --unset-all 'core.sshCommand' || :\"",
	);
	emit("Complete job", "Cleaning up orphan processes");
	return `${out.join("\n")}\n`;
}
