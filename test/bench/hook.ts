/**
 * Benchmark of the `context` hook: what context-fold adds to every request Pi sends.
 *
 * Sessions are synthetic but shaped like real Pi sessions: a branch of session entries (a user
 * message, then assistant messages with tool calls, usage and sometimes signed thinking, each
 * followed by a tool result of a few hundred to a few thousand tokens, sizes drawn from a fixed
 * seed). Each session is grown request by request through the real hook, with a fake provider that
 * reports the prompt it received as usage, so its fold layers are the ones the ladder really commits.
 *
 * Two kinds of request are measured, each on a fresh clone of the outgoing messages (Pi clones them
 * per request with structuredClone) and interleaved with a pass-through hook on an identical clone:
 * - steady: layers already committed and re-applied, one new assistant message and tool result since
 *   the previous request, and no fold event;
 * - fold event: the request on which the ladder commits a new layer.
 */

import { availableParallelism, loadavg } from "node:os";
import { type HookDeps, runContextHook } from "../../src/adapters/pi/context-hook.ts";
import { LiveBranch } from "../../src/adapters/pi/state.ts";
import { messageTokens } from "../../src/core/blocks.ts";
import { renderDigest, utf8Length } from "../../src/core/digest.ts";
import type { FrozenLayer } from "../../src/core/layers.ts";
import { findRiskLines } from "../../src/core/lexicon.ts";
import { FOLD_ENTRY_TYPE } from "../../src/core/session/branch-state.ts";
import { buildView, type PiContent, type PiEntry, type PiMessage } from "../../src/core/session/view.ts";
import { DEFAULT_SETTINGS, type Settings } from "../../src/core/settings.ts";
import { sha256 } from "../../src/store/hash.ts";

// ---------------------------------------------------------------------------------------------
// Parameters

export const SEED = 0x5eed_f01d;
export const SIZES = [50_000, 100_000, 200_000] as const;
export const DEFAULT_WINDOW = 200_000;
/**
 * Window per session size. 200k everywhere except 50k: with a 200k window the first fold waits for
 * 45% of it (90k tokens), so a 50k session has never folded and has no layers to re-apply, and can
 * never produce a fold event. A 100k window puts the first fold at 45k.
 */
export const WINDOW_BY_SIZE: Readonly<Record<number, number>> = { 50000: 100_000, 100000: 200_000, 200000: 200_000 };
/** System prompt plus tool schemas, as the provider counts them in every reported prompt. */
export const SYSTEM_TOKENS = 6_000;
export const STEADY_WARMUP = 100;
export const STEADY_SAMPLES = 1_000;
export const FOLD_WARMUP = 6;
export const FOLD_SAMPLES = 100;
/** Second pass with a full GC before every sample: how much of the tail is garbage collection. */
export const QUIESCED_SAMPLES = { steady: 200, fold: 30 } as const;
export const STAGE_SAMPLES = { steady: 120, fold: 20 } as const;
/** Target: a steady request's hook cost at 200k tokens, p99. */
export const TARGET_P99_MS = 2;
export const TARGET_SIZE = 200_000;

const T0 = Date.UTC(2025, 5, 2, 9, 0, 0);

// ---------------------------------------------------------------------------------------------
// Deterministic synthetic content

type Rand = () => number;

/** mulberry32: small, fast, and the same sequence on every runtime. */
function mulberry32(seed: number): Rand {
	let a = seed >>> 0;
	return () => {
		a = (a + 0x6d2b79f5) >>> 0;
		let t = a;
		t = Math.imul(t ^ (t >>> 15), t | 1);
		t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
		return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
	};
}

function int(rand: Rand, lo: number, hi: number): number {
	return lo + Math.floor(rand() * (hi - lo + 1));
}

/** Log-uniform integer: many small values, a long tail of large ones, like real tool output. */
function logUniform(rand: Rand, lo: number, hi: number): number {
	return Math.round(Math.exp(Math.log(lo) + rand() * (Math.log(hi) - Math.log(lo))));
}

function pick<T>(rand: Rand, items: readonly T[]): T {
	return items[Math.floor(rand() * items.length)] as T;
}

const WORDS = [
	"config",
	"parser",
	"session",
	"branch",
	"layer",
	"digest",
	"buffer",
	"request",
	"handler",
	"module",
	"render",
	"state",
	"index",
	"token",
	"window",
	"cache",
	"entry",
	"record",
	"stream",
	"socket",
	"client",
	"server",
	"schema",
	"value",
	"result",
	"options",
	"context",
	"message",
	"payload",
	"offset",
	"length",
	"header",
	"footer",
	"policy",
	"ladder",
	"budget",
	"thread",
	"worker",
	"queue",
	"store",
];
const DIRS = ["src/core", "src/adapters/pi", "src/store", "test/core", "test/e2e", "lib", "packages/api/src"];
const COMMANDS = [
	"bun test test/core",
	"npm run build",
	"npx tsc --noEmit -p .",
	"git log --oneline -40",
	"git diff --stat HEAD~3",
	"ls -la src/core",
	"cargo build --release",
	"make -j4 check",
	"rg -n 'TODO|FIXME' src",
	"pytest -q tests/unit",
];
const RISK_LINES = [
	"error TS2322: Type 'string | undefined' is not assignable to type 'string'.",
	"warning: unused variable `offset`",
	"FAIL test/core/plan.test.ts > planFold > keeps the tail",
	"Error: ENOENT: no such file or directory, open 'fixtures/missing.json'",
	"npm ERR! code ELIFECYCLE",
	"AssertionError: expected 3 to equal 4",
];

