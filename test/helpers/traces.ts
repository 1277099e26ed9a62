// The real recorded traces (../shared/traces, read in place; the tests on them are skipped, saying
// so, when the directory is absent), and a copy of a trace carrying the fold records the extension
// would have written. Shared by the core tests of session reading and replay and by the CLI tests.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseSessionText } from "../../src/core/session/entries.ts";
import type { PiEntry } from "../../src/core/session/view.ts";
import { DEFAULT_SETTINGS } from "../../src/core/settings.ts";
import { replaySession } from "../../src/core/simulate/replay.ts";
import { sha256 } from "../../src/store/hash.ts";
import { parseIsoTime } from "../../src/store/session-file.ts";

export const TRACES = join(import.meta.dir, "../../../shared/traces");
export const HAVE_TRACES = existsSync(join(TRACES, "pi__pi-mono__large-session.jsonl"));
if (!HAVE_TRACES) console.warn(`[tests] ${TRACES} is absent: the tests on real traces are skipped`);

export const TRACE = {
	largeV1: join(TRACES, "pi__pi-mono__large-session.jsonl"),
	largeV3: join(TRACES, "pi__pi-mono__large-session.v3.jsonl"),
	compactV1: join(TRACES, "pi__pi-mono__before-compaction.jsonl"),
	compactV3: join(TRACES, "pi__pi-mono__before-compaction.v3.jsonl"),
} as const;

/**
 * A trace as if it had been recorded with context-fold: the replay's layers written as the custom
 * entries the extension appends, each just before the response to the request that committed it
 * (where Pi puts an entry appended from the context hook), and every reported prompt made smaller by
 * what the folds took out of it. v2/v3 traces only (they have ids).
 */
export function withFoldRecords(source: string, dest: string): { layers: number; blocks: number } {
	const text = readFileSync(source, "utf8");
	const parsed = parseSessionText(text);
	const replay = replaySession({
		entries: parsed.entries,
		settings: DEFAULT_SETTINGS,
		windowFor: () => 200_000,
		hash: sha256,
		parseTime: parseIsoTime,
		// The written file keeps the trace's compactions, so its folds are planned against those.
		compaction: "recorded",
	});
	const byResponse = new Map<string, (typeof replay.layers)[number]>();
	const masked = new Map<string, number>();
	let n = 0;
	for (const r of replay.requests) {
		if (r.fold !== null) byResponse.set(r.entryId, replay.layers[n++] as (typeof replay.layers)[number]);
		masked.set(r.entryId, r.maskedTokens);
	}
	const lines = text.split("\n").filter((l) => l.trim() !== "");
	const out: string[] = [lines[0] as string];
	let blocks = 0;
	for (const line of lines.slice(1)) {
		const entry = JSON.parse(line) as PiEntry;
		const layer = byResponse.get(entry.id);
		if (layer !== undefined) {
			const id = `cf${String(layer.seq).padStart(6, "0")}`;
			out.push(
				JSON.stringify({
					type: "custom",
					customType: "context-fold",
					data: layer,
					id,
					parentId: entry.parentId,
					timestamp: entry.timestamp,
				}),
			);
			entry.parentId = id;
			blocks += layer.blocks.length;
		}
		// The provider would have reported a prompt smaller by what the folds took out.
		const usage = entry.message?.usage;
		let cut = masked.get(entry.id) ?? 0;
		if (usage !== undefined && cut > 0) {
			for (const field of ["cacheRead", "cacheWrite", "input"] as const) {
				const take = Math.min(cut, usage[field] ?? 0);
				usage[field] = (usage[field] ?? 0) - take;
				cut -= take;
			}
		}
		out.push(JSON.stringify(entry));
	}
	writeFileSync(dest, `${out.join("\n")}\n`);
	return { layers: byResponse.size, blocks };
}
