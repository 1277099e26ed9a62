/**
 * The second half of the demo session: the integration suite (postgres rejects decimal-kit 3's JSON
 * form of amounts), a regression test, and the closing request to quote the first CI log's BUILD_ID
 * line, which by then is long out of view.
 */
import {
	AMOUNTS,
	firstTest,
	globalSetup,
	integrationSuites,
	migrationsTs,
	numericFailure,
	postgresLog,
	snapshotFailure,
	snapshotFile,
	toFixedFailure,
} from "./integration.ts";
import { npmTree } from "./npm-tree.ts";
import type { SourceModule } from "./project.ts";
import type { Seeded } from "./seeded.ts";
import {
	COMPOSE_YML,
	HANDLER_SEND_LINE,
	INTEGRATION_SETUP_TS,
	SERIALIZE_DATE_LINE,
	SERIALIZE_TS,
	SUMMARY_TOFIXED_LINE,
} from "./static-files.ts";
import { QUOTE, type Story } from "./story.ts";
import { type Failure, generateSuite, type Suite, vitestOutput } from "./suites.ts";
import { npmBanner, npmErr } from "./tooling.ts";

type Replay = { text: string; code?: number };

export interface Context {
	modules: Map<string, SourceModule>;
	suites: Suite[];
	startAt(): string;
	testRun(list: Suite[], failures: Failure[], verbose: boolean, npm?: boolean): Replay;
	buildRun(): Replay;
	lintRun(): Replay;
	diffStat(): string;
}

const INT = "vitest run -c vitest.integration.config.ts";

function phase2Diff(): string {
	const hunk = (path: string, at: number, before: string, after: string[]) =>
		[
			`diff --git a/${path} b/${path}`,
			"index 3f2a1c4..8b7e0d2 100644",
			`--- a/${path}`,
			`+++ b/${path}`,
			`@@ -${at},3 +${at},${2 + after.length} @@`,
			`-${before}`,
			...after.map((l) => `+${l}`),
		].join("\n");
	return `${[
		hunk("src/db/serialize.ts", 11, SERIALIZE_DATE_LINE, [
			SERIALIZE_DATE_LINE,
			"\t// decimal-kit 3 serializes to { $decimal }; NUMERIC columns need the plain digits.",
			"\tif (value instanceof Decimal) return value.toString();",
		]),
		hunk("src/api/handlers.ts", 1, `import { toDecimal } from "../money/decimal";`, [
			`import { toDecimal } from "../money/decimal";`,
			`import { serializeRow } from "../db/serialize";`,
		]),
		hunk("src/reports/summary.ts", 1, SUMMARY_TOFIXED_LINE, ["\t\t\tamount: toDecimal(row.amount).toString(2),"]),
	].join("\n")}\n`;
}

