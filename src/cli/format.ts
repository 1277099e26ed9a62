export function formatBytes(n: number): string {
	if (n < 1024) return `${n} B`;
	if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
	if (n < 1024 ** 3) return `${(n / 1024 / 1024).toFixed(1)} MB`;
	return `${(n / 1024 ** 3).toFixed(2)} GB`;
}

export function formatPct(ratio: number | null): string {
	return ratio === null || !Number.isFinite(ratio) ? "—" : `${Math.round(ratio * 100)}%`;
}

/** "5 min ago", "3 h ago", "2 days ago": for listings, relative to the injected clock. */
export function formatAge(ms: number, now: number): string {
	const s = Math.max(0, Math.round((now - ms) / 1000));
	if (s < 90) return `${s} s ago`;
	if (s < 90 * 60) return `${Math.round(s / 60)} min ago`;
	if (s < 36 * 3600) return `${Math.round(s / 3600)} h ago`;
	return `${Math.round(s / 86400)} days ago`;
}

export interface Column {
	title: string;
	align?: "left" | "right";
}

/** Columns padded to their widest cell; numbers right-aligned. A table is text, so it tests as text. */
export function renderTable(columns: readonly Column[], rows: ReadonlyArray<readonly string[]>): string {
	const widths = columns.map((c, i) => Math.max(c.title.length, ...rows.map((r) => (r[i] ?? "").length)));
	const line = (cells: readonly string[]) =>
		cells
			.map((cell, i) => {
				const w = widths[i] ?? 0;
				return columns[i]?.align === "right" ? cell.padStart(w) : cell.padEnd(w);
			})
			.join("  ")
			.trimEnd();
	return [line(columns.map((c) => c.title)), line(widths.map((w) => "-".repeat(w))), ...rows.map((r) => line(r))].join(
		"\n",
	);
}

/** Quote for a POSIX shell when needed, so a printed command can be pasted as is. */
export function shellQuote(s: string): string {
	return /^[A-Za-z0-9_./:=@%+-]+$/.test(s) ? s : `'${s.replace(/'/g, "'\\''")}'`;
}

/** Session ids are shown at least this long (Pi's start with a timestamp: a shorter start rarely tells two apart). */
export const MIN_ID_CHARS = 8;

/**
 * How many characters tell every id of a listing apart, the way git shortens hashes: the shortest
 * length from MIN_ID_CHARS up at which no two different ids share their start.
 */
export function uniqueIdLength(ids: Iterable<string | null>): number {
	const distinct = [...new Set([...ids].filter((id): id is string => id !== null))].sort();
	let length = MIN_ID_CHARS;
	// Sorted, the id sharing the longest start with another is its neighbour.
	for (let i = 1; i < distinct.length; i++) {
		const a = distinct[i - 1] as string;
		const b = distinct[i] as string;
		let same = 0;
		while (same < a.length && same < b.length && a[same] === b[same]) same++;
		length = Math.max(length, same + 1);
	}
	return length;
}

/** The start of a session id, `length` characters (uniqueIdLength of the listing it is in). */
export function shortId(id: string | null, length = MIN_ID_CHARS): string {
	return id === null ? "(no id)" : id.slice(0, length);
}