function words(rand: Rand, n: number): string {
	const out: string[] = [];
	for (let i = 0; i < n; i++) out.push(pick(rand, WORDS));
	return out.join(" ");
}

function path(rand: Rand): string {
	return `${pick(rand, DIRS)}/${pick(rand, WORDS)}.ts`;
}

type ToolKind = "bash" | "read" | "grep";

function toolLine(rand: Rand, kind: ToolKind, i: number): string {
	// About 1.5% risk lines: a build or test log with the odd warning or failure in it.
	if (kind === "bash" && rand() < 0.015) return pick(rand, RISK_LINES);
	if (kind === "bash") {
		const r = rand();
		if (r < 0.45) return `  ✓ ${words(rand, int(rand, 3, 7))} (${int(rand, 0, 90)}ms)`;
		if (r < 0.8) return `${path(rand)}:${int(rand, 1, 900)}:${int(rand, 1, 80)}  ${words(rand, int(rand, 4, 10))}`;
		return `[${String(i).padStart(4, "0")}] ${words(rand, int(rand, 2, 12))} ${int(rand, 0, 99999)}`;
	}
	if (kind === "read") {
		const indent = "\t".repeat(int(rand, 0, 3));
		const r = rand();
		if (r < 0.35)
			return `${indent}const ${pick(rand, WORDS)}${i} = ${pick(rand, WORDS)}(${words(rand, 2).replace(" ", ", ")});`;
		if (r < 0.55)
			return `${indent}if (${pick(rand, WORDS)}.${pick(rand, WORDS)} > ${int(rand, 0, 500)}) return ${pick(rand, WORDS)};`;
		if (r < 0.7) return `${indent}// ${words(rand, int(rand, 4, 14))}`;
		if (r < 0.85) return `${indent}}`;
		return `${indent}export function ${pick(rand, WORDS)}${pick(rand, WORDS)}(${pick(rand, WORDS)}: string): number {`;
	}
	return `${path(rand)}:${int(rand, 1, 2000)}:\t${words(rand, int(rand, 3, 12))}`;
}

function toolText(rand: Rand, kind: ToolKind, tokens: number): string {
	const lines: string[] = [];
	let chars = 0;
	for (let i = 0; chars < tokens * 4; i++) {
		const line = toolLine(rand, kind, i);
		lines.push(line);
		chars += line.length + 1;
	}
	return lines.join("\n");
}

function prose(rand: Rand, tokens: number): string {
	const sentences: string[] = [];
	let chars = 0;
	while (chars < tokens * 4) {
		const s = `The ${words(rand, int(rand, 6, 18))}.`;
		sentences.push(s);
		chars += s.length + 1;
	}
	return sentences.join(" ");
}

function base62(rand: Rand, n: number): string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
	let s = "";
	for (let i = 0; i < n; i++) s += alphabet[Math.floor(rand() * alphabet.length)];
	return s;
}

// ---------------------------------------------------------------------------------------------
// Synthetic Pi session

function tokensOf(messages: readonly PiMessage[]): number {
	let total = 0;
	for (const v of buildView(messages, () => null)) total += messageTokens(v);
	return total;
}

/** A session branch that grows one assistant tool call and tool result at a time. */
class SyntheticSession {
	readonly branch: PiEntry[] = [];
	/** The message objects of the branch's message entries, in order (what Pi turns into the request). */
	readonly messages: PiMessage[] = [];
	/** Estimated tokens of every message as recorded, before any folding. */
	rawTokens = 0;
	private readonly rand: Rand;
	/** Entry ids draw from their own stream, so content never depends on when folds happened. */
	private readonly idRand: Rand;
	private readonly ids = new Set<string>();
	private clock = T0;
	private turn = 0;

	constructor(seed: number) {
		this.rand = mulberry32(seed);
		this.idRand = mulberry32(seed ^ 0x1d5eed);
		this.push({ type: "model_change", provider: "anthropic", modelId: "claude-sonnet-4-5" });
		this.push({ type: "thinking_level_change", thinkingLevel: "medium" });
		this.pushMessage({
			role: "user",
			content: [
				{
					type: "text",
					text: "The build fails after the refactor of the session store. Fix it and keep the tests green.",
				},
			],
			timestamp: this.tick(1000),
		});
	}

