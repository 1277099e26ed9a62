/**
 * Where context-fold keeps its files, and where Pi keeps sessions. Honours PI_CODING_AGENT_DIR like Pi
 * does. Shared by the extension and the CLI.
 */
import { homedir } from "node:os";
import { join, resolve } from "node:path";

export function agentDir(env: NodeJS.ProcessEnv = process.env): string {
	const raw = env.PI_CODING_AGENT_DIR;
	if (raw !== undefined && raw.trim() !== "") {
		const expanded = raw === "~" ? homedir() : raw.startsWith("~/") ? join(homedir(), raw.slice(2)) : raw;
		return resolve(expanded);
	}
	return join(homedir(), ".pi", "agent");
}

export function settingsFile(env: NodeJS.ProcessEnv = process.env): string {
	return join(agentDir(env), "context-fold.json");
}

/** Per-session data directory: <agentDir>/context-fold/<session-id>/. */
export function sessionDataDir(sessionId: string, env: NodeJS.ProcessEnv = process.env): string {
	return join(agentDir(env), "context-fold", sanitizeId(sessionId));
}

/** Session ids come from Pi, but never let one escape the data directory. */
export function sanitizeId(id: string): string {
	const clean = id.replace(/[^A-Za-z0-9._-]/g, "_").replace(/^\.+/, "_");
	return clean.length === 0 ? "_" : clean.slice(0, 128);
}

/** Pi's sessions root: <agentDir>/sessions, one directory per project. */
export function sessionsRoot(env: NodeJS.ProcessEnv = process.env): string {
	return join(agentDir(env), "sessions");
}

/** Pi's default session directory for a working directory: <agentDir>/sessions/--<cwd with / \\ : as ->--. */
export function defaultSessionDir(cwd: string, env: NodeJS.ProcessEnv = process.env): string {
	const safe = `--${resolve(cwd)
		.replace(/^[/\\]/, "")
		.replace(/[/\\:]/g, "-")}--`;
	return join(sessionsRoot(env), safe);
}

/** `~` and `~/x` expanded against the home directory, as Pi expands configured paths. */
export function expandHome(path: string): string {
	if (path === "~") return homedir();
	return path.startsWith("~/") ? join(homedir(), path.slice(2)) : path;
}
