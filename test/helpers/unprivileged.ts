/**
 * Permission-denied paths, tested for real even though the tests run as root (root ignores file
 * modes). A test takes the permission away from everyone (a file 0o000, a directory 0o555), then
 * runs the call under `asUnprivileged`: as root, with the effective user and group of `nobody`, so
 * the modes apply; as any other user, as is, since they apply already. Only the effective ids change
 * (the saved ids stay root's), so the switch back always works; the body must be synchronous, so
 * nothing else runs while the ids are switched.
 */
import { chmodSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";

const NOBODY = 65534;

export function asUnprivileged<T>(body: () => T): T {
	const { seteuid, setegid } = process;
	if (process.geteuid?.() !== 0 || seteuid === undefined || setegid === undefined) return body();
	setegid(NOBODY);
	seteuid(NOBODY);
	try {
		return body();
	} finally {
		seteuid(0);
		setegid(0);
	}
}

/**
 * Let other users through a test's directories (mkdtemp makes them 0700), so that only the mode of
 * the file or directory under test decides what `nobody` may do.
 */
export function openToOthers(...dirs: string[]): void {
	for (const dir of dirs) chmodSync(dir, 0o755);
}

/** Remove a test's temp tree, giving its directories back their write bit first (for non-root runs). */
export function removeTree(dir: string): void {
	const reopen = (d: string) => {
		chmodSync(d, 0o700);
		for (const entry of readdirSync(d, { withFileTypes: true })) if (entry.isDirectory()) reopen(join(d, entry.name));
	};
	try {
		reopen(dir);
	} catch {
		// Already gone, or not ours to change: rmSync below says what it cannot remove.
	}
	rmSync(dir, { recursive: true, force: true });
}