	/** Append an assistant tool call (with the usage the provider reported) and the tool's result. */
	addTurn(prompt: number, previousPrompt: number): void {
		const rand = this.rand;
		const n = this.turn++;
		const kind: ToolKind = pick(rand, ["bash", "bash", "read", "read", "grep"] as const);
		const callId = `toolu_01${base62(rand, 22)}`;
		const args =
			kind === "bash"
				? { command: pick(rand, COMMANDS), timeout: 120 }
				: kind === "read"
					? { path: path(rand), offset: int(rand, 1, 400), limit: 400 }
					: { pattern: pick(rand, WORDS), path: pick(rand, DIRS), glob: "*.ts" };
		const content: PiContent[] = [];
		let output = 0;
		if (rand() < 0.4) {
			const thinking = prose(rand, logUniform(rand, 60, 900));
			// Anthropic-style signed thinking: the signature is opaque and large.
			content.push({ type: "thinking", thinking, thinkingSignature: base62(rand, 344) });
			output += Math.ceil(thinking.length / 4);
		}
		if (rand() < 0.25) {
			const text = prose(rand, int(rand, 10, 60));
			content.push({ type: "text", text });
			output += Math.ceil(text.length / 4);
		}
		content.push({ type: "toolCall", id: callId, name: kind, arguments: args });
		output += 30;
		const cacheRead = n === 0 ? 0 : Math.min(previousPrompt, Math.floor(prompt * 0.92));
		const input = 4;
		const cacheWrite = Math.max(0, prompt - cacheRead - input);
		// Pi's full Usage shape; the view reads only the four counts.
		const usage = {
			input,
			output,
			cacheRead,
			cacheWrite,
			totalTokens: input + output + cacheRead + cacheWrite,
			cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
		};
		this.pushMessage({
			role: "assistant",
			content,
			api: "anthropic-messages",
			provider: "anthropic",
			model: "claude-sonnet-4-5",
			usage,
			stopReason: "toolUse",
			timestamp: this.tick(int(rand, 2_000, 20_000)),
			durationMs: int(rand, 1_500, 15_000),
		});
		const tokens = logUniform(rand, 200, 4_000);
		const text = toolText(rand, kind, tokens);
		const details: Record<string, unknown> = {};
		if (kind === "bash" && tokens > 2_000) {
			details.truncation = { truncated: true, truncatedBy: "lines", totalLines: int(rand, 2_000, 9_000) };
			details.fullOutputPath = `/tmp/pi-bash-${base62(rand, 8)}.log`;
		}
		this.pushMessage({
			role: "toolResult",
			toolCallId: callId,
			toolName: kind,
			content: [{ type: "text", text }],
			details,
			isError: false,
			timestamp: this.tick(int(rand, 100, 8_000)),
		});
	}

	/** What persist does inside Pi: append the layer as a custom entry on the branch. */
	addLayer(layer: FrozenLayer): void {
		this.push({ type: "custom", customType: FOLD_ENTRY_TYPE, data: layer });
	}

	private pushMessage(message: PiMessage): void {
		this.push({ type: "message", message });
		this.messages.push(message);
		this.rawTokens += tokensOf([message]);
	}

	private push(fields: Omit<PiEntry, "id" | "parentId" | "timestamp">): void {
		let id = "";
		do
			id = Math.floor(this.idRand() * 0xffffffff)
				.toString(16)
				.padStart(8, "0");
		while (this.ids.has(id));
		this.ids.add(id);
		const parentId = this.branch[this.branch.length - 1]?.id ?? null;
		this.branch.push({ ...fields, id, parentId, timestamp: new Date(this.clock).toISOString() } as PiEntry);
	}

	private tick(ms: number): number {
		this.clock += ms;
		return this.clock;
	}
}

/** One request of the growth run, as the branch stood at it. */
interface RequestPoint {
	/** Branch length the hook synced (entries up to the newest tool result). */
	branchLength: number;
	/** Branch length after the request, including a layer entry its fold appended. */
	endLength: number;
	/** Message count of the outgoing list. */
	messages: number;
	rawTokens: number;
	folded: boolean;
	layers: number;
	substitutions: number;
	usage: number;
	usageAfter: number;
}

/** A request to replay: the branch the state was synced to before it, and the branch at it. */
export interface Replay {
	kind: "steady" | "fold";
	size: number;
	window: number;
	/** Branch at the end of the previous request: what the state has already seen. */
	prefix: PiEntry[];
	/** Branch at this request. */
	branch: PiEntry[];
	/** The message objects Pi clones for this request. */
	messages: PiMessage[];
	point: RequestPoint;
	/** Layers committed on the branch before this request. */
	layersBefore: number;
	/** The messages of the previous request, which warmed the hook's per-block caches. */
	previousMessages: PiMessage[];
}

/**
 * The state the hook holds when this request arrives: synced to the previous request's branch, with
 * the per-block caches that building the previous request's view filled (as in a live session).
 */
function warmState(replay: Replay): LiveBranch {
	const state = new LiveBranch();
	state.sync(replay.prefix);
	buildView(
		structuredClone(replay.previousMessages),
		(m) => state.lookup(m),
		{
			raw: (id) => state.rawMessage(id),
			verified: state.verified,
			facts: state.facts,
			masked: state.index.byKey,
		},
		state.views,
	);
	return state;
}

