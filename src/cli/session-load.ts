/**
 * One session, loaded for a command: the file parsed (v1 to v3, malformed lines counted), its active
 * branch replayed into the extension's state, the effective settings (defaults < context-fold.json <
 * environment, as in Pi), and the context window of its model.
 */

import type { ResolvedSettings } from "../core/resolved-settings.ts";
import { BranchReplay, FOLD_ENTRY_TYPE } from "../core/session/branch-state.ts";
import { plural } from "../core/wording.ts";
import { type ModelFacts, readModelsFile } from "../store/models-file.ts";
import { parseIsoTime, readSessionFile, type SessionFile, SessionFileError } from "../store/session-file.ts";
import { loadSettings } from "../store/settings-load.ts";
import { type CommandContext, remark } from "./context.ts";
import { CliError } from "./errors.ts";

/**
 * Window assumed when neither --window nor models.json names one. Pi knows its built-in models'
 * windows; the CLI does not depend on Pi, and 200k is the window of the models the bundled traces use.
 */
export const DEFAULT_WINDOW = 200_000;

export type WindowSource = "--window" | "models.json" | "default";

export interface LoadedSession {
	file: SessionFile;
	replay: BranchReplay;
	settings: ResolvedSettings;
	/** Window and its source for a provider/model. */
	windowFor(provider: string | undefined, model: string | undefined): { window: number; source: WindowSource };
	modelFacts(provider: string | undefined, model: string | undefined): ModelFacts | undefined;
	/** models.json exists but could not be used. */
	modelsProblem: string | null;
}

export interface LoadOptions {
	/**
	 * Build only the fold records of the branch (recall needs nothing else): the replay then knows the
	 * folded blocks and nothing of the messages, and a large session is never held in memory.
	 */
	foldRecordsOnly?: boolean;
}

export function loadSession(
	ctx: CommandContext,
	path: string,
	window?: number,
	options: LoadOptions = {},
): LoadedSession {
	let file: SessionFile;
	try {
		file = readSessionFile(
			path,
			options.foldRecordsOnly === true ? { keep: (e) => e.type === "custom" && e.customType === FOLD_ENTRY_TYPE } : {},
		);
	} catch (error) {
		if (error instanceof SessionFileError) {
			throw new CliError(error.code === "missing" ? "unknown-session" : "unreadable-session", error.message);
		}
		throw error;
	}
	// Said once per load, on stderr: what was skipped, and settings that were ignored.
	const skipped = malformedNote(file);
	if (skipped !== null) remark(ctx, skipped);
	const partial = options.foldRecordsOnly === true ? null : coverageNote(file);
	if (partial !== null) remark(ctx, partial);
	const settings = loadSettings(ctx.io.env);
	for (const w of settings.warnings) remark(ctx, `setting ignored: ${w.message}`);
	// Replayed on first use only: simulate replays the branch its own way, and handoff needs none of it.
	let replay: BranchReplay | undefined;
	const models = readModelsFile(ctx.io.env);
	const facts = (p: string | undefined, m: string | undefined) =>
		p !== undefined && m !== undefined ? models.models.get(`${p}/${m}`) : undefined;
	return {
		file,
		get replay() {
			if (replay === undefined) {
				replay = new BranchReplay(parseIsoTime);
				for (const entry of file.branch) replay.consume(entry);
			}
			return replay;
		},
		settings,
		windowFor(provider, model) {
			if (window !== undefined) return { window, source: "--window" };
			const known = facts(provider, model)?.contextWindow;
			return known !== undefined
				? { window: known, source: "models.json" }
				: { window: DEFAULT_WINDOW, source: "default" };
		},
		modelFacts: facts,
		modelsProblem: models.problem,
	};
}

/** One line about lines the reader skipped, or null when there were none. */
export function malformedNote(file: SessionFile): string | null {
	if (file.malformed === 0) return null;
	const first = file.problems
		.slice(0, 3)
		.map((p) => `line ${p.line}: ${p.reason}`)
		.join("; ");
	return `${plural(file.malformed, "unreadable line")} in ${file.path} ${file.malformed === 1 ? "was" : "were"} skipped (${first}${file.malformed > 3 ? "; …" : ""})`;
}

/**
 * What the figures cover when the message chain is broken (a lost line held an entry the rest
 * continue from): only the part after the break, never the whole session. Null for an intact chain.
 */
export function coverageNote(file: SessionFile): string | null {
	const broken = file.brokenChain;
	if (broken === null) return null;
	return `the message chain of ${file.path} is broken at line ${broken.line} (it continues from entry ${broken.missingParent}, which is not in the file): the figures cover only the ${plural(file.branch.length, "entry", "entries")} from there on, ${branchResponses(file)} of the file's ${plural(file.responses, "response")}, not the whole session`;
}

/** Assistant messages on the branch, counted as `responses` counts them in the whole file. */
export function branchResponses(file: SessionFile): number {
	return file.branch.filter((e) => e.type === "message" && e.message?.role === "assistant").length;
}
