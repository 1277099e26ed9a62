/**
 * The integration suite's world: its test files (names only; the agent never reads them), the
 * docker/postgres noise a run prints, and the three ways decimal-kit 3 breaks it.
 */
import type { Seeded } from "./seeded.ts";
import type { Failure, Suite } from "./suites.ts";

const INTEGRATION_SUITES: Array<[string, string[]]> = [
	["test/integration/invoices.int.test.ts", ["invoice repository", "invoice lifecycle", "invoice numbering"]],
	["test/integration/payments.int.test.ts", ["payment capture", "refunds", "chargebacks"]],
	["test/integration/api.int.test.ts", ["GET /invoices/:id", "POST /invoices", "GET /customers/:id/invoices"]],
	["test/integration/reports.int.test.ts", ["monthly summary", "aging report"]],
	["test/integration/migrations.int.test.ts", ["migrations"]],
];

const ITS = [
	"persists line items with their amounts",
	"round-trips a draft invoice",
	"finalizes and numbers invoices in order",
	"captures a partial payment",
	"refunds to the original method",
	"returns the invoice with string amounts",
	"rejects an unknown currency",
	"totals per currency",
	"applies every migration exactly once",
	"keeps credits separate from payments",
	"locks a finalized invoice",
	"lists invoices by customer",
];

export function integrationSuites(r: Seeded): Suite[] {
	return INTEGRATION_SUITES.map(([path, names]) => ({
		path,
		text: "",
		ms: r.int(300, 2400),
		describes: names.map((name) => {
			const pool = [...ITS];
			const tests = [];
			for (let i = r.int(8, 12); i > 0; i--) {
				tests.push({ name: pool.splice(r.int(0, pool.length - 1), 1)[0] as string, expected: "", line: 0, col: 0 });
			}
			return { name, tests };
		}),
	}));
}

/** The first test of a suite's describe, as vitest names it. */
export function firstTest(suites: readonly Suite[], path: string, describe: string, index = 0): string {
	const test = suites.find((s) => s.path === path)?.describes.find((d) => d.name === describe)?.tests[index];
	if (!test) throw new Error(`demo session: no test ${index} in ${path} > ${describe}`);
	return `${describe} > ${test.name}`;
}

export const AMOUNTS = ["129.90", "48.00", "1250.00", "19.99", "310.45", "7.50"];

const LINE_INSERT =
	"insert into invoice_lines (invoice_id, position, description, quantity, unit_price, amount, currency) values ($1, $2, $3, $4, $5, $6, $7)";

export function numericFailure(path: string, test: string, value: string, repoLine: number): Failure {
	const reason = `invalid input syntax for type numeric: "{"$decimal":"${value}"}"`;
	return {
		suite: path,
		test,
		reason,
		body: [
			`error: ${reason}`,
			" ❯ Parser.parseErrorMessage node_modules/pg-protocol/dist/parser.js:285:98",
			" ❯ Parser.handlePacket node_modules/pg-protocol/dist/parser.js:122:29",
			" ❯ Parser.parse node_modules/pg-protocol/dist/parser.js:35:38",
			" ❯ Socket.<anonymous> node_modules/pg-protocol/dist/index.js:11:42",
			` ❯ InvoiceRepository.insertLines src/db/repository.ts:${repoLine}:5`,
			` ❯ ${path}:${40 + value.length}:5`,
			"",
			`⎯⎯⎯⎯ Serialized Error: { length: 134, severity: 'ERROR', code: '22P02', detail: undefined, hint: undefined, position: undefined, internalPosition: undefined, internalQuery: undefined, where: "unnamed portal parameter $6 = '...'", schema: undefined, table: undefined, column: undefined, dataType: undefined, constraint: undefined, file: 'numeric.c', line: '7121', routine: 'set_var_from_str' }`,
		],
	};
}

export function snapshotFailure(path: string, test: string, amounts: readonly string[]): Failure {
	const diff: string[] = [];
	for (const [i, a] of amounts.entries()) {
		diff.push(`      "description": "Seat license ${i + 1}",`);
		diff.push(`-     "amount": "${a}",`, `+     "amount": {`, `+       "$decimal": "${a}",`, "+     },");
	}
	return {
		suite: path,
		test,
		reason: `Snapshot \`${test} 1\` mismatched`,
		body: [
			`Error: Snapshot \`${test} 1\` mismatched`,
			"",
			"- Expected",
			"+ Received",
			"",
			"  {",
			'    "currency": "EUR",',
			'    "id": "inv_000184",',
			'    "lines": Array [',
			...diff,
			"    ],",
			"  }",
			"",
			` ❯ ${path}:57:31`,
		],
	};
}

export function toFixedFailure(path: string, test: string, line: number, col: number): Failure {
	return {
		suite: path,
		test,
		reason: "row.amount.toFixed is not a function",
		body: [
			"TypeError: row.amount.toFixed is not a function",
			` ❯ src/reports/summary.ts:${line}:${col}`,
			" ❯ Array.map <anonymous>",
			` ❯ monthlyRows src/reports/summary.ts:${line - 3}:14`,
			` ❯ ${path}:88:22`,
		],
	};
}

