/**
 * An optional fifth phase of the demo session, for a longer generated session (the economics
 * benchmark's `generated-long`; the demo itself stops after phase 4): a clean-up the user asks for
 * once everything is green. Every module is read again, edited and its unit tests run; one module's
 * edit forgets an import, so its tests fail with a ReferenceError until that is fixed. About forty
 * tool calls, the same mix of sizes as the rest of the session.
 */
import type { Context } from "./integration-session.ts";
import type { BugSite, Edit, SourceModule } from "./project.ts";
import type { Story } from "./story.ts";
import type { Failure, Suite } from "./suites.ts";

const DECIMAL = "src/money/decimal.ts";
/** The last lines of session.ts's toDecimal helper, where roundMoney goes after it. */
const HELPER_END = "\treturn parsed;\n}";
const ROUND_MONEY = `

/** Rounds an amount to \`scale\` decimals the way invoices and tax need it (banker's rounding). */
export function roundMoney(value: Decimal, scale: number): Decimal {
	return value.toDecimalPlaces(scale, RoundingMode.HalfEven);
}`;
const ROUNDED = /^\tconst (\w+) = (input\.\w+)\.toDecimalPlaces\(options\.scale, RoundingMode\.HalfEven\);$/;
const TOOLING_IMPORT = `import { Decimal, RoundingMode } from "decimal-kit";`;
const HELPER_IMPORT = `import { toDecimal } from "../money/decimal";`;

const isRound = (s: BugSite) => ROUNDED.test(s.fixed);

/** The edit replacing a module's rounding calls with roundMoney, with its imports (or forgetting one). */
function roundEdits(story: Story, m: SourceModule, importHelper: boolean): Edit[] {
	const edits: Edit[] = m.sites.filter(isRound).map((s) => ({
		oldText: `${s.signature}\n${s.fixed}`,
		newText: `${s.signature}\n${s.fixed.replace(ROUNDED, "\tconst $1 = roundMoney($2, options.scale);")}`,
	}));
	if (m.path === DECIMAL) return edits;
	const after = edits.reduce((text, e) => text.replace(e.oldText, e.newText), story.text(m.path));
	// RoundingMode stays imported where something else still uses it (proration's mode constant).
	const stillUsed = after.split(TOOLING_IMPORT).join("").includes("RoundingMode");
	const tooling = stillUsed ? TOOLING_IMPORT : `import { Decimal } from "decimal-kit";`;
	const helper = importHelper ? `import { roundMoney, toDecimal } from "../money/decimal";` : HELPER_IMPORT;
	return [{ oldText: `${TOOLING_IMPORT}\n${HELPER_IMPORT}`, newText: `${tooling}\n${helper}` }, ...edits];
}

/** vitest's report for a test whose function calls roundMoney without importing it. */
function referenceFailure(story: Story, m: SourceModule, site: BugSite, suite: Suite, test: string): Failure {
	const fn = /export function (\w+)\(/.exec(site.signature)?.[1] ?? "unknown";
	const rounded = site.fixed.replace(ROUNDED, "\tconst $1 = roundMoney($2, options.scale);");
	const line = story.text(m.path).split("\n").indexOf(rounded) + 1;
	const col = rounded.indexOf("roundMoney(") + 1;
	return {
		suite: suite.path,
		test: `${fn} > ${test}`,
		reason: "roundMoney is not defined",
		body: [
			"ReferenceError: roundMoney is not defined",
			` ❯ ${fn} ${m.path}:${line}:${col}`,
			` ❯ ${suite.path}:${(suite.describes.find((d) => d.name === fn)?.tests.find((t) => t.name === test)?.line ?? 2) - 2}:18`,
		],
	};
}

export function followUpSession(story: Story, ctx: Context): void {
	const modules = [...ctx.modules.values()].filter((m) => m.path !== DECIMAL && m.sites.some(isRound));
	const suiteOf = (m: SourceModule) => {
		const name = m.path.split("/").at(-1)?.replace(".ts", "");
		const dir = m.path.slice(0, m.path.lastIndexOf("/"));
		return ctx.suites.find((s) => s.path === `${dir}/__tests__/${name}.test.ts`) as Suite;
	};
	/** Tests that call a rounded function: they fail while roundMoney is not imported. */
	const brokenBy = (m: SourceModule) =>
		m.sites.filter(isRound).flatMap((site) => {
			const fn = /export function (\w+)\(/.exec(site.signature)?.[1];
			const tests = suiteOf(m).describes.find((d) => d.name === fn)?.tests ?? [];
			return tests.map((t) => referenceFailure(story, m, site, suiteOf(m), t.name));
		});
	const forgotten = modules.find((m) => brokenBy(m).length > 0);
	if (!forgotten) throw new Error("demo session: no module whose rounding is under test");

	story.prompt(
		"While everything is green: every module now spells out `.toDecimalPlaces(options.scale, RoundingMode.HalfEven)`. Please add a `roundMoney(value, scale)` helper next to `toDecimal` and use it everywhere, keeping the build, the tests and lint green.",
	);
	story.step("Finding every call site first.", story.bash("grep -rn 'toDecimalPlaces' src"));
	story.step(undefined, story.bash("grep -rln 'toDecimalPlaces' src | wc -l"));
	story.step("The helper goes next to `toDecimal`.", story.read(DECIMAL));
	const decimal = ctx.modules.get(DECIMAL) as SourceModule;
	story.step(
		undefined,
		story.edit(DECIMAL, [
			{ oldText: HELPER_END, newText: `${HELPER_END}${ROUND_MONEY}` },
			...roundEdits(story, decimal, false),
		]),
	);
	for (const m of modules) {
		const suite = suiteOf(m);
		story.step(undefined, story.read(m.path));
		story.step(undefined, story.edit(m.path, roundEdits(story, m, m !== forgotten)));
		if (m === forgotten) {
			story.step(
				undefined,
				story.bash(`npx vitest run ${suite.path} 2>&1`, ctx.testRun([suite], brokenBy(m), false, false)),
			);
			story.step(
				"I replaced the calls but not the import.",
				story.edit(m.path, [
					{ oldText: HELPER_IMPORT, newText: `import { roundMoney, toDecimal } from "../money/decimal";` },
				]),
			);
		}
		story.step(undefined, story.bash(`npx vitest run ${suite.path} 2>&1`, ctx.testRun([suite], [], false, false)));
	}
	story.step("No call sites left outside the helper:", story.bash("grep -rn 'toDecimalPlaces' src"));
	story.step(undefined, story.bash("npm test -- --reporter=verbose 2>&1", ctx.testRun(ctx.suites, [], true)));
	story.step(undefined, story.bash("npm run build 2>&1", ctx.buildRun()));
	story.step(undefined, story.bash("npm run lint 2>&1", ctx.lintRun()));
	story.step(undefined, story.bash("git diff --stat", { text: ctx.diffStat() }));
	story.answer(
		`Added \`roundMoney(value, scale)\` in src/money/decimal.ts and used it in all ${modules.length + 1} modules; \`toDecimalPlaces\` is now called in one place. ${forgotten.path} briefly failed its tests (I had replaced the calls before importing the helper). Build, unit tests and lint are green, with the same one lint warning as before.`,
	);
}
