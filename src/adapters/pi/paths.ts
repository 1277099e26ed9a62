/** Where context-fold keeps its files. Honours PI_CODING_AGENT_DIR like Pi does. */
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
