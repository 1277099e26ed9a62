/**
 * Load effective settings: defaults < <agentDir>/context-fold.json < environment. The file is read by
 * the one reader every caller uses (readSettingsJson: regular files only, bounded).
 */
import { type ResolvedSettings, resolveSettings, type SettingsWarning } from "../core/resolved-settings.ts";
import { settingsFile } from "./paths.ts";
import { readSettingsJson } from "./settings-file.ts";

export function loadSettings(env: NodeJS.ProcessEnv = process.env): ResolvedSettings {
	const path = settingsFile(env);
	const read = readSettingsJson(path);
	const extra: SettingsWarning[] = [];
	const warn = (message: string) => extra.push({ source: "file", name: path, value: "", message });
	if (read.status === "invalid") warn(`${read.message}; using defaults and environment. The file was not changed.`);
	else if (read.status === "unreadable") warn(`${read.message}; ignored, using defaults and environment.`);
	const resolved = resolveSettings({ env, file: read.status === "ok" ? read.data : undefined });
	resolved.warnings.unshift(...extra);
	return resolved;
}
