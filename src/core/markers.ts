/** Fold markers (`{#code FOLDED}`) found in a tool call's arguments: what the marker guard looks for. */

const MARKER = /\{#([0-9a-fA-F]{6,64}) FOLDED\}/g;

/**
 * Codes of every fold marker in any string of a tool call's arguments (deep, JSON strings
 * included since a marker needs no escaping), lowercased, each once, in the order found.
 */
export function markerCodesIn(args: unknown): string[] {
	const found = new Set<string>();
	const visit = (v: unknown, depth: number): void => {
		if (typeof v === "string") {
			if (!v.includes("FOLDED}")) return;
			for (const m of v.matchAll(MARKER)) found.add((m[1] as string).toLowerCase());
		} else if (depth < MAX_SCAN_DEPTH && typeof v === "object" && v !== null) {
			for (const x of Array.isArray(v) ? v : Object.values(v)) visit(x, depth + 1);
		}
	};
	visit(args, 0);
	return [...found];
}

/** Arguments come from JSON, but a depth bound keeps a pathological value from overflowing the stack. */
const MAX_SCAN_DEPTH = 64;
