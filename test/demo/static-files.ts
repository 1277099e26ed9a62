/**
 * ledgerline's hand-written files: manifests, the pg serializer, the integration setup, and the
 * installed decimal-kit 3.0.0 (its changelog and types), which the agent reads to learn what changed.
 */
import type { Seeded } from "./seeded.ts";

export const SERIALIZE_DATE_LINE = "\tif (value instanceof Date) return value.toISOString();";
export const HANDLER_SEND_LINE = "\treturn reply.send(invoice);";
export const SUMMARY_TOFIXED_LINE = "\t\t\tamount: row.amount.toFixed(2),";
export const PRORATION_MODE_LINE = `export const PRORATION_ROUNDING = "down" as const;`;
export const DECIMAL_SCALE_LINE = "export const DEFAULT_SCALE = 2;";

export const PACKAGE_JSON = `${JSON.stringify(
	{
		name: "ledgerline",
		version: "4.2.0",
		private: true,
		type: "module",
		scripts: {
			build: "tsc -p tsconfig.build.json --pretty && node scripts/bundle.mjs",
			test: "vitest run",
			"test:integration": "vitest run -c vitest.integration.config.ts",
			lint: "eslint src test",
		},
		dependencies: { "decimal-kit": "^3.0.0", fastify: "^4.28.1", pg: "^8.13.1", pino: "^9.5.0" },
		devDependencies: {
			"@types/node": "^22.10.2",
			"@types/pg": "^8.11.10",
			eslint: "^8.57.1",
			typescript: "~5.6.3",
			vitest: "^2.1.9",
		},
	},
	null,
	2,
)}\n`;

export const TSCONFIG_BUILD = `{
  "extends": "./tsconfig.json",
  "compilerOptions": {
    "outDir": "dist/types",
    "declaration": true,
    "emitDeclarationOnly": true,
    "noEmit": false
  },
  "include": ["src"],
  "exclude": ["src/**/__tests__", "test"]
}
`;

export const TSCONFIG = `{
  "compilerOptions": {
    "target": "ES2022",
    "module": "NodeNext",
    "moduleResolution": "NodeNext",
    "strict": true,
    "noUncheckedIndexedAccess": true,
    "exactOptionalPropertyTypes": true,
    "skipLibCheck": true,
    "noEmit": true
  },
  "include": ["src", "test"]
}
`;

export const SERIALIZE_TS = `/**
 * Domain values -> pg query parameters. Everything the repository writes goes through here.
 */
import { Decimal } from "decimal-kit";

export type Row = Record<string, unknown>;

/** Turns one domain value into a query parameter pg understands. */
export function toParam(value: unknown): unknown {
	if (value === null || value === undefined) return null;
${SERIALIZE_DATE_LINE}
	if (typeof value === "object") return JSON.stringify(value);
	return value;
}

/** Parameters for an insert, in column order. */
export function rowParams(row: Row, columns: readonly string[]): unknown[] {
	return columns.map((column) => toParam(row[column]));
}

/** A JSON-safe copy of a row for API responses and snapshots. */
export function serializeRow(row: Row): Row {
	const out: Row = {};
	for (const [key, value] of Object.entries(row)) {
		out[key] = value instanceof Decimal ? value.toString() : value;
	}
	return out;
}

export function placeholders(count: number, offset = 0): string {
	return Array.from({ length: count }, (_, i) => \`$\${i + 1 + offset}\`).join(", ");
}
`;

export const HANDLER_TAIL = [
	"export async function getInvoiceHandler(request: InvoiceRequest, reply: FastifyReply) {",
	"\tconst invoice = await repository.findInvoice(request.params.id);",
	'\tif (invoice === undefined) return reply.code(404).send({ error: "invoice not found" });',
	HANDLER_SEND_LINE,
	"}",
];

export const SUMMARY_TAIL = [
	"export function monthlyRows(rows: any[]) {",
	"\treturn rows.map((row) => ({",
	"\t\t\tmonth: row.month,",
	"\t\t\tcurrency: row.currency,",
	SUMMARY_TOFIXED_LINE,
	"\t}));",
	"}",
];

