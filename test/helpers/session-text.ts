/**
 * Random session files for the streaming-parser properties: headers of every version (or none),
 * entries with and without ids, parents pointing anywhere, v1 compactions whose firstKeptEntryIndex
 * points back, forward, nowhere or at a fraction, hookMessage roles, second headers, malformed,
 * glued, blank and whitespace lines, multibyte text (2-, 3- and 4-byte UTF-8), LF and CRLF endings,
 * and a last line with or without its newline. Plus the whole-text parser as it was before it was
 * made incremental: the oracle the incremental one must match byte for byte.
 */
import fc from "fast-check";
import type { ParsedSession } from "../../src/core/session/entries.ts";
import type { PiEntry } from "../../src/core/session/view.ts";

const T = "2025-01-01T00:00:00.000Z";
/** Text with characters of every UTF-8 width, and the characters that stress line splitting. */
const textArb = fc
	.array(fc.constantFrom("a", "z ", "é", "ß", "€", "中", "𝄞", "😀", "\r", "\t", "\\", '"', "}{", "\u2028", "\uFEFF"), {
		maxLength: 24,
	})
	.map((parts) => parts.join(""));
const idArb = fc.constantFrom("a", "b", "c", "d", "e", "f");

const entryLineArb: fc.Arbitrary<string> = fc.oneof(
	{
		weight: 6,
		arbitrary: fc
			.record({
				id: fc.option(idArb),
				parentId: fc.option(idArb),
				text: textArb,
				role: fc.constantFrom("user", "assistant", "toolResult", "hookMessage"),
			})
			.map(({ id, parentId, text, role }) =>
				JSON.stringify({
					type: "message",
					...(id !== null && { id }),
					parentId,
					timestamp: T,
					message: { role, content: [{ type: "text", text }], timestamp: 1 },
				}),
			),
	},
	{
		weight: 2,
		arbitrary: fc
			.record({
				id: fc.option(idArb),
				parentId: fc.option(idArb),
				index: fc.oneof(fc.integer({ min: -2, max: 30 }), fc.constant(1.5), fc.constant("3")),
			})
			.map(({ id, parentId, index }) =>
				JSON.stringify({
					type: "compaction",
					...(id !== null && { id }),
					parentId,
					timestamp: T,
					summary: "s",
					firstKeptEntryIndex: index,
					tokensBefore: 9,
				}),
			),
	},
	{
		weight: 1,
		arbitrary: fc.record({ id: idArb, parentId: fc.option(idArb) }).map(({ id, parentId }) =>
			JSON.stringify({
				type: "custom",
				customType: "context-fold",
				id,
				parentId,
				data: { type: "unfold", v: 1, codes: ["abc123"] },
			}),
		),
	},
	{
		weight: 1,
		arbitrary: fc.constantFrom(
			JSON.stringify({ type: "session", version: 3, id: "again", timestamp: T, cwd: "/p" }),
			"not json",
			'{"type":"label","id":"g"}{"type":"label","id":"h"}',
			"[1,2]",
			"42",
			'{"id":"x"}',
			"",
			"   ",
			"\t",
			'{"type":"label","id":"é',
		),
	},
);

const headerArb = fc.oneof(
	fc
		.constantFrom(1, 2, 3, null)
		.map((version) =>
			JSON.stringify({ type: "session", ...(version !== null && { version }), id: "s1", timestamp: T, cwd: "/p" }),
		),
	fc.constantFrom("", "garbage", JSON.stringify({ type: "message", id: "a" })),
);

/** A whole session text: header (or not), lines, LF or CRLF each, and a last newline or not. */
export const sessionTextArb: fc.Arbitrary<string> = fc
	.record({
		header: headerArb,
		lines: fc.array(fc.tuple(entryLineArb, fc.constantFrom("\n", "\n", "\r\n")), { maxLength: 30 }),
		lastNewline: fc.boolean(),
	})
	.map(({ header, lines, lastNewline }) => {
		let text = `${header}\n${lines.map(([l, eol]) => l + eol).join("")}`;
		if (!lastNewline) text = text.replace(/\r?\n$/, "");
		return text;
	});

/** Cut points for a string or byte length: sorted, distinct, inside (0, length). */
export function cuts(length: number, points: readonly number[]): number[] {
	return [...new Set(points.map((p) => Math.floor(p * length)).filter((p) => p > 0 && p < length))].sort(
		(a, b) => a - b,
	);
}

/** The whole-text parser as it was before SessionParser (kept verbatim as the oracle). */
export function referenceParse(text: string): ParsedSession {
	const out: ParsedSession = { header: null, entries: [], malformed: 0, problems: [], unterminated: false };
	const parsed: Array<{ raw: Record<string, unknown>; line: number }> = [];
	let line = 0;
	let start = 0;
	while (start < text.length) {
		let end = text.indexOf("\n", start);
		if (end < 0) {
			end = text.length;
			out.unterminated = true;
		}
		line++;
		let body = text.slice(start, end);
		start = end + 1;
		if (body.endsWith("\r")) body = body.slice(0, -1);
		if (body.trim() === "") continue;
		let value: unknown;
		try {
			value = JSON.parse(body);
		} catch {
			skip(out, line, /}\s*{/.test(body) ? "two JSON objects glued on one line" : "not valid JSON");
			continue;
		}
		if (typeof value !== "object" || value === null || Array.isArray(value)) {
			skip(out, line, "not a JSON object");
			continue;
		}
		const raw = value as Record<string, unknown>;
		if (typeof raw.type !== "string") {
			skip(out, line, "no entry type");
			continue;
		}
		parsed.push({ raw, line });
	}
	const first = parsed[0];
	if (first === undefined || first.raw.type !== "session") return out;
	const h = first.raw;
	out.header = {
		id: typeof h.id === "string" ? h.id : null,
		version: typeof h.version === "number" ? h.version : 1,
		cwd: typeof h.cwd === "string" ? h.cwd : null,
		timestamp: typeof h.timestamp === "string" ? h.timestamp : null,
		parentSession: typeof h.parentSession === "string" ? h.parentSession : null,
	};
	const v1 = out.header.version < 2;
	let previous: string | null = null;
	for (let i = 1; i < parsed.length; i++) {
		const { raw, line: n } = parsed[i] as { raw: Record<string, unknown>; line: number };
		if (raw.type === "session") {
			skip(out, n, "a second session header");
			continue;
		}
		let entry: PiEntry;
		if (v1) {
			entry = { ...raw, type: raw.type as string, id: `line:${n}`, parentId: previous };
			if (raw.type === "compaction" && typeof raw.firstKeptEntryIndex === "number") {
				const target = parsed[raw.firstKeptEntryIndex];
				if (target !== undefined && target.raw.type !== "session") entry.firstKeptEntryId = `line:${target.line}`;
			}
		} else {
			if (typeof raw.id !== "string") {
				skip(out, n, "an entry without an id");
				continue;
			}
			entry = {
				...raw,
				type: raw.type as string,
				id: raw.id,
				parentId: typeof raw.parentId === "string" ? raw.parentId : null,
			};
		}
		if (entry.type === "message" && entry.message?.role === "hookMessage") {
			entry.message = { ...entry.message, role: "custom" };
		}
		previous = entry.id;
		out.entries.push(entry);
	}
	return out;
}

function skip(out: ParsedSession, line: number, reason: string): void {
	out.malformed++;
	if (out.problems.length < 10) out.problems.push({ line, reason });
}