function settingsFor(): Settings {
	return { ...DEFAULT_SETTINGS };
}

/**
 * Grow a session through the real hook until it holds `size` tokens, then keep going until both a
 * steady request (layers, no fold) and a fold event have been seen at or beyond that size.
 */
export function buildReplays(size: number, window: number): { steady: Replay; fold: Replay } {
	const session = new SyntheticSession(SEED);
	const settings = settingsFor();
	const state = new LiveBranch();
	const points: RequestPoint[] = [];
	let steadyAt = -1;
	let foldAt = -1;
	let prompt = 0;
	for (let turn = 0; turn < 5_000; turn++) {
		const branchLength = session.branch.length;
		const messages = structuredClone(session.messages);
		const outcome = runContextHook(messages, {
			state,
			settings,
			getBranch: () => session.branch,
			contextWindow: () => window,
			persist: (layer) => session.addLayer(layer),
		});
		const point: RequestPoint = {
			branchLength,
			endLength: session.branch.length,
			messages: messages.length,
			rawTokens: session.rawTokens,
			folded: outcome.plan.layer !== null,
			layers: state.index.layers.length,
			substitutions: outcome.applied,
			usage: outcome.plan.usage.tokens,
			usageAfter: outcome.plan.usageAfter,
		};
		points.push(point);
		const i = points.length - 1;
		if (session.rawTokens >= size && i > 0) {
			if (steadyAt < 0 && !point.folded && point.layers > 0) steadyAt = i;
			if (foldAt < 0 && point.folded) foldAt = i;
		}
		if (steadyAt >= 0 && foldAt >= 0) break;
		const previous = prompt;
		prompt = SYSTEM_TOKENS + tokensOf(messages);
		session.addTurn(prompt, previous);
	}
	if (steadyAt < 0 || foldAt < 0)
		throw new Error(
			`session of ${size} tokens (window ${window}): no ${steadyAt < 0 ? "steady request" : "fold event"}`,
		);
	const replay = (kind: Replay["kind"], i: number): Replay => {
		const point = points[i] as RequestPoint;
		const previous = points[i - 1] as RequestPoint;
		const branch = session.branch.slice(0, point.branchLength);
		// Since the previous request: exactly one assistant message and its tool result.
		const added = session.branch.slice(previous.endLength, point.branchLength).map((e) => e.message?.role);
		if (added.join() !== "assistant,toolResult") throw new Error(`${kind} ${size}: request adds ${added.join()}`);
		return {
			kind,
			size,
			window,
			prefix: session.branch.slice(0, previous.endLength),
			branch,
			messages: branch.flatMap((e) => (e.type === "message" && e.message !== undefined ? [e.message] : [])),
			point,
			layersBefore: previous.layers,
			previousMessages: session.branch
				.slice(0, previous.branchLength)
				.flatMap((e) => (e.type === "message" && e.message !== undefined ? [e.message] : [])),
		};
	};
	return { steady: replay("steady", steadyAt), fold: replay("fold", foldAt) };
}

// ---------------------------------------------------------------------------------------------
// Measurement

interface Dist {
	p50: number;
	p99: number;
	mean: number;
	min: number;
	max: number;
}

function dist(samples: readonly number[]): Dist {
	const s = [...samples].sort((a, b) => a - b);
	const at = (p: number) => s[Math.min(s.length - 1, Math.max(0, Math.ceil(p * s.length) - 1))] as number;
	return {
		p50: at(0.5),
		p99: at(0.99),
		mean: s.reduce((a, b) => a + b, 0) / s.length,
		min: s[0] as number,
		max: s[s.length - 1] as number,
	};
}

type Handler = (event: { type: "context"; messages: PiMessage[] }) => undefined;

/** A pass-through extension: receives the cloned messages, changes nothing. */
const passThrough: Handler = (_event) => undefined;

interface Sample {
	clone: number;
	handler: number;
	/** CPU time of this process during the handler (all its threads), ms: untouched by other processes' load. */
	cpu: number;
}

/** What Pi does per request for one context handler: clone the messages, call the handler. */
function request(messages: readonly PiMessage[], handler: Handler): Sample {
	const t0 = performance.now();
	const cloned = structuredClone(messages) as PiMessage[];
	const c1 = process.cpuUsage();
	const t1 = performance.now();
	handler({ type: "context", messages: cloned });
	const t2 = performance.now();
	const c2 = process.cpuUsage(c1);
	return { clone: t1 - t0, handler: t2 - t1, cpu: (c2.user + c2.system) / 1000 };
}

