/**
 * A process-wide guard so that exactly one copy of context-fold acts when Pi loads the package twice
 * (installed plus -e). Each factory call gets its own token; the first to claim holds the process
 * until its session shuts down (reload, new, resume, quit), when the next load claims afresh.
 */
const KEY = Symbol.for("context-fold.active-instance");

interface Holder {
	token: object;
	source: string;
}

export interface Claim {
	owner: boolean;
	token: object;
	/** Source of the instance that holds the guard (this one when owner). */
	holder: string;
}

type GuardGlobal = typeof globalThis & { [KEY]?: Holder };

export function claimInstance(source: string): Claim {
	const g = globalThis as GuardGlobal;
	const token = {};
	const current = g[KEY];
	if (current !== undefined) return { owner: false, token, holder: current.source };
	g[KEY] = { token, source };
	return { owner: true, token, holder: source };
}

export function releaseInstance(claim: Claim): void {
	const g = globalThis as GuardGlobal;
	if (claim.owner && g[KEY]?.token === claim.token) delete g[KEY];
}
