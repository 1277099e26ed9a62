/**
 * The purity rule of src/core, checked on the syntax tree (the TypeScript compiler's parser) rather
 * than by pattern: every way a file can name another module (import, import type, side-effect import,
 * re-export, `export *`, `import x = require`, dynamic import(), import types, `declare module`,
 * triple-slash references) must name a file inside src/core, and the globals that reach the clock,
 * randomness, the process, the network or the runtime are not touched. Comments and string contents
 * are not code in a syntax tree, so prose cannot trip the check; template expressions are.
 * Bun's `Transpiler.scan()` was not enough: it drops type-only imports and re-exports,
 * `import x = require(...)` and import types, which a core file could use to lean on the adapter.
 */
import { dirname, relative, resolve } from "node:path";
import ts from "typescript";

/** Globals a pure file never names (as a value, a type or a property name, like the lexical check before it). */
export const FORBIDDEN_IDENTIFIERS: ReadonlyMap<string, string> = new Map([
	["Date", "Date"],
	["process", "process"],
	["Bun", "Bun"],
	["crypto", "crypto"],
	["fetch", "fetch"],
	["require", "require"],
	["setTimeout", "timers"],
	["setInterval", "timers"],
	["setImmediate", "timers"],
	["queueMicrotask", "timers"],
	["performance", "timers"],
	["globalThis", "globalThis"],
]);

/**
 * Every violation in one file, as "<what> <detail>" strings (empty when the file is pure).
 * `file` is where the source lives (in-memory sources pass a path inside `coreDir`).
 */
export function purityViolations(file: string, source: string, coreDir: string): string[] {
	const sf = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
	const out: string[] = [];
	const where = (node: ts.Node) => `(line ${sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1})`;
	const checkSpecifier = (form: string, spec: string, node: ts.Node) => {
		const inside =
			(spec.startsWith("./") || spec.startsWith("../")) &&
			!relative(coreDir, resolve(dirname(file), spec)).startsWith("..");
		if (!inside) out.push(`${form} "${spec}" ${where(node)}`);
	};
	const checkArgument = (form: string, arg: ts.Node | undefined, node: ts.Node) => {
		if (arg !== undefined && ts.isStringLiteralLike(arg)) checkSpecifier(form, arg.text, node);
		else out.push(`${form} with a computed specifier ${where(node)}`);
	};

	for (const ref of sf.typeReferenceDirectives) out.push(`reference types "${ref.fileName}"`);
	for (const ref of sf.referencedFiles) out.push(`reference path "${ref.fileName}"`);
	for (const ref of sf.libReferenceDirectives) out.push(`reference lib "${ref.fileName}"`);

	const visit = (node: ts.Node): void => {
		if (ts.isImportDeclaration(node)) {
			checkArgument(node.importClause === undefined ? "side-effect import" : "import", node.moduleSpecifier, node);
		} else if (ts.isExportDeclaration(node) && node.moduleSpecifier !== undefined) {
			checkArgument(node.exportClause === undefined ? "export *" : "re-export", node.moduleSpecifier, node);
		} else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
			checkArgument("import = require", node.moduleReference.expression, node);
		} else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
			// Loading a module at run time is I/O, whatever it names.
			out.push(`dynamic import ${where(node)}`);
		} else if (ts.isImportTypeNode(node)) {
			const arg = ts.isLiteralTypeNode(node.argument) ? node.argument.literal : undefined;
			checkArgument("import type", arg, node);
		} else if (ts.isModuleDeclaration(node) && ts.isStringLiteral(node.name)) {
			out.push(`declare module "${node.name.text}" ${where(node)}`);
		} else if (ts.isMetaProperty(node) && node.keywordToken === ts.SyntaxKind.ImportKeyword) {
			out.push(`import.meta ${where(node)}`);
		} else if (ts.isIdentifier(node)) {
			const label = FORBIDDEN_IDENTIFIERS.get(node.text);
			if (label !== undefined) out.push(`uses ${label} ${where(node)}`);
		}
		const math = mathViolation(node);
		if (math !== null) out.push(`uses ${math} ${where(node)}`);
		ts.forEachChild(node, visit);
	};
	visit(sf);
	return out;
}

/**
 * `Math` may be read only as `Math.name` with a name other than `random`: `Math.random`,
 * `Math["random"]`, `Math[key]`, `const { random } = Math` and `const M = Math` all break the rule.
 */
function mathViolation(node: ts.Node): string | null {
	if (!ts.isIdentifier(node) || node.text !== "Math") return null;
	const parent = node.parent;
	if (ts.isPropertyAccessExpression(parent) && parent.expression === node)
		return parent.name.text === "random" ? "Math.random" : null;
	if (ts.isElementAccessExpression(parent) && parent.expression === node) {
		const key = parent.argumentExpression;
		if (!ts.isStringLiteralLike(key)) return "Math with a computed key";
		return key.text === "random" ? "Math.random" : null;
	}
	// A property of the same name (`o.Math`, `{ Math: 1 }`, `Math?: number`) is not the global.
	const named =
		ts.isPropertyAccessExpression(parent) ||
		ts.isPropertyAssignment(parent) ||
		ts.isPropertySignature(parent) ||
		ts.isPropertyDeclaration(parent) ||
		ts.isMethodDeclaration(parent);
	if (named && parent.name === node) return null;
	return "Math as a value";
}