/** What `docker compose up --wait` and the migrations print before the tests. */
export function globalSetup(r: Seeded): string {
	const out = [
		" Network ledgerline_default  Creating",
		" Network ledgerline_default  Created",
		" Container ledgerline-db-1  Creating",
		" Container ledgerline-db-1  Created",
		" Container ledgerline-db-1  Starting",
		" Container ledgerline-db-1  Started",
		" Container ledgerline-db-1  Waiting",
		" Container ledgerline-db-1  Healthy",
	];
	const migrations = ["init", "customers", "invoices", "invoice_lines", "payments", "credits", "tax_rules"];
	for (let i = 0; i < 21; i++) {
		const name = `${String(i + 1).padStart(4, "0")}_${migrations[i % migrations.length]}${i >= migrations.length ? `_v${Math.floor(i / migrations.length) + 1}` : ""}`;
		out.push(`[migrate] ${name}.sql applied (${r.int(2, 60)}ms)`);
	}
	out.push("[migrate] 21 migrations applied, schema version 21", "");
	return out.join("\n");
}

/** `docker compose logs db --tail N`: postgres's own log, with the statements it refused. */
export function postgresLog(r: Seeded, refused: readonly string[], lines: number): string {
	let ms = Date.UTC(2025, 2, 11, 9, 20, 2);
	const out: string[] = [];
	const ts = () => {
		ms += r.int(1, 900);
		return new Date(ms).toISOString().replace("T", " ").replace("Z", " UTC");
	};
	let pid = 61;
	while (out.length < lines) {
		pid++;
		out.push(`db-1  | ${ts()} [${pid}] LOG:  connection received: host=172.18.0.1 port=${r.int(40000, 60999)}`);
		out.push(`db-1  | ${ts()} [${pid}] LOG:  connection authorized: user=ledgerline database=ledgerline_test`);
		const value = refused[pid % refused.length];
		if (value !== undefined && r.chance(0.6)) {
			out.push(`db-1  | ${ts()} [${pid}] ERROR:  invalid input syntax for type numeric: "{"$decimal":"${value}"}"`);
			out.push(`db-1  | ${ts()} [${pid}] STATEMENT:  ${LINE_INSERT}`);
		}
		if (r.chance(0.3)) out.push(`db-1  | ${ts()} [58] LOG:  checkpoint starting: time`);
		out.push(
			`db-1  | ${ts()} [${pid}] LOG:  disconnection: session time: 0:00:0${r.int(0, 9)}.${r.int(100, 999)} user=ledgerline database=ledgerline_test host=172.18.0.1 port=${r.int(40000, 60999)}`,
		);
	}
	return `${out.join("\n")}\n`;
}

/** The API suite's snapshot file: amounts as plain strings, the way 2.x serialized them. */
export function snapshotFile(r: Seeded, firstName: string): string {
	const out = ["// Vitest Snapshot v1, https://vitest.dev/guide/snapshot.html", ""];
	for (let i = 0; i < 12; i++) {
		const name = i === 0 ? firstName : `GET /invoices/:id > fixture ${String(i).padStart(2, "0")}`;
		out.push(
			`exports[\`${name} 1\`] = \``,
			"{",
			'  "currency": "EUR",',
			`  "id": "inv_${String(184 + i).padStart(6, "0")}",`,
		);
		out.push('  "lines": [');
		for (let l = 0; l < r.int(2, 4); l++) {
			out.push("    {", `      "amount": "${r.pick(AMOUNTS)}",`, `      "description": "Seat license ${l + 1}",`);
			out.push(`      "quantity": ${r.int(1, 12)},`, '      "taxRate": "0.19",', "    },");
		}
		out.push(
			"  ],",
			`  "status": "${r.pick(["draft", "open", "paid"])}",`,
			`  "total": "${r.pick(AMOUNTS)}",`,
			"}",
			"`;",
			"",
		);
	}
	return out.join("\n");
}

/** src/db/migrations.ts: the schema, NUMERIC amounts included. */
export function migrationsTs(): string {
	const tables: Array<[string, string[]]> = [
		["customers", ["id text primary key", "name text not null", "currency char(3) not null"]],
		[
			"invoices",
			["id text primary key", "customer_id text references customers", "status text not null", "total numeric(14, 2)"],
		],
		[
			"invoice_lines",
			[
				"invoice_id text references invoices",
				"position int",
				"description text",
				"quantity int",
				"unit_price numeric(14, 2)",
				"amount numeric(14, 2)",
				"currency char(3)",
			],
		],
		[
			"payments",
			[
				"id text primary key",
				"invoice_id text references invoices",
				"amount numeric(14, 2)",
				"captured_at timestamptz",
			],
		],
		[
			"credits",
			["id text primary key", "customer_id text references customers", "amount numeric(14, 2)", "reason text"],
		],
	];
	const out = ['import type pg from "pg";', "", "export const MIGRATIONS: Array<[string, string]> = ["];
	for (const [i, [table, cols]] of tables.entries()) {
		out.push(`\t["${String(i + 1).padStart(4, "0")}_${table}", \``, `\t\tcreate table ${table} (`);
		out.push(...cols.map((c, k) => `\t\t\t${c}${k < cols.length - 1 ? "," : ""}`), "\t\t)", "\t`],");
	}
	out.push("];", "", "export async function migrate(pool: pg.Pool): Promise<void> {");
	out.push(
		"\tfor (const [name, sql] of MIGRATIONS) {",
		"\t\tawait pool.query(sql);",
		'\t\tconsole.log("[migrate]", name, "applied");',
		"\t}",
		"}",
		"",
	);
	return out.join("\n");
}
