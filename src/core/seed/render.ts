/**
 * The seed: a bounded, deterministic rendering of the seed index. Hard compaction hands it to Pi
 * verbatim as the summary; /fold-handoff writes it as the body of the handoff file. Items from all
 * records are merged, deduplicated and listed newest first (last appended first), section by section, within a size bound
 * that is never exceeded. Also the tolerant reader of seed-index.jsonl.
 */
import type { Hash } from "../digest.ts";
import { groupDigits } from "../tokens.ts";
import { clipTo } from "../values.ts";
import { containsSecret, redactSecrets } from "./redact.ts";
import { FILE_OPS, type FileOp, type SeedField, type SeedRecord, validateSeedRecord } from "./schema.ts";

/** Default size bound: about 4k tokens at the core's 4 characters per token. */
export const DEFAULT_SEED_MAX_CHARS = 16_000;

/** Sections in priority order, with the share of the budget each gets before leftovers are shared. */
const SECTIONS: ReadonlyArray<{ field: SeedField; title: string; label: string; share: number; inline?: true }> = [
	{ field: "userLines", title: "User messages", label: "user message", share: 0.15 },
	{ field: "errors", title: "Errors", label: "error line", share: 0.2 },
	{ field: "files", title: "Files", label: "file", share: 0.2 },
	{ field: "commands", title: "Commands", label: "command", share: 0.2 },
	{ field: "identifiers", title: "Identifiers", label: "identifier", share: 0.1, inline: true },
	{ field: "numbers", title: "Numbers", label: "number", share: 0.05, inline: true },
	{ field: "spans", title: "Folded and compacted blocks", label: "block", share: 0.1 },
];

export interface RenderSeedOptions {
	/** Hard bound on the result's length in UTF-16 code units. */
	maxChars: number;
	/** Unusable lines reported by parseSeedIndex, so the seed says what it could not read. */
	invalid?: number;
	truncatedTail?: boolean;
	/** Re-redacts any secret found in a record (one written by a foreign or older writer). Without it such items are withheld. */
	hash?: Hash;
}

interface Item {
	key: string;
	text: string;
	record: number;
	ops?: Set<FileOp>;
}

export function renderSeed(records: readonly SeedRecord[], options: RenderSeedOptions): string {
	const maxChars = Number.isNaN(options.maxChars) ? 0 : Math.max(0, Math.floor(options.maxChars));
	// Newest first is the reverse of append order: the file's order is the session's chronology.
	const order = records.map((r, i) => ({ r, i })).reverse();
	const compactionNumber = new Map<number, number>();
	records.forEach((r, i) => {
		if (r.kind === "compaction") compactionNumber.set(i, compactionNumber.size + 1);
	});
	const header = renderHeader(records, options);
	let withheld = 0;
	const safe = (text: string): string | null => {
		if (!containsSecret(text)) return text;
		if (options.hash !== undefined) return redactSecrets(text, options.hash);
		withheld++;
		return null;
	};
	const merged = SECTIONS.map((s) => mergeField(s.field, order, safe, compactionNumber));
	const capped = SECTIONS.map((s) => records.reduce((n, r) => n + r.omitted[s.field], 0));
	const worstFooter = renderOmissions(
		merged.map((m) => m.length),
		capped,
		records.length,
		withheld,
	);
	const budget = maxChars - header.length - worstFooter.length;
	const shown = SECTIONS.map(() => 0);
	let used = 0;
	// Grow one section item by item while the next item fits the allowance (sizes as renderSection makes them).
	const fill = (s: number, allowance: number): void => {
		const section = SECTIONS[s] as (typeof SECTIONS)[number];
		const items = merged[s] as Item[];
		let n = shown[s] as number;
		while (n < items.length) {
			const text = (items[n] as Item).text.length;
			const step =
				n === 0 ? section.title.length + 6 + text + (section.inline ? 0 : 2) : text + 2 + (section.inline ? 0 : 1);
			if (step > allowance) break;
			allowance -= step;
			used += step;
			n++;
		}
		shown[s] = n;
	};
	if (budget > 0) {
		SECTIONS.forEach((section, s) => {
			fill(s, Math.floor(budget * section.share));
		});
		for (let s = 0; s < SECTIONS.length; s++) fill(s, budget - used);
	}
	let body = "";
	const recordsShown = new Set<number>();
	SECTIONS.forEach((section, s) => {
		const items = (merged[s] as Item[]).slice(0, shown[s]);
		for (const item of items) recordsShown.add(item.record);
		if (items.length > 0) body += renderSection(section.title, items, section.inline === true);
	});
	const footer = renderOmissions(
		merged.map((m, s) => m.length - (shown[s] as number)),
		capped,
		records.length - recordsShown.size,
		withheld,
	);
	const out = header + body + footer;
	// Only a bound too small for the header itself gets here.
	if (out.length <= maxChars) return out;
	return clipTo(out, maxChars);
}

