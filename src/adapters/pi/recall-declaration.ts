/**
 * When the recall tools (tools.ts) are declared to the model: eagerly from the start, or lazily from
 * the first fold on; what the branch says about the requests already sent, what the user chose by
 * name, and whether a declaration rewrites the whole cached prefix.
 */

import { TOOLS_ENTRY_TYPE } from "../../core/recall-tools.ts";
import { isOurToolSchema, RECALL_TOOL, UNFOLD_TOOL } from "./tools.ts";

const OUR_TOOLS: readonly string[] = [RECALL_TOOL, UNFOLD_TOOL];
const isOurs = (name: string) => OUR_TOOLS.includes(name);

/** What RecallDeclaration reads and changes in Pi (ExtensionAPI on both versions; getSettings from 1.6.0). */
export interface ToolsApi {
	getActiveTools(): string[];
	setActiveTools(names: string[]): void;
	getAllTools(): Array<{ name: string; parameters?: unknown }>;
	appendEntry(customType: string, data?: unknown): void;
	getSettings?(): unknown;
}

/** The model and session facts the declaration's cost depends on. */
export interface DeclarationTarget {
	model?: { api?: string; compat?: unknown } | undefined;
	sessionManager: unknown;
}

/** A branch entry as the declaration reads it (Pi's session entries fit). */
interface BranchEntryLike {
	type: string;
	customType?: string;
	data?: unknown;
	message?: { role?: string; stopReason?: string; toolsAdded?: unknown; toolsRemoved?: unknown } | null;
}

/**
 * Whether the user chose the recall tools by name: a `--tools` (-t) list that names them (a `+name`
 * modifier on 1.6.0 too), a `--tools` allowlist they passed (only then are they registered at all),
 * or Pi 1.6.0's `defaultTools` setting naming them. Then they are declared from the start, as the
 * user asked, and never withdrawn.
 */
export function userSelectsRecallTools(argv: readonly string[], registered: boolean, settings: unknown): boolean {
	for (let i = 0; i < argv.length - 1; i++) {
		if (argv[i] !== "--tools" && argv[i] !== "-t") continue;
		const list = String(argv[i + 1])
			.split(",")
			.map((s) => s.trim())
			.filter((s) => s.length > 0);
		if (list.some((e) => isOurs(e.replace(/^\+/, "")))) return true;
		// An allowlist (not only +/- modifiers) registers only what it names or matches.
		if (registered && list.some((e) => !e.startsWith("+") && !e.startsWith("-"))) return true;
	}
	const defaults = (settings as { defaultTools?: unknown } | null | undefined)?.defaultTools;
	return Array.isArray(defaults) && defaults.some((n) => typeof n === "string" && isOurs(n));
}

/**
 * Why the branch's requests were sent with the recall tools declared, or null: the declaration note
 * (context-fold declared them lazily), a fold layer (they were declared before it), or (Pi 1.6.0) a
 * transcript whose system messages add recall_folded and do not remove it again.
 */
export function branchDeclaresTools(
	entries: readonly BranchEntryLike[],
	layers: number,
): "note" | "layer" | "transcript" | null {
	let transcript = false;
	for (const e of entries) {
		if (e.type === "custom" && e.customType === TOOLS_ENTRY_TYPE) return "note";
		if (e.type !== "message" || e.message?.role !== "system") continue;
		if (namesOf(e.message.toolsRemoved).includes(RECALL_TOOL)) transcript = false;
		if (namesOf(e.message.toolsAdded).includes(RECALL_TOOL)) transcript = true;
	}
	if (layers > 0) return "layer";
	return transcript ? "transcript" : null;
}

function namesOf(tools: unknown): string[] {
	if (!Array.isArray(tools)) return [];
	return tools.flatMap((t) =>
		typeof (t as { name?: unknown })?.name === "string" ? [(t as { name: string }).name] : [],
	);
}

/**
 * Whether no request has gone out with the tools since the newest declaration note: the note is
 * written while the declaring request is built (which does not carry them yet), so the first
 * successful response after it answers that request, and a second one a request that carried them.
 */
function noteUnanswered(entries: readonly BranchEntryLike[]): boolean {
	let responses = 0;
	for (let i = entries.length - 1; i >= 0; i--) {
		const e = entries[i] as BranchEntryLike;
		if (e.type === "custom" && e.customType === TOOLS_ENTRY_TYPE) return responses <= 1;
		const m = e.type === "message" ? e.message : undefined;
		if (m?.role === "assistant" && m.stopReason !== "error" && m.stopReason !== "aborted") responses++;
		if (responses > 1) return false;
	}
	return false;
}

/**
 * Whether declaring tools rewrites the whole cached prefix. Pi 0.80.6 rebuilds the system prompt
 * (which comes before every message). Pi 1.6.0 records the change as a system message in the
 * transcript; only an Anthropic Messages model with `compat.supportsMidConvoToolChanges` and
 * `supportsMidConvoSystemMessages` sends it in place (a `tool_addition` block after the cached
 * messages). Every other model gets it folded into the leading system prompt and tool list.
 */
