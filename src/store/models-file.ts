/**
 * What <agentDir>/models.json says about a model: its context window and prices. The session file
 * names the provider and model of every response but not the window, which the fold ladder needs;
 * for custom models (the file's own) this is where Pi gets it too. Built-in models are not known
 * here (that would need Pi), so the CLI falls back to a stated default or --window.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Prices } from "../core/accounting.ts";
import { nonNegativeOr0 } from "../core/values.ts";
import { agentDir } from "./paths.ts";

export interface ModelFacts {
	contextWindow?: number;
	prices?: Prices;
}

export interface ModelsFile {
	path: string;
	/** Facts by `${provider}/${modelId}`. */
	models: Map<string, ModelFacts>;
	/** Why the file could not be used, when it exists but is unreadable or not JSON. */
	problem: string | null;
}

export function readModelsFile(env: NodeJS.ProcessEnv): ModelsFile {
	const path = join(agentDir(env), "models.json");
	const models = new Map<string, ModelFacts>();
	let data: unknown;
	try {
		data = JSON.parse(readFileSync(path, "utf8"));
	} catch (error) {
		const code = (error as NodeJS.ErrnoException).code;
		if (code === "ENOENT") return { path, models, problem: null };
		return { path, models, problem: `${path} was not used (${code ?? (error as Error).message})` };
	}
	const providers = (data as { providers?: unknown } | null)?.providers;
	if (typeof providers !== "object" || providers === null) return { path, models, problem: null };
	for (const [provider, config] of Object.entries(providers as Record<string, unknown>)) {
		const list = (config as { models?: unknown } | null)?.models;
		if (!Array.isArray(list)) continue;
		for (const m of list) {
			if (typeof m !== "object" || m === null || typeof (m as { id?: unknown }).id !== "string") continue;
			const model = m as { id: string; contextWindow?: unknown; cost?: Record<string, unknown> };
			const facts: ModelFacts = {};
			if (typeof model.contextWindow === "number" && model.contextWindow > 0) facts.contextWindow = model.contextWindow;
			const c = model.cost;
			if (typeof c === "object" && c !== null) {
				facts.prices = {
					input: nonNegativeOr0(c.input),
					output: nonNegativeOr0(c.output),
					cacheRead: nonNegativeOr0(c.cacheRead),
					cacheWrite: nonNegativeOr0(c.cacheWrite),
				};
			}
			models.set(`${provider}/${model.id}`, facts);
		}
	}
	return { path, models, problem: null };
}