function renderHeader(records: readonly SeedRecord[], options: RenderSeedOptions): string {
	const folds = records.filter((r) => r.kind === "fold").length;
	const lines = ["# context-fold seed index"];
	if (records.length === 0) lines.push("No fold or compaction has been indexed yet.");
	else {
		lines.push(
			`${plural(records.length, "record")} (${plural(folds, "fold")}, ${plural(records.length - folds, "compaction")}), newest first. ` +
				"Exact text copied from folded and compacted context; nothing here is paraphrased.",
			"A #code names a folded block: `recall_folded <code>` returns its original in the session that folded it.",
		);
	}
	const secrets = records.reduce((n, r) => n + r.secrets, 0);
	if (secrets > 0) lines.push(`${plural(secrets, "secret mention")} replaced by [secret:<hash>] markers.`);
	const problems: string[] = [];
	if ((options.invalid ?? 0) > 0) problems.push(plural(options.invalid ?? 0, "unreadable line"));
	if (options.truncatedTail === true) problems.push("a truncated last line");
	if (problems.length > 0) {
		lines.push(
			`Note: seed-index.jsonl had ${problems.join(" and ")}, skipped; this seed is rendered from the ${plural(records.length, "valid record")}.`,
		);
	}
	return `${lines.join("\n")}\n`;
}

function renderOmissions(notShown: number[], capped: number[], recordsHidden: number, withheld: number): string {
	const part = (counts: number[]) =>
		SECTIONS.flatMap((s, i) => ((counts[i] ?? 0) > 0 ? [plural(counts[i] ?? 0, s.label)] : [])).join(", ");
	const lines: string[] = [];
	const omitted = part(notShown);
	if (omitted.length > 0 || recordsHidden > 0) {
		const records = recordsHidden > 0 ? `${plural(recordsHidden, "record")} with nothing shown; ` : "";
		lines.push(`Omitted for size: ${records}${omitted || "no items"}. The complete index is seed-index.jsonl.`);
	}
	const cappedText = part(capped);
	if (cappedText.length > 0) lines.push(`Dropped by per-record bounds when indexed: ${cappedText}.`);
	if (withheld > 0) lines.push(`Withheld: ${plural(withheld, "item")} that looked like a secret.`);
	return lines.length === 0 ? "" : `\n${lines.join("\n")}\n`;
}

function renderSection(title: string, items: readonly Item[], inline: boolean): string {
	if (inline) return `\n## ${title}\n${items.map((i) => i.text).join(", ")}\n`;
	return `\n## ${title}\n${items.map((i) => `- ${i.text}`).join("\n")}\n`;
}