export const INTEGRATION_SETUP_TS = `import { execSync } from "node:child_process";
import pg from "pg";
import { afterAll, beforeAll } from "vitest";
import { migrate } from "../../src/db/migrations";

const url = process.env.DATABASE_URL ?? "postgres://ledgerline:ledgerline@127.0.0.1:5433/ledgerline_test";
export const pool = new pg.Pool({ connectionString: url, max: 4 });

beforeAll(async () => {
	execSync("docker compose -f docker-compose.test.yml up -d --wait db", { stdio: "inherit" });
	await migrate(pool);
	// decimal-kit parses NUMERIC columns, so amounts come back as Decimal, never as float.
	pg.types.setTypeParser(1700, (value) => value);
}, 60_000);

afterAll(async () => {
	await pool.end();
});

export async function truncateAll(): Promise<void> {
	await pool.query("truncate invoices, invoice_lines, payments, credits restart identity cascade");
}
`;

export const COMPOSE_YML = `services:
  db:
    image: postgres:16.4-alpine
    environment:
      POSTGRES_USER: ledgerline
      POSTGRES_PASSWORD: ledgerline
      POSTGRES_DB: ledgerline_test
    ports:
      - "5433:5432"
    healthcheck:
      test: ["CMD-SHELL", "pg_isready -U ledgerline"]
      interval: 1s
      retries: 30
    tmpfs:
      - /var/lib/postgresql/data
`;

export const PROJECT_CHANGELOG = `# Changelog

All notable changes to ledgerline are documented here.

## [Unreleased]

## [4.2.0] - 2025-02-27

### Changed
- Upgrade decimal-kit to 3.0.0.
- Invoice PDFs list credits before payments.

## [4.1.3] - 2025-02-10

### Fixed
- Proration of mid-cycle downgrades in leap years.
`;

/** decimal-kit 3.0.0's changelog: the migration notes the agent needs, after a long tail of releases. */
export function decimalKitChangelog(r: Seeded): string {
	const out = [
		"# decimal-kit changelog",
		"",
		"## 3.0.0",
		"",
		"### Breaking changes",
		"",
		"- `Decimal.from()` returns `Decimal | undefined` instead of throwing on unparseable input. Use",
		"  `Decimal.parse()` for the old throwing behaviour.",
		"- `Decimal#round(scale)` is removed. Use `Decimal#toDecimalPlaces(scale, mode)`.",
		"- `Decimal.sum()` accepts `DecimalInput[]` only; strings must be parsed first.",
		"- The default rounding mode is now `RoundingMode.HalfUp` (was `HalfEven`). Call",
		"  `Decimal.configure({ rounding: RoundingMode.HalfEven })` once at startup to keep 2.x results.",
		'- `Decimal#toJSON()` returns `{ "$decimal": "<digits>" }` so values survive a JSON round trip.',
		"  Code that relied on `JSON.stringify` producing a plain string must call `toString()`.",
		"- `Decimal#toFixed()` is removed. Use `toString(scale)`.",
		"",
		"### Added",
		"",
		"- `RoundingMode` enum, `Decimal.configure()`, `Decimal#toDecimalPlaces()`.",
		"",
	];
	for (let minor = 14; minor >= 0; minor--) {
		const patches = r.int(0, 3);
		for (let patch = patches; patch >= 0; patch--) {
			out.push(`## 2.${minor}.${patch}`, "");
			for (let i = r.int(1, 4); i > 0; i--) {
				out.push(
					`- ${r.pick(["Faster", "Smaller", "Stricter", "Clearer", "Cheaper"])} ${r.pick(["parsing of exponents", "division by powers of ten", "comparison of mixed scales", "formatting of negative zero", "string output for large scales"])} (#${r.int(100, 999)}).`,
				);
			}
			out.push("");
		}
	}
	return out.join("\n");
}

export const DECIMAL_KIT_DTS = `export type DecimalInput = Decimal | number | bigint;

export declare enum RoundingMode {
	Up = 0,
	Down = 1,
	HalfUp = 4,
	HalfEven = 6,
}

export interface DecimalConfig {
	rounding?: RoundingMode;
	precision?: number;
}

export declare class Decimal {
	static configure(config: DecimalConfig): void;
	static from(value: DecimalInput | string): Decimal | undefined;
	static parse(value: DecimalInput | string): Decimal;
	static sum(values: readonly DecimalInput[]): Decimal;
	static zero(): Decimal;
	plus(other: DecimalInput): Decimal;
	minus(other: DecimalInput): Decimal;
	times(other: DecimalInput): Decimal;
	dividedBy(other: DecimalInput): Decimal;
	toDecimalPlaces(scale: number, mode?: RoundingMode): Decimal;
	isNegative(): boolean;
	greaterThan(other: DecimalInput): boolean;
	toString(scale?: number): string;
	toJSON(): { $decimal: string };
}
`;
