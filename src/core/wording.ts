/**
 * Small wording helpers every surface shares (status inside Pi, the CLI's commands, recall
 * answers), so a count or an amount of money reads the same wherever it is shown.
 */

/** "1 event", "0 events", "2 matches": the count and the noun in the right number. */
export function plural(n: number, singular: string, pluralForm = `${singular}s`): string {
	return `${n} ${n === 1 ? singular : pluralForm}`;
}

/**
 * Dollars at a precision that fits the amount: whole dollars from $100, cents from $1, and four
 * decimals below (fold savings are often fractions of a cent). `signed` writes "+" before a gain.
 */
export function formatDollars(n: number, options: { signed?: boolean } = {}): string {
	const a = Math.abs(n);
	const sign = n < 0 && a >= 0.00005 ? "-" : options.signed ? "+" : "";
	return `${sign}$${a >= 100 ? a.toFixed(0) : a >= 1 ? a.toFixed(2) : a.toFixed(4)}`;
}
