/** Load effective settings: defaults < <agentDir>/context-fold.json < environment. */
import { readFileSync } from "node:fs";
import { type ResolvedSettings, resolveSettings } from "../core/settings.ts";
import { settingsFile } from "./paths.ts";

export function loadSettings(env: NodeJS.ProcessEnv = process.env): ResolvedSettings {
	const path = settingsFile(env);
	let file: unknown;
	const extra: ResolvedSettings["warnings"] = [];
	try {
		const text = readFileSync(path, "utf8");
		try {
			file = JSON.parse(text);
			if (typeof file !== "object" || file === null || Array.isArray(file)) {
				extra.push({
					source: "file",
					name: path,
					value: "",
					message: `${path} is not a JSON object; ignored (it was not changed).`,
				});
				file = undefined;
			}
		} catch (error) {
			extra.push({
				source: "file",
				name: path,
				value: "",
				message: `${path} is not valid JSON (${(error as Error).message}); using defaults and environment. The file was not changed.`,
			});
		}
	} catch (error) {
		const code = (error as NodeJS.ErrnoException).code;
		if (code !== "ENOENT") {
			extra.push({
				source: "file",
				name: path,
				value: "",
				message: `cannot read ${path} (${code ?? "error"}); using defaults and environment.`,
			});
		}
	}
	const resolved = resolveSettings({ env, file });
	resolved.warnings.unshift(...extra);
	return resolved;
}
