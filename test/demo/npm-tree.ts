/** `npm ls --depth=1` for ledgerline: its dependencies and theirs, as npm 9 draws the tree. */

const DEPS: Array<[string, string[]]> = [
	["decimal-kit@3.0.0", []],
	[
		"fastify@4.28.1",
		[
			"@fastify/ajv-compiler@3.6.0",
			"@fastify/error@3.4.1",
			"@fastify/fast-json-stringify-compiler@4.3.0",
			"abstract-logging@2.0.1",
			"avvio@8.4.0",
			"fast-content-type-parse@1.1.0",
			"find-my-way@8.2.2",
			"light-my-request@5.14.0",
			"pino@9.5.0 deduped",
			"process-warning@3.0.0",
			"proxy-addr@2.0.7",
			"rfdc@1.4.1",
			"secure-json-parse@2.7.0",
			"semver@7.6.3",
			"toad-cache@3.7.0",
		],
	],
	["pg@8.13.1", ["pg-connection-string@2.7.0", "pg-pool@3.7.0", "pg-protocol@1.7.0", "pg-types@2.2.0", "pgpass@1.0.5"]],
	[
		"pino@9.5.0",
		[
			"atomic-sleep@1.0.0",
			"fast-redact@3.5.0",
			"on-exit-leak-free@2.1.2",
			"pino-abstract-transport@2.0.0",
			"pino-std-serializers@7.0.0",
			"process-warning@4.0.0",
			"quick-format-unescaped@4.0.4",
			"real-require@0.2.0",
			"safe-stable-stringify@2.5.0",
			"sonic-boom@4.2.0",
			"thread-stream@3.1.0",
		],
	],
	["@types/node@22.10.2", ["undici-types@6.20.0"]],
	["@types/pg@8.11.10", ["@types/node@22.10.2 deduped", "pg-protocol@1.7.0 deduped", "pg-types@4.0.2"]],
	[
		"eslint@8.57.1",
		[
			"@eslint-community/eslint-utils@4.4.1",
			"@eslint-community/regexpp@4.12.1",
			"@eslint/eslintrc@2.1.4",
			"@eslint/js@8.57.1",
			"@humanwhocodes/config-array@0.13.0",
			"@humanwhocodes/module-importer@1.0.1",
			"ajv@6.12.6",
			"chalk@4.1.2",
			"cross-spawn@7.0.6",
			"debug@4.4.0",
			"doctrine@3.0.0",
			"escape-string-regexp@4.0.0",
			"eslint-scope@7.2.2",
			"espree@9.6.1",
			"esquery@1.6.0",
			"file-entry-cache@6.0.1",
			"glob-parent@6.0.2",
			"globals@13.24.0",
			"ignore@5.3.2",
			"js-yaml@4.1.0",
			"levn@0.4.1",
			"minimatch@3.1.2",
			"optionator@0.9.4",
			"strip-ansi@6.0.1",
			"text-table@0.2.0",
		],
	],
	["typescript@5.6.3", []],
	[
		"vitest@2.1.9",
		[
			"@vitest/expect@2.1.9",
			"@vitest/mocker@2.1.9",
			"@vitest/pretty-format@2.1.9",
			"@vitest/runner@2.1.9",
			"@vitest/snapshot@2.1.9",
			"@vitest/spy@2.1.9",
			"@vitest/utils@2.1.9",
			"chai@5.1.2",
			"debug@4.4.0 deduped",
			"expect-type@1.1.0",
			"magic-string@0.30.17",
			"pathe@1.1.2",
			"std-env@3.8.0",
			"tinybench@2.9.0",
			"tinyexec@0.3.2",
			"tinypool@1.0.2",
			"tinyrainbow@1.2.0",
			"vite@5.4.11",
			"vite-node@2.1.9",
			"why-is-node-running@2.3.0",
		],
	],
];

export function npmTree(): string {
	const out = ["ledgerline@4.2.0 /home/dev/ledgerline"];
	for (const [i, [dep, subs]] of DEPS.entries()) {
		const last = i === DEPS.length - 1;
		out.push(`${last ? "└" : "├"}─┬ ${dep}`.replace("─┬", subs.length > 0 ? "─┬" : "──"));
		for (const [k, sub] of subs.entries())
			out.push(`${last ? " " : "│"} ${k === subs.length - 1 ? "└" : "├"}── ${sub}`);
	}
	return `${out.join("\n")}\n`;
}
