/**
 * What <agentDir>/models.json says about a model: its context window and prices. The session file
 * names the provider and model of every response but not the window, which the fold ladder needs;
 * for custom models (the file's own) this is where Pi gets it too. Built-in models are not known
 * here (that would need Pi), so the CLI falls back to a stated default or --window.
 */
import { join } from "node:path";
import type { Prices } from "../core/accounting.ts";
import { nonNegativeOr0 } from "../core/values.ts";
import { agentDir } from "./paths.ts";
import { readBoundedFile } from "./regular-file.ts";

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

/** models.json is a list of providers and models: a few KiB; anything past this is not one. */
const MAX_MODELS_BYTES = 16 * 1024 * 1024;

export function readModelsFile(env: NodeJS.ProcessEnv): ModelsFile {
	const path = join(agentDir(env), "models.json");
	const models = new Map<string, ModelFacts>();
	// Pi's file, but the CLI must not hang on a FIFO or a device in its place, nor read one unbounded.
	const read = readBoundedFile(path, MAX_MODELS_BYTES);
	if (read.status === "missing") return { path, models, problem: null };
	if (read.status === "refused") return { path, models, problem: `${path} was not used (${read.why})` };
	let data: unknown;
	try {
		data = JSON.parse(read.text);
	} catch (error) {
		return { path, models, problem: `${path} was not used (${(error as Error).message})` };
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