export function declarationRebuildsPrefix(target: DeclarationTarget): boolean {
	const transcriptTools =
		typeof (target.sessionManager as { buildSessionProjection?: unknown } | null)?.buildSessionProjection ===
		"function";
	if (!transcriptTools) return true;
	const compat = target.model?.compat as
		| { supportsMidConvoToolChanges?: unknown; supportsMidConvoSystemMessages?: unknown }
		| undefined;
	return !(
		target.model?.api === "anthropic-messages" &&
		compat?.supportsMidConvoToolChanges === true &&
		compat.supportsMidConvoSystemMessages === true
	);
}

/**
 * When the recall tools are declared to the model. Eager (the fixed ladder, the test seam
 * CONTEXTFOLD_TEST_EAGER_TOOLS=1, or the user named them): from the start, as Pi activates every
 * extension tool. Lazy (the priced rule): from the first fold on. A session that never folds never
 * carries them; the planner holds a due fold back one request and asks for them (toolsWanted), since
 * `setActiveTools` takes effect from the next request only. Everything here fails open: an error
 * costs folding (no digest goes out without the tools), never the turn.
 */
export class RecallDeclaration {
	/** Declared by this instance for the next request: whether that declaration rewrote the prefix. */
	private fresh: { rebuilt: boolean } | null = null;

	constructor(private readonly api: ToolsApi) {}

	/** Whether both tools are among Pi's active tools: the request now being built carries them. */
	live(): boolean {
		try {
			const active = this.api.getActiveTools();
			return OUR_TOOLS.every((n) => active.includes(n));
		} catch {
			return false;
		}
	}

	/** Our own registrations are what Pi offers under these names (not another extension's, not filtered out). */
	registered(): boolean {
		try {
			const ours = this.api.getAllTools().filter((t) => isOurs(t.name) && isOurToolSchema(t.parameters));
			return ours.length === OUR_TOOLS.length;
		} catch {
			return false;
		}
	}

	/** The user chose them by name (see userSelectsRecallTools). */
	userSelected(argv: readonly string[] = process.argv): boolean {
		try {
			return userSelectsRecallTools(argv, this.registered(), this.api.getSettings?.());
		} catch {
			return false;
		}
	}

	/**
	 * The first request after a declaration that rewrote the prefix: it is cold anyway (policy/price.ts
	 * folds everything foldable for free). Asked once per request; only while the tools are live.
	 */
	takeFresh(): boolean {
		const f = this.fresh;
		this.fresh = null;
		return f?.rebuilt === true;
	}

	/**
	 * At session start and on a branch switch: make Pi's active set match what the branch's requests
	 * were sent with, so the next request extends the cached prompt instead of rewriting it. Eager:
	 * declared. Lazy: declared iff the branch says so (branchDeclaresTools). Only our two names are
	 * added or removed; every other active tool stays, in its order.
	 */
	reconcile(target: DeclarationTarget, entries: readonly BranchEntryLike[], layers: number, eager: boolean): void {
		this.fresh = null;
		try {
			const why = branchDeclaresTools(entries, layers);
			if (!eager && why === null) {
				this.setOurs(false, false);
				return;
			}
			// After a lazy declaration ours came last; Pi's own order otherwise (see setOurs).
			this.setOurs(true, why === "note");
			// Declared in a previous process for a request that never went out: that request rewrites.
			if (why === "note" && this.live() && noteUnanswered(entries))
				this.fresh = { rebuilt: declarationRebuildsPrefix(target) };
		} catch {
			// Left as Pi set it: the hook checks live() on every request, so no digest goes out undeclared.
		}
	}

	/**
	 * A plan wants the tools (toolsWanted): activate them for the next request and record it on the
	 * branch. Returns false when Pi would not declare them (not registered, filtered by `--tools`,
	 * or an error): then nothing folds, and the caller says so once.
	 */
	declare(target: DeclarationTarget, fault?: string): boolean {
		try {
			if (fault === "tools") throw new Error("injected fault (CONTEXTFOLD_TEST_FAULT=tools)");
			if (!this.registered()) return false;
			this.setOurs(true, false);
			if (!this.live()) return false;
			this.api.appendEntry(TOOLS_ENTRY_TYPE, { v: 1, declared: true });
			this.fresh = { rebuilt: declarationRebuildsPrefix(target) };
			return true;
		} catch {
			return false;
		}
	}

	/**
	 * Add our tools (missing ones at the end) or take them out; never touch another tool. With
	 * `last`, ours are moved to the end: Pi 0.80.6 declares tools in the order given, and a lazy
	 * declaration appended them, so a resume must too (1.6.0 keeps its order and appends anyway).
	 */
	private setOurs(on: boolean, last: boolean): void {
		const active = this.api.getActiveTools();
		const others = active.filter((n) => !isOurs(n));
		const next = !on
			? others
			: last
				? [...others, ...OUR_TOOLS]
				: [...active, ...OUR_TOOLS.filter((n) => !active.includes(n))];
		if (next.length === active.length && next.every((n, i) => active[i] === n)) return;
		this.api.setActiveTools(next);
	}
}
