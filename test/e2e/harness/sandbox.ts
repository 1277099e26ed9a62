// One throw-away directory per test holding everything Pi would otherwise read or write in ~ and /tmp.
import {
	existsSync,
	mkdirSync,
	mkdtempSync,
	readdirSync,
	readFileSync,
	rmSync,
	statSync,
	writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseJsonl } from "./jsonl.ts";

export const FAKE_PROVIDER = "fake";
export const FAKE_MODEL_ID = "fake-model";

export interface ModelConfig {
	id?: string;
	contextWindow?: number;
	maxTokens?: number;
	reasoning?: boolean;
	/** US dollars per million tokens, as in models.json. */
	cost?: { input: number; output: number; cacheRead: number; cacheWrite: number };
	/** Cache lifetime in seconds per retention tier (1.6.0 uses it for cache warming; 0.80.6 ignores it). */
	promptCache?: { short?: number; long?: number };
	/** Any other models.json model fields, e.g. `compat`. */
	extra?: Record<string, unknown>;
}

export interface CompactionSettings {
	enabled?: boolean;
	reserveTokens?: number;
	keepRecentTokens?: number;
}

export interface SandboxOptions {
	/** Base URL of the fake model (FakeModel.url). */
	fakeUrl: string;
	/** The provider API Pi speaks to it: "openai-completions" (default) or "anthropic-messages". */
	api?: string;
	model?: ModelConfig;
	compaction?: CompactionSettings;
	/** Merged over the harness defaults in the agent's settings.json. */
	settings?: Record<string, unknown>;
	/** Extra environment for every Pi run in this sandbox (e.g. CONTEXTFOLD_* variables). */
	env?: Record<string, string>;
	/**
	 * Which fold rule context-fold runs: "fixed" (default here) pins 0.1.0's fold points through the
	 * CONTEXTFOLD_TEST_FIXED_FOLDS seam, so tests of fold mechanics get folds at known requests;
	 * "priced" is what users get (the priced-rule tests and the economics benchmark use it).
	 */
	foldRule?: "fixed" | "priced";
	/** Files to create in the project directory (Pi's cwd), by relative path. */
	files?: Record<string, string>;
}

/** A session file line; only `type` is guaranteed, the rest depends on the entry type. */
export interface SessionEntry {
	type: string;
	id?: string;
	parentId?: string | null;
	message?: SessionMessage;
	[key: string]: unknown;
}

export interface SessionMessage {
	role: string;
	content?: unknown;
	usage?: {
		input: number;
		output: number;
		cacheRead: number;
		cacheWrite: number;
		totalTokens?: number;
		cost?: unknown;
	};
	stopReason?: string;
	[key: string]: unknown;
}

export interface Sandbox {
	readonly root: string;
	readonly agentDir: string;
	readonly home: string;
	readonly tmp: string;
	/** Project directory Pi runs in. */
	readonly cwd: string;
	readonly sessionDir: string;
	readonly modelId: string;
	/** Sandbox-wide extra env (from options); per-run env is added on top. */
	readonly env: Record<string, string>;
	readonly settings: Record<string, unknown>;
	/** Rewrites settings.json with `patch` merged over the current settings (shallow). */
	updateSettings(patch: Record<string, unknown>): void;
	/** Session files (.jsonl) under the session dir, oldest first. */
	sessionFiles(): string[];
	/** The most recently modified session file; throws when there is none. */
	latestSessionFile(): string;
	readSession(file?: string): SessionEntry[];
	/** Deletes the sandbox unless CF_KEEP_SANDBOX=1 (then prints where it is, for debugging). */
	cleanup(): void;
}

export function createSandbox(options: SandboxOptions): Sandbox {
	const root = mkdtempSync(join(tmpdir(), "cf-e2e-"));
	const dirs = {
		agentDir: join(root, "agent"),
		home: join(root, "home"),
		tmp: join(root, "tmp"),
		cwd: join(root, "project"),
		sessionDir: join(root, "sessions"),
	};
	for (const dir of Object.values(dirs)) mkdirSync(dir, { recursive: true });
	for (const [rel, content] of Object.entries(options.files ?? {})) {
		const path = join(dirs.cwd, rel);
		mkdirSync(join(path, ".."), { recursive: true });
		writeFileSync(path, content);
	}

	const model = options.model ?? {};
	const modelId = model.id ?? FAKE_MODEL_ID;
	const modelEntry: Record<string, unknown> = {
		id: modelId,
		reasoning: model.reasoning ?? false,
		input: ["text"],
		cost: model.cost ?? { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
		contextWindow: model.contextWindow ?? 200_000,
		maxTokens: model.maxTokens ?? 8192,
		...(model.promptCache ? { promptCache: model.promptCache } : {}),
		...model.extra,
	};
	const models = {
		providers: {
			[FAKE_PROVIDER]: {
				baseUrl: options.fakeUrl,
				api: options.api ?? "openai-completions",
				apiKey: "fake-key",
				models: [modelEntry],
			},
		},
	};
	writeFileSync(join(dirs.agentDir, "models.json"), JSON.stringify(models, null, 2));

	let settings: Record<string, unknown> = {
		defaultProvider: FAKE_PROVIDER,
		defaultModel: modelId,
		// A failing fake would otherwise cost seconds of backoff per request.
		retry: { enabled: false },
		...(options.compaction ? { compaction: options.compaction } : {}),
		...options.settings,
	};
	const writeSettings = () => writeFileSync(join(dirs.agentDir, "settings.json"), JSON.stringify(settings, null, 2));
	writeSettings();

	const sessionFiles = (): string[] => {
		const found: string[] = [];
		const walk = (dir: string) => {
			if (!existsSync(dir)) return;
			for (const name of readdirSync(dir)) {
				const path = join(dir, name);
				if (statSync(path).isDirectory()) walk(path);
				else if (name.endsWith(".jsonl")) found.push(path);
			}
		};
		walk(dirs.sessionDir);
		return found.sort((a, b) => statSync(a).mtimeMs - statSync(b).mtimeMs || a.localeCompare(b));
	};
	const latestSessionFile = () => {
		const files = sessionFiles();
		const last = files[files.length - 1];
		if (!last) throw new Error(`no session file under ${dirs.sessionDir}`);
		return last;
	};

	return {
		root,
		...dirs,
		modelId,
		env: { ...(options.foldRule === "priced" ? {} : { CONTEXTFOLD_TEST_FIXED_FOLDS: "1" }), ...options.env },
		get settings() {
			return settings;
		},
		updateSettings(patch) {
			settings = { ...settings, ...patch };
			writeSettings();
		},
		sessionFiles,
		latestSessionFile,
		readSession(file) {
			return parseJsonl<SessionEntry>(readFileSync(file ?? latestSessionFile(), "utf8"));
		},
		cleanup() {
			if (process.env.CF_KEEP_SANDBOX === "1") {
				console.error(`[e2e] keeping sandbox ${root}`);
				return;
			}
			rmSync(root, { recursive: true, force: true });
		},
	};
}

/** Assistant messages of a session, in file order. */
export function assistantMessages(entries: SessionEntry[]): SessionMessage[] {
	return entries.flatMap((e) => (e.type === "message" && e.message?.role === "assistant" ? [e.message] : []));
}

export function entriesOfType(entries: SessionEntry[], type: string): SessionEntry[] {
	return entries.filter((e) => e.type === type);
}