export interface CellResult {
	kind: "steady" | "fold";
	size: number;
	window: number;
	samples: number;
	warmup: number;
	session: {
		entries: number;
		messages: number;
		rawTokens: number;
		/** UTF-16 characters of message text (tool results, thinking, text, call arguments). */
		chars: number;
		layersBefore: number;
		usage: number;
		usageAfter: number;
		substitutions: number;
	};
	/** For fold cells: the layer each sample committed. */
	layer?: { blocks: number; tokens: number; reason: string };
	/** ms, the hook alone (sync, view, plan, persist, apply). */
	hook: Dist;
	/** ms of CPU time the process spent during the hook (1 µs resolution; includes its GC threads). */
	hookCpu: Dist;
	/** ms, the hook alone with a full GC forced before each sample (separate pass; not the target metric). */
	hookQuiesced: Dist;
	/** ms, structuredClone of the outgoing messages: Pi pays it with or without the extension. */
	clone: Dist;
	/** ms, the pass-through handler alone. */
	passThrough: Dist;
	/** ms, clone + hook per request, and clone + pass-through per request. */
	requestWithHook: Dist;
	requestPassThrough: Dist;
	/** requestWithHook / requestPassThrough at p50 and p99. */
	ratio: { p50: number; p99: number };
}

function chars(messages: readonly PiMessage[]): number {
	let n = 0;
	for (const v of buildView(messages, () => null)) for (const b of v.blocks) n += b.text.length;
	return n;
}

export function measureCell(replay: Replay, settings: Settings, warmup: number, samples: number): CellResult {
	const recorded: FrozenLayer[] = [];
	let state = new LiveBranch();
	let last: ReturnType<typeof runContextHook> | undefined;
	const deps: HookDeps = {
		get state() {
			return state;
		},
		settings,
		getBranch: () => replay.branch,
		contextWindow: () => replay.window,
		persist: (layer) => {
			recorded.push(layer);
		},
	};
	const hook: Handler = (event) => {
		last = runContextHook(event.messages, deps);
		return undefined;
	};
	const hookRuns: Sample[] = [];
	const passRuns: Sample[] = [];
	for (let i = 0; i < warmup + samples; i++) {
		// Fresh state synced to the previous request, outside the timing: each sample is the same request.
		state = warmState(replay);
		if (state.index.layers.length !== replay.layersBefore)
			throw new Error(`${replay.kind} ${replay.size}: state rebuilt ${state.index.layers.length} layers`);
		last = undefined;
		let h: Sample;
		let p: Sample;
		// Alternate the order so drift and cache effects fall on both sides equally.
		if (i % 2 === 0) {
			h = request(replay.messages, hook);
			p = request(replay.messages, passThrough);
		} else {
			p = request(replay.messages, passThrough);
			h = request(replay.messages, hook);
		}
		const outcome = last as ReturnType<typeof runContextHook> | undefined;
		if (outcome === undefined) throw new Error("hook did not run");
		if (replay.kind === "fold" && outcome.plan.layer === null)
			throw new Error(`fold ${replay.size}: sample ${i} committed no layer (state ${outcome.plan.state})`);
		if (replay.kind === "steady" && outcome.plan.layer !== null)
			throw new Error(`steady ${replay.size}: sample ${i} folded; not a steady request`);
		if (replay.kind === "steady" && outcome.applied === 0)
			throw new Error(`steady ${replay.size}: sample ${i} re-applied no substitutions`);
		if (i >= warmup) {
			hookRuns.push(h);
			passRuns.push(p);
		}
	}
	const layer = recorded[recorded.length - 1];
	return {
		kind: replay.kind,
		size: replay.size,
		window: replay.window,
		samples,
		warmup,
		session: {
			entries: replay.branch.length,
			messages: replay.messages.length,
			rawTokens: replay.point.rawTokens,
			chars: chars(replay.messages),
			layersBefore: replay.layersBefore,
			usage: replay.point.usage,
			usageAfter: replay.point.usageAfter,
			substitutions: replay.point.substitutions,
		},
		...(replay.kind === "fold" &&
			layer !== undefined && {
				layer: {
					blocks: layer.blocks.length,
					tokens: layer.blocks.reduce((a, b) => a + b.tokens, 0),
					reason: layer.reason,
				},
			}),
		hook: dist(hookRuns.map((s) => s.handler)),
		hookCpu: dist(hookRuns.map((s) => s.cpu)),
		hookQuiesced: measureQuiesced(
			replay,
			settings,
			replay.kind === "fold" ? QUIESCED_SAMPLES.fold : QUIESCED_SAMPLES.steady,
		),
		clone: dist([...hookRuns, ...passRuns].map((s) => s.clone)),
		passThrough: dist(passRuns.map((s) => s.handler)),
		requestWithHook: dist(hookRuns.map((s) => s.clone + s.handler)),
		requestPassThrough: dist(passRuns.map((s) => s.clone + s.handler)),
		ratio: {
			p50: dist(hookRuns.map((s) => s.clone + s.handler)).p50 / dist(passRuns.map((s) => s.clone + s.handler)).p50,
			p99: dist(hookRuns.map((s) => s.clone + s.handler)).p99 / dist(passRuns.map((s) => s.clone + s.handler)).p99,
		},
	};
}