/** One field's items across records, newest first, each distinct item once (at its newest mention). */
function mergeField(
	field: SeedField,
	order: ReadonlyArray<{ r: SeedRecord; i: number }>,
	safe: (text: string) => string | null,
	compactionNumber: ReadonlyMap<number, number>,
): Item[] {
	const seen = new Map<string, Item>();
	const withheld = new Set<string>();
	const push = (key: string, text: string, record: number, ops?: FileOp[]) => {
		const hit = seen.get(key);
		if (hit !== undefined) {
			for (const op of ops ?? []) hit.ops?.add(op);
			return;
		}
		if (withheld.has(key)) return;
		const clean = safe(text);
		if (clean === null) withheld.add(key);
		else seen.set(key, { key, text: clean, record, ...(ops && { ops: new Set(ops) }) });
	};
	for (const { r, i } of order) {
		if (field === "files") for (const f of r.files) push(f.path, f.path, i, f.ops);
		else if (field === "identifiers" || field === "numbers") for (const t of r[field]) push(t, t, i);
		else if (field === "commands") for (const c of [...r.commands].reverse()) push(c, `$ ${oneLine(c)}`, i);
		else if (field === "userLines") for (const u of [...r.userLines].reverse()) push(u, `» ${oneLine(u)}`, i);
		else if (field === "errors") {
			for (const e of [...r.errors].reverse()) push(e.text, e.ref ? `${e.text} (${refOf(e.ref)})` : e.text, i);
		} else if (r.kind === "compaction") {
			// A compaction's blocks have no fold code to recall by: one line says what left live context.
			const what = `compaction ${compactionNumber.get(i)} removed ${plural(r.source.blocks, "block")} (${groupDigits(r.source.chars)} chars) from live context; the originals stay in the session file`;
			push(`compaction:${i}`, what, i);
		} else {
			for (const s of [...r.spans].reverse()) {
				const what = [s.kind === "toolResult" ? (s.toolName ?? "tool") : s.kind];
				if (s.call !== undefined) what.push(`\`${s.call.replace(/`/g, "'")}\``);
				push(
					`${s.entryId}:${s.blockIndex}`,
					`#${s.code ?? "?"} ${what.join(" ")} · ${groupDigits(s.chars)} chars, ${groupDigits(s.lines)} lines`,
					i,
				);
			}
		}
	}
	const items = [...seen.values()];
	if (field !== "files") return items;
	// Files: the strongest op decides the tier (edited and written before read, before mentioned).
	const tier = (ops: Set<FileOp>) =>
		ops.has("write") || ops.has("edit") ? 0 : ops.has("read") ? 1 : ops.has("command") ? 2 : 3;
	return items
		.map((item, n) => ({ item, n, t: tier(item.ops ?? new Set()) }))
		.sort((a, b) => a.t - b.t || a.n - b.n)
		.map(({ item }) => ({
			...item,
			text: `${item.text} (${FILE_OPS.filter((op) => item.ops?.has(op)).join(", ")})`,
		}));
}

function refOf(ref: string): string {
	return ref.includes(":") ? `@${ref}` : `#${ref}`;
}

function oneLine(text: string): string {
	return text.replace(/\r?\n/g, " ⏎ ");
}

function plural(n: number, word: string): string {
	return `${groupDigits(n)} ${word}${n === 1 ? "" : "s"}`;
}

export interface SeedIndexRead {
	/** Valid records in file order. */
	records: SeedRecord[];
	/** Lines that were not valid records (malformed JSON, schema violations, blank lines, torn fragments). */
	invalid: number;
	/** The last line had no newline and was not a valid record: a write cut short. */
	truncatedTail: boolean;
	/** The first few problems, for diagnostics: 1-based line number and reason. */
	problems: Array<{ line: number; error: string }>;
}

const MAX_PROBLEMS = 10;
const RECORD_START = '{"type":"seed-record"';

/** Read seed-index.jsonl text: keep every valid record, count the rest, never throw. */
export function parseSeedIndex(text: string): SeedIndexRead {
	const out: SeedIndexRead = { records: [], invalid: 0, truncatedTail: false, problems: [] };
	const lines = text.split("\n");
	const terminated = lines[lines.length - 1] === "";
	if (terminated) lines.pop();
	lines.forEach((raw, n) => {
		const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
		const last = n === lines.length - 1 && !terminated;
		let result = parseLine(line);
		if (!result.ok && !last) {
			// A write torn by a crash, then appended to: keep the whole record at the end of the line.
			const start = line.lastIndexOf(RECORD_START);
			const tail = start > 0 ? parseLine(line.slice(start)) : null;
			if (tail?.ok) {
				out.records.push(tail.record);
				result = { ok: false, error: "torn record before a valid one" };
			}
		}
		if (result.ok) out.records.push(result.record);
		else if (last) out.truncatedTail = true;
		else {
			out.invalid++;
			if (out.problems.length < MAX_PROBLEMS) out.problems.push({ line: n + 1, error: result.error });
		}
	});
	return out;
}

function parseLine(line: string): ReturnType<typeof validateSeedRecord> {
	if (line.trim().length === 0) return { ok: false, error: "blank line" };
	let data: unknown;
	try {
		data = JSON.parse(line);
	} catch {
		return { ok: false, error: "not JSON" };
	}
	return validateSeedRecord(data);
}
