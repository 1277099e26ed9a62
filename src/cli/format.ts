/** Plain-string formatting for CLI output: sizes, money, ages, aligned tables, shell quoting. */
import { groupDigits } from "../core/tokens.ts";

export { formatTokens, groupDigits } from "../core/tokens.ts";

export function formatBytes(n: number): string {
	if (n < 1024) return `${n} B`;
	if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
	if (n < 1024 ** 3) return `${(n / 1024 / 1024).toFixed(1)} MB`;
	return `${(n / 1024 ** 3).toFixed(2)} GB`;
}

export function formatDollars(n: number): string {
	const sign = n < 0 ? "-" : "";
	const a = Math.abs(n);
	return `${sign}$${a >= 100 ? a.toFixed(0) : a >= 1 ? a.toFixed(2) : a.toFixed(4)}`;
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

export function formatCount(n: number): string {
	return groupDigits(n);
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

/** The start of a session id, enough to tell sessions apart in a listing. */
export function shortId(id: string | null): string {
	return id === null ? "(no id)" : id.slice(0, 8);
}