/** A full collection: Bun's, or Node's with --expose-gc. */
function fullGc(): void {
	const g = globalThis as { Bun?: { gc(full: boolean): void }; gc?: () => void };
	if (g.Bun !== undefined) g.Bun.gc(true);
	else if (g.gc !== undefined) g.gc();
	else throw new Error("the hook benchmark needs a full GC: run Node with --expose-gc");
}

/** The hook alone, with a full collection before each sample so no GC falls inside the timing. */
function measureQuiesced(replay: Replay, settings: Settings, samples: number): Dist {
	const times: number[] = [];
	for (let i = 0; i < samples; i++) {
		const state = warmState(replay);
		const messages = structuredClone(replay.messages) as PiMessage[];
		fullGc();
		const t0 = performance.now();
		const outcome = runContextHook(messages, {
			state,
			settings,
			getBranch: () => replay.branch,
			contextWindow: () => replay.window,
			persist: () => {},
		});
		times.push(performance.now() - t0);
		if ((outcome.plan.layer !== null) !== (replay.kind === "fold"))
			throw new Error(`${replay.kind} ${replay.size}: quiesced sample ${i} has the wrong fold decision`);
	}
	return dist(times);
}

export interface StageResult {
	kind: "steady" | "fold";
	size: number;
	samples: number;
	/** p50 ms of each stage of runContextHook, run in the same order by hand. */
	sync: number;
	buildView: number;
	planFold: number;
	apply: number;
	/** Fold cells: the commit work inside planFold, timed on the layer's blocks (p50 ms, all blocks). */
	commit?: { blocks: number; renderDigest: number; findRiskLines: number; sha256: number; utf8Length: number };
}

/**
 * Where the time goes: runContextHook's own per-stage timings (outcome.stages), so the breakdown is
 * always the real code path.
 */
function measureStages(replay: Replay, settings: Settings, samples: number): StageResult {
	const times = { sync: [] as number[], buildView: [] as number[], planFold: [] as number[], apply: [] as number[] };
	let layer: FrozenLayer | null = null;
	for (let i = 0; i < samples + 3; i++) {
		const state = warmState(replay);
		const messages = structuredClone(replay.messages) as PiMessage[];
		const outcome = runContextHook(messages, {
			state,
			settings,
			getBranch: () => replay.branch,
			contextWindow: () => replay.window,
			persist: () => {},
		});
		layer = outcome.plan.layer;
		if (i < 3) continue;
		times.sync.push(outcome.stages.sync);
		times.buildView.push(outcome.stages.view);
		times.planFold.push(outcome.stages.plan + outcome.stages.persist);
		times.apply.push(outcome.stages.apply);
	}
	const result: StageResult = {
		kind: replay.kind,
		size: replay.size,
		samples,
		sync: dist(times.sync).p50,
		buildView: dist(times.buildView).p50,
		planFold: dist(times.planFold).p50,
		apply: dist(times.apply).p50,
	};
	if (layer !== null) {
		// The layer's blocks, found again in the original messages (by entry id and block index).
		const state = new LiveBranch();
		state.sync(replay.branch);
		const view = buildView(replay.messages, (m) => state.lookup(m));
		const byEntry = new Map(view.map((v, i) => [v.entryId, i]));
		const texts = layer.blocks.map((b) => {
			const v = view[byEntry.get(b.entryId) ?? -1];
			const text = v?.blocks[b.blockIndex]?.text;
			if (text === undefined) throw new Error(`block ${b.entryId}:${b.blockIndex} not found`);
			return { text, block: b };
		});
		const commit = {
			renderDigest: [] as number[],
			findRiskLines: [] as number[],
			sha256: [] as number[],
			utf8: [] as number[],
		};
		for (let i = 0; i < samples + 3; i++) {
			let t = performance.now();
			for (const { text, block } of texts)
				renderDigest({
					code: block.code,
					kind: block.kind === "thinking" ? "thinking" : "toolResult",
					text,
					toolName: block.toolName ?? "tool",
				});
			const render = performance.now() - t;
			t = performance.now();
			for (const { text } of texts) findRiskLines(text);
			const risk = performance.now() - t;
			t = performance.now();
			for (const { text } of texts) sha256(text);
			const hash = performance.now() - t;
			t = performance.now();
			for (const { text } of texts) utf8Length(text);
			const utf8 = performance.now() - t;
			if (i < 3) continue;
			commit.renderDigest.push(render);
			commit.findRiskLines.push(risk);
			commit.sha256.push(hash);
			commit.utf8.push(utf8);
		}
		result.commit = {
			blocks: texts.length,
			renderDigest: dist(commit.renderDigest).p50,
			findRiskLines: dist(commit.findRiskLines).p50,
			sha256: dist(commit.sha256).p50,
			utf8Length: dist(commit.utf8).p50,
		};
	}
	return result;
}

// ---------------------------------------------------------------------------------------------
// Report