export function integrationSession(story: Story, r: Seeded, ctx: Context): void {
	const ints = integrationSuites(r);
	const summary = ctx.modules.get("src/reports/summary.ts") as SourceModule;
	const summaryLines = summary.text.split("\n");
	const toFixedAt = summaryLines.indexOf(SUMMARY_TOFIXED_LINE) + 1;
	const repoLine = (ctx.modules.get("src/db/repository.ts") as SourceModule).text.split("\n").length - 12;
	const inv = "test/integration/invoices.int.test.ts";
	const pay = "test/integration/payments.int.test.ts";
	const api = "test/integration/api.int.test.ts";
	const rep = "test/integration/reports.int.test.ts";
	const numeric = [
		numericFailure(inv, firstTest(ints, inv, "invoice repository", 0), AMOUNTS[0] as string, repoLine),
		numericFailure(inv, firstTest(ints, inv, "invoice repository", 1), AMOUNTS[1] as string, repoLine),
		numericFailure(inv, firstTest(ints, inv, "invoice lifecycle", 0), AMOUNTS[2] as string, repoLine),
		numericFailure(pay, firstTest(ints, pay, "payment capture", 0), AMOUNTS[3] as string, repoLine),
		numericFailure(pay, firstTest(ints, pay, "refunds", 0), AMOUNTS[4] as string, repoLine),
	];
	const snapshotTest = firstTest(ints, api, "GET /invoices/:id", 0);
	const snapshot = snapshotFailure(api, snapshotTest, AMOUNTS.slice(0, 3));
	const toFixed = toFixedFailure(
		rep,
		firstTest(ints, rep, "monthly summary", 0),
		toFixedAt,
		SUMMARY_TOFIXED_LINE.indexOf("toFixed") + 1,
	);
	const intRun = (list: Suite[], failures: Failure[], verbose: boolean, npm = true): Replay => {
		const out = vitestOutput({ suites: list, failures, verbose, startAt: ctx.startAt(), r, preamble: globalSetup(r) });
		const banner = npm ? npmBanner("test:integration", INT) : "";
		if (failures.length === 0) return { text: `${banner}${out}` };
		return {
			text: `${banner}${out}${npm ? npmErr("test:integration", INT, 1, "2025-03-11T09_52_40_311Z") : ""}`,
			code: 1,
		};
	};
	story.file("src/db/serialize.ts", SERIALIZE_TS);
	story.file("src/db/migrations.ts", migrationsTs());
	story.file("test/integration/setup.ts", INTEGRATION_SETUP_TS);
	story.file("docker-compose.test.yml", COMPOSE_YML);
	const snapPath = "test/integration/__snapshots__/api.int.test.ts.snap";
	story.file(snapPath, snapshotFile(r, snapshotTest));

	// Phase 2: the integration suite.
	story.prompt(
		"Nice work. The integration suite is failing as well (`npm run test:integration`; it starts its own postgres in docker). Can you fix that too?",
	);
	story.step(
		undefined,
		story.bash("npm run test:integration 2>&1", intRun(ints, [...numeric, snapshot, toFixed], false)),
	);
	story.step(
		"Postgres rejects the amounts: it receives decimal-kit 3's JSON form. Checking the database log.",
		story.bash("docker compose -f docker-compose.test.yml logs db --tail 150 2>&1", {
			text: postgresLog(r, AMOUNTS, 150),
		}),
	);
	story.step(
		undefined,
		story.bash("docker compose -f docker-compose.test.yml ps", {
			text: 'NAME              IMAGE                  COMMAND                  SERVICE   CREATED         STATUS                   PORTS\nledgerline-db-1   postgres:16.4-alpine   "docker-entrypoint.s…"   db        2 minutes ago   Up 2 minutes (healthy)   0.0.0.0:5433->5432/tcp\n',
		}),
	);
	story.step(
		"Reproducing with one suite, verbosely.",
		story.bash(
			`npx ${INT} ${pay} --reporter=verbose 2>&1`,
			intRun(
				ints.filter((s) => s.path === pay),
				numeric.filter((f) => f.suite === pay),
				true,
				false,
			),
		),
	);
	story.step(undefined, story.bash("npm ls --depth=1", { text: npmTree() }));
	story.step(undefined, story.read("test/integration/setup.ts"), story.read("src/db/serialize.ts"));
	story.step("Where does the repository write line amounts?", story.read("src/db/repository.ts"));
	story.step(undefined, story.bash("cat docker-compose.test.yml"), story.read("src/db/migrations.ts"));
	story.step(undefined, story.bash("grep -rn 'toParam\\|rowParams\\|JSON.stringify' src"));
	story.step(undefined, story.bash("grep -n 'toJSON' -A2 node_modules/decimal-kit/dist/index.d.ts"));
	story.step(
		"`toParam` JSON-encodes every object, and a Decimal is now an object with a `toJSON`. Amounts must go out as strings.",
		story.edit("src/db/serialize.ts", [
			{
				oldText: SERIALIZE_DATE_LINE,
				newText: `${SERIALIZE_DATE_LINE}\n\t// decimal-kit 3 serializes to { $decimal }; NUMERIC columns need the plain digits.\n\tif (value instanceof Decimal) return value.toString();`,
			},
		]),
	);
	story.step(
		undefined,
		story.bash(
			`npx ${INT} ${inv} ${pay} 2>&1`,
			intRun(
				ints.filter((s) => s.path === inv || s.path === pay),
				[],
				false,
				false,
			),
		),
	);
	story.step(
		undefined,
		story.bash("docker compose -f docker-compose.test.yml logs db --tail 40 2>&1", { text: postgresLog(r, [], 40) }),
	);
	story.step(
		"Repository tests pass. Running the whole integration suite again.",
		story.bash("npm run test:integration 2>&1", intRun(ints, [snapshot, toFixed], false)),
	);
	story.step(
		"The API snapshot now sees `{ $decimal }` objects.",
		story.read(snapPath),
		story.read("src/api/handlers.ts"),
	);
	story.step(
		undefined,
		story.edit("src/api/handlers.ts", [
			{
				oldText: `import { toDecimal } from "../money/decimal";`,
				newText: `import { toDecimal } from "../money/decimal";\nimport { serializeRow } from "../db/serialize";`,
			},
			{ oldText: HANDLER_SEND_LINE, newText: "\treturn reply.send(serializeRow(invoice));" },
		]),
	);
	story.step(undefined, story.bash("grep -rn 'reply.send(' src/api"));
	story.step(
		undefined,
		story.bash(
			`npx ${INT} ${api} 2>&1`,
			intRun(
				ints.filter((s) => s.path === api),
				[],
				false,
				false,
			),
		),
	);
	story.step("Last one: `toFixed` is gone in 3.0.", story.bash("grep -rn 'toFixed' src test"));
	story.step(undefined, story.read("src/reports/summary.ts", { offset: Math.max(1, toFixedAt - 40), limit: 60 }));
	story.step(
		undefined,
		story.edit("src/reports/summary.ts", [
			{ oldText: SUMMARY_TOFIXED_LINE, newText: "\t\t\tamount: toDecimal(row.amount).toString(2)," },
		]),
	);
	story.step(undefined, story.bash("npm run test:integration -- --reporter=verbose 2>&1", intRun(ints, [], true)));
	story.step(
		"Everything passes. Re-running unit tests, the build and lint.",
		story.bash("npm test -- --reporter=verbose 2>&1", ctx.testRun(ctx.suites, [], true)),
	);
	story.step(undefined, story.bash("npm run build 2>&1", ctx.buildRun()));
	story.step(undefined, story.bash("npm run lint 2>&1", ctx.lintRun()));
	story.step(
		undefined,
		story.bash("git diff src/db/serialize.ts src/api/handlers.ts src/reports/summary.ts", { text: phase2Diff() }),
	);
	story.step(
		undefined,
		story.write(
			"docs/upgrading-decimal-kit-3.md",
			"# Upgrading to decimal-kit 3\n\n- Parse with `toDecimal()` (src/money/decimal.ts); `Decimal.from` returns undefined on bad input.\n- Round with `toDecimalPlaces(scale, RoundingMode.HalfEven)`; the global default is configured at startup.\n- Never `JSON.stringify` a Decimal for the database or the API: use `toParam` / `serializeRow` (src/db/serialize.ts).\n- `toFixed(n)` is now `toString(n)`.\n",
		),
	);
	story.answer(
		'The integration suite passes now. Three decimal-kit 3 changes broke it:\n\n1. `Decimal#toJSON()` returns `{ $decimal }`, and `toParam` JSON-encoded every object, so postgres got `{"$decimal":"129.90"}` for NUMERIC columns. `toParam` now sends `toString()`.\n2. The API sent Decimal objects straight to Fastify, so the snapshot saw the new JSON form. The handler now uses `serializeRow`.\n3. `toFixed` was removed; the monthly summary uses `toString(2)`.\n\nI also wrote docs/upgrading-decimal-kit-3.md with the migration rules.',
	);

	// Phase 3: a regression test.
	story.prompt(
		"Great. Please add a regression test for the postgres serialization bug, so it cannot come back silently.",
	);
	const dbSuite = ctx.suites.find((s) => s.path === "src/db/__tests__/repository.test.ts") as Suite;
	story.step("Looking at how the db tests are written.", story.read(dbSuite.path, { offset: 1, limit: 80 }));
	const regression = generateSuite(
		r,
		"src/db/__tests__/serialize-decimal.test.ts",
		"../serialize",
		["toParam", "serializeRow"],
		[3, 4],
	);
	story.step(undefined, story.write(regression.path, regression.text));
	story.step(
		undefined,
		story.bash(`npx vitest run ${regression.path} 2>&1`, ctx.testRun([regression], [], true, false)),
	);
	ctx.suites.push(regression);
	story.step(
		"And the integration suite once more, since it exercises the same path against postgres.",
		story.bash("npm run test:integration -- --reporter=verbose 2>&1", intRun(ints, [], true)),
	);
	story.step(
		"No numeric errors in the database log any more:",
		story.bash("docker compose -f docker-compose.test.yml logs db --tail 100 2>&1", { text: postgresLog(r, [], 100) }),
	);
	story.step(undefined, story.bash("npm test -- --reporter=verbose 2>&1", ctx.testRun(ctx.suites, [], true)));
	story.step(undefined, story.bash("npm run lint 2>&1", ctx.lintRun()));
	story.step(undefined, story.bash("git diff --stat", { text: ctx.diffStat() }));
	story.step(
		undefined,
		story.bash("git status --short", {
			text: `${[...story.changes.keys()].map((p) => (p.startsWith("docs/") || p.includes("to-decimal") || p.includes("serialize-decimal") ? `?? ${p}` : ` M ${p}`)).join("\n")}\n`,
		}),
	);
	story.answer(
		`Added ${regression.path}: it checks that \`toParam\` and \`serializeRow\` turn a Decimal into its plain digits, never the \`{ $decimal }\` form. It passes, and so does the full unit suite.`,
	);

	// Phase 4: the detail from the start of the session.
	story.prompt(
		"Perfect. Last thing: release managers trace CI failures by build id, and the failing run was 7f3a9c21. Add a Fixed entry under Unreleased in CHANGELOG.md that quotes the exact BUILD_ID line from that CI log.",
	);
	const needle = "BUILD_ID=7f3a9c21";
	story.recallSearch("7f3a9c21");
	story.recallCode();
	story.step(undefined, story.read("CHANGELOG.md"));
	story.quoting(
		needle,
		story.edit("CHANGELOG.md", [
			{
				oldText: "## [Unreleased]\n",
				newText: `## [Unreleased]\n\n### Fixed\n- Build, unit and integration tests after the decimal-kit 3.0 upgrade. Failing CI run 4812: \`${QUOTE}\`\n`,
			},
		]),
	);
	story.answer(`Added under Unreleased → Fixed, quoting the CI log line:\n\n    ${QUOTE}`, needle);
}