export interface HookBenchResult {
	name: "hook";
	seed: number;
	systemTokens: number;
	settings: Settings;
	windows: Record<string, number>;
	definitions: Record<string, string>;
	cells: CellResult[];
	stages: StageResult[];
	scaling: {
		/** steady 200k / steady 50k. */
		hookP50: number;
		hookP99: number;
		clone: number;
		messages: number;
		chars: number;
		/** Steady hook p50 per outgoing message, microseconds, at 50k and at 200k. */
		perMessageUs: { small: number; big: number };
	};
	target: { metric: string; size: number; limitMs: number; valueMs: number; cpuMs: number; pass: boolean };
	/** The runtime that ran the hook: Pi runs extensions on Node, so `npm run bench` measures on Node. */
	engine: string;
	/** One-minute load average before and after the measurement: a wall-clock tail on a busy machine measures the machine. */
	load: { before: number; after: number };
	foldAtTarget: { metric: string; valueMs: number; pass: boolean };
}

const DEFINITIONS = {
	size: "estimated tokens (chars/4) of every message on the branch, unfolded; the system prompt is extra",
	hook: "runContextHook on a structuredClone of the outgoing messages: sync, view, plan, persist, apply",
	clone: "structuredClone of the outgoing messages, which Pi does per request before any context handler",
	passThrough: "a context handler that receives the same cloned messages and returns undefined",
	ratio:
		"(clone + hook) / (clone + pass-through), at the same percentile: what a request costs with the extension relative to a no-op one",
	steady:
		"layers already committed and re-applied, one new assistant message and tool result since the previous request, no fold event",
	fold: "the request on which the ladder commits a new layer (asserted on every sample)",
	hookQuiesced:
		"hook alone in a separate pass with a full GC before each sample: the tail without collector pauses; not the target metric",
};

function ms(n: number): string {
	return n < 10 ? n.toFixed(3) : n.toFixed(1);
}

function k(n: number): string {
	return `${Math.round(n / 1000)}k`;
}

function table(header: string[], rows: string[][]): string {
	const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
	const line = (cells: string[]) =>
		cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join("  ");
	return [line(header), widths.map((w) => "-".repeat(w)).join("  "), ...rows.map(line)].join("\n");
}

export function renderHookReport(r: HookBenchResult): string {
	const out: string[] = [];
	out.push("## context hook: cost per request");
	out.push("");
	out.push(
		`Settings: DEFAULT_SETTINGS (the priced rule at Anthropic's ratios, tail ${r.settings.tail}); system prompt ${r.systemTokens} tokens; seed 0x${r.seed.toString(16)}.`,
	);
	out.push(
		`Window: ${Object.entries(r.windows)
			.map(([size, w]) => `${k(Number(size))} session -> ${w.toLocaleString("en-US")}`)
			.join(", ")} (a 50k session never reaches a 200k window's first fold at 90k).`,
	);
	out.push("");
	out.push("Sessions (the measured request):");
	out.push(
		table(
			["cell", "window", "entries", "messages", "raw tokens", "chars", "layers", "usage", "after", "re-applied"],
			r.cells.map((c) => [
				`${c.kind} ${k(c.size)}`,
				k(c.window),
				String(c.session.entries),
				String(c.session.messages),
				c.session.rawTokens.toLocaleString("en-US"),
				c.session.chars.toLocaleString("en-US"),
				c.kind === "fold" && c.layer
					? `${c.session.layersBefore}+1 (${c.layer.blocks} blocks, ${k(c.layer.tokens)} tok, ${c.layer.reason})`
					: String(c.session.layersBefore),
				k(c.session.usage),
				k(c.session.usageAfter),
				String(c.session.substitutions - (c.layer?.blocks ?? 0)),
			]),
		),
	);
	out.push("");
	out.push("Per request, ms (hook = runContextHook alone; x pass = (clone + hook) / (clone + pass-through);");
	out.push("cpu p99 = the process's CPU time during the hook, which other processes' load does not inflate;");
	out.push("p99 no-GC = hook p99 in a separate pass with a full GC forced before each sample, for reading the tail):");
	out.push(
		table(
			[
				"cell",
				"n",
				"hook p50",
				"hook p99",
				"cpu p99",
				"clone p50",
				"clone p99",
				"pass p50",
				"x pass p50",
				"x pass p99",
				"p99 no-GC",
			],
			r.cells.map((c) => [
				`${c.kind} ${k(c.size)}`,
				String(c.samples),
				ms(c.hook.p50),
				ms(c.hook.p99),
				ms(c.hookCpu.p99),
				ms(c.clone.p50),
				ms(c.clone.p99),
				ms(c.passThrough.p50),
				`${c.ratio.p50.toFixed(2)}x`,
				`${c.ratio.p99.toFixed(2)}x`,
				ms(c.hookQuiesced.p99),
			]),
		),
	);
	out.push("");
	const s = r.scaling;
	out.push(
		`Steady 200k / 50k: hook p50 x${s.hookP50.toFixed(2)}, p99 x${s.hookP99.toFixed(2)}; for scale: messages x${s.messages.toFixed(2)}, chars x${s.chars.toFixed(2)}, structuredClone p50 x${s.clone.toFixed(2)}.`,
	);
	out.push(
		`Per outgoing message: ${s.perMessageUs.small.toFixed(2)} us at 50k, ${s.perMessageUs.big.toFixed(2)} us at 200k (the scan over every message in buildView and planFold; sync touches only new entries, apply only masked blocks).`,
	);
	out.push(
		`Target: ${r.target.metric} <= ${r.target.limitMs} ms: ${ms(r.target.valueMs)} ms  ${r.target.pass ? "PASS" : "MISS"} (CPU time p99 ${ms(r.target.cpuMs)} ms)`,
	);
	out.push(
		`        ${r.foldAtTarget.metric} <= ${r.target.limitMs} ms: ${ms(r.foldAtTarget.valueMs)} ms  ${r.foldAtTarget.pass ? "PASS" : "MISS"}`,
	);
	out.push(
		`Measured on ${r.engine}; load average ${r.load.before.toFixed(2)} before, ${r.load.after.toFixed(2)} after (${availableParallelism()} cores).`,
	);
	out.push("");
	out.push("Where the time goes, p50 ms per stage (same calls as runContextHook, timed one by one):");
	out.push(
		table(
			[
				"cell",
				"sync",
				"buildView",
				"planFold",
				"apply",
				"fold commit: blocks",
				"renderDigest",
				"(risk scan)",
				"sha256",
				"utf8Length",
			],
			r.stages.map((st) => [
				`${st.kind} ${k(st.size)}`,
				ms(st.sync),
				ms(st.buildView),
				ms(st.planFold),
				ms(st.apply),
				st.commit ? String(st.commit.blocks) : "",
				st.commit ? ms(st.commit.renderDigest) : "",
				st.commit ? ms(st.commit.findRiskLines) : "",
				st.commit ? ms(st.commit.sha256) : "",
				st.commit ? ms(st.commit.utf8Length) : "",
			]),
		),
	);
	return out.join("\n");
}

export function runHookBench(log: (line: string) => void = console.log): HookBenchResult {
	const loadBefore = loadavg()[0] ?? 0;
	const settings = settingsFor();
	const built = SIZES.map((size) => buildReplays(size, WINDOW_BY_SIZE[size] ?? DEFAULT_WINDOW));
	// Global warm-up: every replay once through every path, so no cell pays for the first JIT tier.
	for (const b of built) {
		measureCell(b.steady, settings, 0, 20);
		measureCell(b.fold, settings, 0, 3);
	}
	const cells: CellResult[] = [];
	for (const b of built) {
		log(`  measuring steady ${k(b.steady.size)} ...`);
		cells.push(measureCell(b.steady, settings, STEADY_WARMUP, STEADY_SAMPLES));
	}
	for (const b of built) {
		log(`  measuring fold ${k(b.fold.size)} ...`);
		cells.push(measureCell(b.fold, settings, FOLD_WARMUP, FOLD_SAMPLES));
	}
	const stages: StageResult[] = [];
	for (const b of built) stages.push(measureStages(b.steady, settings, STAGE_SAMPLES.steady));
	for (const b of built) stages.push(measureStages(b.fold, settings, STAGE_SAMPLES.fold));

	const cell = (kind: CellResult["kind"], size: number) => {
		const c = cells.find((x) => x.kind === kind && x.size === size);
		if (c === undefined) throw new Error(`missing cell ${kind} ${size}`);
		return c;
	};
	const small = cell("steady", SIZES[0]);
	const big = cell("steady", TARGET_SIZE);
	const foldBig = cell("fold", TARGET_SIZE);
	return {
		name: "hook",
		seed: SEED,
		systemTokens: SYSTEM_TOKENS,
		settings,
		windows: Object.fromEntries(SIZES.map((s) => [String(s), WINDOW_BY_SIZE[s] ?? DEFAULT_WINDOW])),
		definitions: DEFINITIONS,
		cells,
		stages,
		scaling: {
			hookP50: big.hook.p50 / small.hook.p50,
			hookP99: big.hook.p99 / small.hook.p99,
			clone: big.clone.p50 / small.clone.p50,
			messages: big.session.messages / small.session.messages,
			chars: big.session.chars / small.session.chars,
			perMessageUs: {
				small: (small.hook.p50 * 1000) / small.session.messages,
				big: (big.hook.p50 * 1000) / big.session.messages,
			},
		},
		target: {
			metric: `steady hook p99 at ${k(TARGET_SIZE)}`,
			size: TARGET_SIZE,
			limitMs: TARGET_P99_MS,
			valueMs: big.hook.p99,
			cpuMs: big.hookCpu.p99,
			pass: big.hook.p99 <= TARGET_P99_MS,
		},
		foldAtTarget: {
			metric: `fold-event hook p99 at ${k(TARGET_SIZE)}`,
			valueMs: foldBig.hook.p99,
			pass: foldBig.hook.p99 <= TARGET_P99_MS,
		},
		engine: process.versions.bun !== undefined ? `Bun ${process.versions.bun}` : `Node ${process.version}`,
		load: { before: loadBefore, after: loadavg()[0] ?? 0 },
	};
}
