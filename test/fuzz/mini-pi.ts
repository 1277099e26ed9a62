/**
 * A miniature Pi for the fuzz suite: a session branch of entries, requests built from it the way Pi
 * builds them (a deep copy of the context, after compaction a summary first), context-fold's real
 * hook run on each request (src/adapters/pi/context-hook.ts with a real LiveBranch), fold records
 * appended as custom entries, unfold as the tool commits it, resume as a reload from the JSON file.
 * Another extension can rewrite or corrupt the outgoing messages before the hook, and the provider
 * can report broken usage. Every request is checked against the invariants; a violation throws.
 */
import { writeFileSync } from "node:fs";
import { runContextHook } from "../../src/adapters/pi/context-hook.ts";
import { LiveBranch } from "../../src/adapters/pi/state.ts";
import { messageTokens, type ViewMessage } from "../../src/core/blocks.ts";
import { foldArguments, valueAt } from "../../src/core/inputs.ts";
import { type FoldRecord, type FrozenLayer, layerMasks, type MaskedBlock } from "../../src/core/layers.ts";
import { findStaleBlocks, type ToolEvent } from "../../src/core/policy/superseded.ts";
import { resolveSettings } from "../../src/core/resolved-settings.ts";
import { FOLD_ENTRY_TYPE } from "../../src/core/session/branch-state.ts";
import { buildView, type PiContent, type PiEntry, type PiMessage } from "../../src/core/session/view.ts";
import type { Settings } from "../../src/core/settings.ts";
import { protectedTailStart } from "../../src/core/usage.ts";
import { Ledger } from "../../src/store/ledger.ts";
import { findOriginal } from "../../src/store/originals.ts";
import { answerRecall } from "../../src/store/recall.ts";
import type { CorruptKind, Op, UsageFault } from "./gen.ts";
import { checkDigest, checkExtent, checkFinite, fail, sha } from "./oracles.ts";

const T0 = 1_767_225_600_000;

export interface SessionOptions {
	ops: readonly Op[];
	window: number | undefined;
	env: Record<string, string>;
	api: string | undefined;
	/** Write the session here at the end and recall every folded block through the ledger. */
	ledgerPath?: string;
	/** Run the invariant checks (off for the cross-runtime digest, which only hashes outputs). */
	check?: boolean;
}

export interface SessionStats {
	requests: number;
	folds: number;
	foldedBlocks: number;
	/** Tool-call input values folded. */
	foldedInputs: number;
	unfolds: number;
	resumes: number;
	compactions: number;
	corruptions: number;
	hookThrows: number;
	usageFaults: number;
	persistFaults: number;
	riskLines: number;
	recalled: number;
	recalledBytes: number;
	prefixChecks: number;
}

export interface SessionResult {
	stats: SessionStats;
	/** sha256 over every outgoing request and every record: equal inputs must give equal digests. */
	digest: string;
}

interface Corruption {
	pick: number;
	kind: CorruptKind;
}

export function runSession(options: SessionOptions): SessionResult {
	const check = options.check ?? true;
	const settings: Settings = resolveSettings({ env: options.env, file: undefined }).settings;
	const stats: SessionStats = {
		requests: 0,
		folds: 0,
		foldedBlocks: 0,
		foldedInputs: 0,
		unfolds: 0,
		resumes: 0,
		compactions: 0,
		corruptions: 0,
		hookThrows: 0,
		usageFaults: 0,
		persistFaults: 0,
		riskLines: 0,
		recalled: 0,
		recalledBytes: 0,
		prefixChecks: 0,
	};
	let branch: PiEntry[] = [
		{ type: "model_change", id: "00000000", parentId: null, timestamp: iso(T0), provider: "fake", modelId: "m" },
	];
	let state = new LiveBranch();
	let clock = T0 + 1000;
	let ids = 1;
	let calls = 0;
	const transcript: string[] = [];
	/** Digest text shown for each block key: it must never change. */
	const frozen = new Map<string, string>();
	/** Originals of unfolded blocks: from then on they go out in full. */
	const unfolded = new Map<string, string>();
	let prevOut: string[] | null = null;
	let changedSincePrev = false;
	let pendingCorrupt: Corruption[] = [];
	let persistFault = false;
	let lastOutgoingChars = 0;

	const newId = () => (ids++).toString(16).padStart(8, "0");
	/** Each entry's bytes when Pi appended it: history is never mutated, whatever the hook does. */
	const written = new Map<string, string>();
	const append = (e: Omit<PiEntry, "id" | "parentId">): PiEntry => {
		const entry = { ...e, id: newId(), parentId: branch.at(-1)?.id ?? null } as PiEntry;
		branch.push(entry);
		if (check) written.set(entry.id, JSON.stringify(entry));
		return entry;
	};
	const appendMessage = (message: PiMessage) =>
		append({ type: "message", timestamp: iso(message.timestamp ?? clock), message });

	/** What Pi puts in the context: after the latest compaction, its summary and the kept entries. */
	const contextMessages = (): PiMessage[] => {
		let start = 0;
		let summary: PiMessage | null = null;
		for (let i = branch.length - 1; i >= 0; i--) {
			const e = branch[i] as PiEntry;
			if (e.type !== "compaction") continue;
			const kept = branch.findIndex((x) => x.id === e.firstKeptEntryId);
			start = kept >= 0 ? kept : i + 1;
			summary = {
				role: "compactionSummary",
				summary: String(e.summary),
				tokensBefore: e.tokensBefore,
				timestamp: Date.parse(String(e.timestamp)),
			};
			break;
		}
		const out: PiMessage[] = summary ? [summary] : [];
		for (let i = start; i < branch.length; i++) {
			const e = branch[i] as PiEntry;
			if (e.type === "message" && e.message) out.push(e.message);
			else if (e.type === "custom_message")
				out.push({
					role: "custom",
					customType: "note",
					content: e.content as string,
					display: true,
					timestamp: Date.parse(String(e.timestamp)),
				});
		}
		return out;
	};

	const rawText = (entryId: string, blockIndex: number, path?: MaskedBlock["path"]): string | undefined => {
		const e = branch.find((x) => x.id === entryId);
		const part = Array.isArray(e?.message?.content)
			? (e.message.content[blockIndex] as PiContent | undefined)
			: undefined;
		if (path !== undefined) return part?.type === "toolCall" ? valueAt(part.arguments, path) : undefined;
		return part?.type === "thinking" ? part.thinking : part?.text;
	};

	const request = () => {
		stats.requests++;
		// Pi deep-copies the context; the hook only ever edits content parts, so copying down to the
		// parts is the same for it and much cheaper.
		const input = contextMessages().map(copyMessage);
		// Another extension loaded first: deterministic redaction of key-looking text (a foreign rewrite).
		for (const m of input) {
			if (m.role !== "toolResult" || !Array.isArray(m.content)) continue;
			for (const p of m.content) {
				if (p?.type === "text" && typeof p.text === "string" && p.text.includes("sk-ant-"))
					p.text = p.text.replace(/sk-ant-[A-Za-z0-9-]+/g, "[redacted-by-other-extension]");
			}
		}
		const corrupted = new Set<number>();
		for (const c of pendingCorrupt) {
			const i = corrupt(input, c);
			if (i >= 0) corrupted.add(i);
		}
		stats.corruptions += corrupted.size;
		const corruptedNow = corrupted.size > 0;
		pendingCorrupt = [];
		const before = check ? input.map((m) => JSON.stringify(m)) : [];
		const beforeClone = check ? input.map(copyMessage) : [];
		let layer: FrozenLayer | null = null;
		const failPersist = persistFault;
		persistFault = false;
		let threw = false;
		let outcome: ReturnType<typeof runContextHook> | undefined;
		try {
			outcome = runContextHook(input, {
				state,
				settings,
				getBranch: () => branch,
				// Pi's session manager: the hook syncs incrementally from the leaf when it can.
				session: {
					getBranch: () => branch,
					getLeafId: () => branch.at(-1)?.id ?? null,
					getEntry: (id: string) => branch.find((e) => e.id === id),
				},
				contextWindow: () => options.window,
				modelApi: () => options.api,
				persist: (l) => {
					if (failPersist) throw new Error("injected persist fault");
					append({ type: "custom", customType: FOLD_ENTRY_TYPE, data: l, timestamp: iso(clock) });
				},
				onCommit: (l) => {
					layer = l;
				},
			});
		} catch (error) {
			threw = true;
			stats.hookThrows++;
			if (check && !corruptedNow) fail("the hook threw on a well-formed request", String(error));
			if (check) {
				// Fail-open: a throwing hook leaves the request exactly as it was given.
				input.forEach((m, i) => {
					if (JSON.stringify(m) !== before[i]) fail("a throwing hook left a partial edit", { i, error: String(error) });
				});
			}
		}
		if (failPersist && outcome?.persistFailed) stats.persistFaults++;
		const out = input;
		const outJson = out.map((m) => JSON.stringify(m));
		const plan = outcome?.plan;
		transcript.push(sha(outJson.join("\n")));
		if (plan) transcript.push(sha(JSON.stringify({ s: plan.state, u: plan.usage, m: plan.mass, l: plan.layer })));
		lastOutgoingChars = outJson.reduce((n, s) => n + s.length, 0);
		const newLayer = layer as FrozenLayer | null;
		if (newLayer) {
			stats.folds++;
			stats.foldedBlocks += newLayer.blocks.length;
			stats.foldedInputs += newLayer.inputs?.blocks.length ?? 0;
		}

		if (check && !threw && plan) {
			// After the hook: the state is synced with the branch, so every message maps to its entry.
			const lookupBefore = new Map(beforeClone.map((m, i) => [i, state.lookup(m)]));
			checkFinite("plan", {
				usage: plan.usage.tokens,
				after: plan.usageAfter,
				mass: plan.mass,
				masked: plan.maskedTokens,
				geometry: plan.geometry,
			});
			if (out.length !== before.length) fail("message count changed");
			// Which blocks may differ from what came in: only the text of tool results and thinking.
			const changed: Array<{ i: number; code: string; input?: boolean }> = [];
			for (let i = 0; i < out.length; i++) {
				if (outJson[i] === before[i]) continue;
				const m = out[i] as PiMessage;
				const b = beforeClone[i] as PiMessage;
				if (m.role !== "toolResult" && m.role !== "assistant") fail(`a ${m.role} message changed`, i);
				const entryId = lookupBefore.get(i) ?? null;
				if (entryId === null) fail("a message with no session entry changed", i);
				const oc = m.content as PiContent[];
				const bc = b.content as PiContent[];
				if (!Array.isArray(oc) || !Array.isArray(bc) || oc.length !== bc.length) fail("content shape changed", i);
				for (let j = 0; j < oc.length; j++) {
					const op = oc[j] as PiContent;
					const bp = bc[j] as PiContent;
					if (JSON.stringify(op) === JSON.stringify(bp)) continue;
					if (bp?.type === "toolCall") {
						// A folded input: only argument values changed, each to its recorded digest at its path.
						checkFoldedCall(op, bp, state.index.inputs.get(`${entryId}:${j}`) ?? [], { i, j });
						for (const b of state.index.inputs.get(`${entryId}:${j}`) ?? []) {
							if (valueAt(op.arguments, b.path ?? []) !== b.digest) continue;
							changed.push({ i, code: b.code, input: true });
							const key = `${entryId}:${j}:${JSON.stringify(b.path)}`;
							const seen = frozen.get(key);
							if (seen !== undefined && seen !== b.digest) fail("a frozen digest changed bytes", key);
							frozen.set(key, b.digest);
						}
						continue;
					}
					const field = m.role === "toolResult" ? "text" : "thinking";
					if (bp?.type !== (field === "text" ? "text" : "thinking")) fail("a non-maskable block changed", { i, j });
					const shown = op[field] as string;
					const code = /^\{#([0-9a-f]{6,64}) FOLDED\}/.exec(shown)?.[1];
					const masked = code ? state.index.byCode.get(code) : undefined;
					if (!masked || masked.digest !== shown || masked.entryId !== entryId || masked.blockIndex !== j)
						fail("a block changed to something that is not its recorded digest", { i, j, shown: shown.slice(0, 80) });
					const rest = { ...op, [field]: bp[field] };
					const expect = { ...bp };
					if (!("thinkingSignature" in op)) delete expect.thinkingSignature;
					if (JSON.stringify(rest) !== JSON.stringify(expect))
						fail("a folded block changed more than its text", { i, j });
					changed.push({ i, code: masked.code });
					const key = `${entryId}:${j}`;
					const seen = frozen.get(key);
					if (seen !== undefined && seen !== shown) fail("a frozen digest changed bytes", key);
					frozen.set(key, shown);
				}
			}
			// Nothing in the protected tail (sized on raw text, a subset of the real one) and nothing after
			// the newest successful response is newly folded. (A layer folded earlier stays applied even
			// when another extension shrank the messages after it and the tail reaches back over it.)
			const rawView: ViewMessage[] = buildView(beforeClone, (m) => state.lookup(m));
			let lastOk = -1;
			rawView.forEach((v, i) => {
				if (v.role === "assistant" && v.stopReason !== "error" && v.stopReason !== "aborted") lastOk = i;
			});
			const tailFrom = plan.geometry ? protectedTailStart(rawView.map(messageTokens), plan.geometry.tail) : out.length;
			const fresh = new Set(newLayer ? layerMasks(newLayer).map((b) => b.code) : []);
			const tailStart = Math.min(tailFrom, lastOk + 1);
			let lastUser = -1;
			rawView.forEach((v, i) => {
				if (v.role === "user") lastUser = i;
			});
			// Superseded and duplicate blocks may fold inside the tail, once settled (the rules restated
			// through findStaleBlocks on the raw messages).
			const stale = staleEntries(beforeClone, (m) => state.lookup(m), lastUser, lastOk);
			for (const c of changed) {
				const isStale = stale.has(`${c.input ? "a" : "r"}:${state.index.byCode.get(c.code)?.entryId}`);
				if (c.i >= tailStart && (fresh.has(c.code) || !corruptedNow) && !(isStale && c.i < lastUser))
					fail("a block in the protected tail or not yet delivered was folded", { ...c, tailFrom, lastOk });
				// An input folds only outside the tool loop still running.
				if (c.input && fresh.has(c.code) && c.i >= lastUser)
					fail("a tool-call input in the running tool loop was folded", { ...c, lastUser });
			}
			// Tool pairs: every call keeps its result.
			const callIds: string[] = [];
			const resultIds = new Set<string>();
			for (const m of out) {
				if (m.role === "assistant" && Array.isArray(m.content))
					for (const p of m.content) if (p?.type === "toolCall" && typeof p.id === "string") callIds.push(p.id);
				if (m.role === "toolResult" && typeof m.toolCallId === "string") resultIds.add(m.toolCallId);
			}
			for (const id of callIds) {
				const hadResult = beforeClone.some((m) => m.role === "toolResult" && m.toolCallId === id);
				if (hadResult && !resultIds.has(id)) fail("a tool call lost its result", id);
			}
			// Frozen blocks still in view show their digest; unfolded ones their original.
			for (let i = 0; i < out.length; i++) {
				if (corrupted.has(i)) continue;
				const entryId = lookupBefore.get(i) ?? null;
				const content = out[i]?.content;
				if (entryId === null || !Array.isArray(content)) continue;
				for (let j = 0; j < content.length; j++) {
					const key = `${entryId}:${j}`;
					const p = content[j] as PiContent;
					const shown = p?.type === "thinking" ? p.thinking : p?.text;
					const masked = state.index.byKey.get(key);
					const bc = beforeClone[i]?.content;
					const bp = Array.isArray(bc) ? (bc[j] as PiContent | undefined) : undefined;
					const incoming = bp?.type === "thinking" ? bp.thinking : bp?.text;
					if (masked && incoming?.length === masked.chars && shown !== masked.digest)
						fail("a frozen block went out without its digest", key);
					const orig = unfolded.get(key);
					if (orig !== undefined && incoming === orig && shown !== orig) fail("an unfolded block went out folded", key);
				}
			}
			// A new layer: every block's record matches the session's original, and its digest keeps the risk lines.
			if (newLayer) {
				for (const b of newLayer.inputs?.blocks ?? []) {
					const original = rawText(b.entryId, b.blockIndex, b.path);
					if (original === undefined) fail("a folded input has no original in the session", b.entryId);
					checkExtent({ ...b, kind: "input" }, original);
					if (!b.digest.startsWith(`{#${b.code} FOLDED} `) || b.digest.length >= original.length)
						fail("an input digest is not a shorter marked stand-in", b.code);
				}
				for (const b of newLayer.blocks) {
					const original = rawText(b.entryId, b.blockIndex);
					if (original === undefined) fail("a folded block has no original in the session", b.entryId);
					checkExtent(b, original);
					const d = checkDigest(b.digest, original, b.code);
					stats.riskLines += d.riskLines;
					if (unfolded.has(`${b.entryId}:${b.blockIndex}`)) fail("an unfolded block was folded again", b.code);
				}
			}
			// Between fold events the request only grows: every earlier message goes out byte for byte.
			if (prevOut !== null && !changedSincePrev && !newLayer && !corruptedNow) {
				stats.prefixChecks++;
				for (let i = 0; i < prevOut.length; i++) {
					if (outJson[i] !== prevOut[i]) fail("the prefix changed between fold events", { i });
				}
			}
		}
		prevOut = threw ? null : outJson;
		changedSincePrev = corruptedNow;
	};

	const usageFor = (fault: UsageFault): PiMessage["usage"] | undefined => {
		const prompt = Math.ceil(lastOutgoingChars / 4);
		if (fault !== "ok") stats.usageFaults++;
		switch (fault) {
			case "ok": {
				const cacheRead = Math.floor(prompt * 0.6);
				return { input: prompt - cacheRead, output: 20, cacheRead, cacheWrite: 0 };
			}
			case "absent":
				return undefined;
			case "zero":
				return { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 };
			case "negative":
				return { input: -prompt, output: -5, cacheRead: -1, cacheWrite: 3 };
			case "absurd":
				return { input: 1e15, output: 1.5e308, cacheRead: 1.5e308, cacheWrite: 1.5e308 };
			case "nonfinite":
				return {
					input: Number.NaN,
					output: Number.POSITIVE_INFINITY,
					cacheRead: Number.NEGATIVE_INFINITY,
					cacheWrite: 7,
				};
		}
	};

	for (const op of options.ops) {
		switch (op.op) {
			case "user": {
				clock += 1000;
				const content: PiMessage["content"] = op.image
					? [
							{ type: "text", text: op.text },
							{ type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" } as PiContent,
						]
					: op.text;
				appendMessage({ role: "user", content, timestamp: clock });
				request();
				break;
			}
			case "turn": {
				clock += 1000;
				const content: PiContent[] = [];
				if (op.thinking) {
					content.push({
						type: "thinking",
						thinking: op.thinking.text,
						...(op.thinking.sig === "plain" && { thinkingSignature: "sig_0123456789abcdef" }),
						...(op.thinking.sig === "opaque" && { thinkingSignature: '{"id":"rs_1","encrypted_content":"x"}' }),
						...(op.thinking.redacted && { redacted: true }),
					});
				}
				if (op.text !== null) content.push({ type: "text", text: op.text });
				const callIds = op.calls.map(() => `call_${(calls++).toString(36)}`);
				op.calls.forEach((c, k) => {
					content.push({ type: "toolCall", id: callIds[k] as string, name: c.name, arguments: c.args });
				});
				const usage = usageFor(op.usage);
				appendMessage({
					role: "assistant",
					content,
					api: options.api ?? "unknown",
					provider: "fake",
					model: "m",
					...(usage !== undefined && { usage }),
					stopReason: "toolUse",
					timestamp: clock,
				});
				const shared = clock + 1;
				op.calls.forEach((c, k) => {
					clock += 1;
					appendMessage({
						role: "toolResult",
						toolCallId: callIds[k] as string,
						toolName: c.name,
						content: c.parts.map((p) =>
							"image" in p
								? ({ type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" } as PiContent)
								: { type: "text", text: p.text },
						),
						...(c.fullOutputPath !== undefined && { details: { fullOutputPath: c.fullOutputPath } }),
						isError: c.isError,
						timestamp: op.sameTimestamp ? shared : clock,
					});
				});
				request();
				break;
			}
			case "final": {
				clock += 1000;
				const usage = usageFor(op.usage);
				appendMessage({
					role: "assistant",
					content: [{ type: "text", text: op.text }],
					...(usage !== undefined && { usage }),
					stopReason: "stop",
					timestamp: clock,
				});
				break;
			}
			case "error": {
				clock += 1000;
				appendMessage({
					role: "assistant",
					content: [],
					usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
					stopReason: op.aborted ? "aborted" : "error",
					errorMessage: "provider failed",
					timestamp: clock,
				});
				break;
			}
			case "unfold": {
				const codes = [...state.index.byCode.keys()].filter((c) => !state.index.unfolded.has(c)).sort();
				if (codes.length === 0) break;
				const code = codes[op.pick % codes.length] as string;
				const block = state.index.byCode.get(code);
				const record: FoldRecord = { type: "unfold", v: 1, codes: [code] };
				append({ type: "custom", customType: FOLD_ENTRY_TYPE, data: record, timestamp: iso(clock) });
				state.commit(record);
				stats.unfolds++;
				changedSincePrev = true;
				if (block && block.kind !== "input") {
					const original = rawText(block.entryId, block.blockIndex);
					if (original !== undefined) unfolded.set(`${block.entryId}:${block.blockIndex}`, original);
				}
				break;
			}
			case "resume": {
				// A restart: Pi reads the entries back from the JSON file; context-fold starts from nothing.
				branch = branch.map((e) => JSON.parse(JSON.stringify(e)) as PiEntry);
				state = new LiveBranch();
				stats.resumes++;
				break;
			}
			case "compact": {
				const messages = branch.filter((e) => e.type === "message");
				if (messages.length < 2) break;
				const kept = messages[1 + (op.keep % (messages.length - 1))] as PiEntry;
				clock += 1000;
				append({
					type: "compaction",
					summary: "Earlier history was compacted.",
					firstKeptEntryId: kept.id,
					tokensBefore: 1234,
					timestamp: iso(clock),
				});
				stats.compactions++;
				changedSincePrev = true;
				break;
			}
			case "corrupt":
				pendingCorrupt.push({ pick: op.pick, kind: op.kind });
				break;
			case "bash":
				clock += 1000;
				appendMessage({
					role: "bashExecution",
					command: "make",
					output: op.output,
					exitCode: 1,
					cancelled: false,
					truncated: false,
					timestamp: clock,
				});
				break;
			case "custom":
				clock += 1000;
				append({ type: "custom_message", customType: "note", content: op.text, display: true, timestamp: iso(clock) });
				break;
			case "persistFault":
				persistFault = true;
				break;
		}
	}

	if (check) {
		for (const e of branch) {
			const was = written.get(e.id);
			if (was !== undefined && JSON.stringify(e) !== was) fail("a session entry changed after it was written", e.id);
		}
	}
	// Recall through the ledger: every folded block, unfolded ones included, comes back byte for byte.
	if (check && options.ledgerPath !== undefined) {
		const header = { type: "session", version: 3, id: "fuzz-session", timestamp: iso(T0), cwd: "/tmp" };
		writeFileSync(options.ledgerPath, `${[header, ...branch].map((e) => JSON.stringify(e)).join("\n")}\n`);
		const ledger = new Ledger(options.ledgerPath);
		for (const block of state.index.byCode.values()) {
			const original = rawText(block.entryId, block.blockIndex, block.path);
			if (original === undefined) fail("a folded block's entry left the branch", block.code);
			const found = findOriginal(block, ledger);
			if (!found.ok) fail("recall refused a block whose original is intact", found.message);
			if (found.text !== original) fail("recall returned different bytes", block.code);
			const answer = answerRecall({ code: `{#${block.code} FOLDED}`, maxTokens: null }, { index: state.index, ledger });
			if (!answer.ok || !answer.text.endsWith(` (sha256 verified):\n${original}`))
				fail("recall_folded code= did not answer the exact original", answer.text.slice(0, 200));
			stats.recalled++;
			stats.recalledBytes += Buffer.byteLength(original, "utf8");
		}
	}
	return { stats, digest: sha(transcript.join("\n")) };
}

function copyMessage(m: PiMessage): PiMessage {
	const content = Array.isArray(m.content)
		? m.content.map((p) => (p !== null && typeof p === "object" ? { ...p } : p))
		: m.content;
	return { ...m, content };
}

function iso(ms: number): string {
	return new Date(ms).toISOString();
}

/** Another extension damaging one outgoing message in place. Returns the index it touched, or -1. */
function corrupt(messages: PiMessage[], c: Corruption): number {
	if (messages.length === 0) return -1;
	const i = c.pick % messages.length;
	const m = messages[i] as PiMessage & Record<string, unknown>;
	const content = Array.isArray(m.content) ? (m.content as unknown[]) : null;
	switch (c.kind) {
		case "unknown-block":
			if (content && content.length > 0) content[c.pick % content.length] = { type: "mystery", payload: { n: 1 } };
			else m.content = [{ type: "mystery" }] as never;
			break;
		case "missing-content":
			delete m.content;
			break;
		case "null-content":
			m.content = null as never;
			break;
		case "null-part":
			if (content && content.length > 0) content[c.pick % content.length] = null;
			else return -1;
			break;
		case "string-content":
			m.content = content ? content.map((p) => (p as PiContent | null)?.text ?? "").join("") : "x";
			break;
		case "drop-text": {
			const p = content?.find((x) => (x as PiContent | null)?.type === "text") as PiContent | undefined;
			if (!p) return -1;
			delete p.text;
			break;
		}
		case "number-text": {
			const p = content?.find((x) => (x as PiContent | null)?.type === "text") as PiContent | undefined;
			if (!p) return -1;
			(p as { text: unknown }).text = 42;
			break;
		}
		case "extra-block":
			if (content) content.push({ type: "text", text: "added by another extension" });
			else return -1;
			break;
	}
	return i;
}

/** A folded tool call: the same part except its arguments, whose only changes are recorded digests. */
function checkFoldedCall(out: PiContent, before: PiContent, masks: readonly MaskedBlock[], at: unknown): void {
	if (out?.type !== "toolCall") fail("a tool call changed into something else", at);
	const { arguments: a, ...rest } = out as PiContent & { arguments?: unknown };
	const { arguments: b, ...restBefore } = before as PiContent & { arguments?: unknown };
	if (JSON.stringify(rest) !== JSON.stringify(restBefore))
		fail("a folded tool call changed more than its arguments", at);
	let expected: unknown = b;
	for (const m of masks) {
		if (valueAt(a, m.path ?? []) !== m.digest) continue;
		if (valueAt(b, m.path ?? [])?.length !== m.chars) fail("an input digest replaced a value of another length", at);
		expected = foldArguments(expected, [{ path: m.path ?? [], text: m.digest }]);
	}
	if (JSON.stringify(expected) !== JSON.stringify(a))
		fail("a tool call's arguments changed beyond its recorded digests", at);
}

/** Entries holding a stale block (`r:<result entry>`, `a:<call entry>`), from the raw messages. */
function staleEntries(
	messages: readonly PiMessage[],
	lookup: (m: PiMessage) => string | null,
	lastUser: number,
	lastOk: number,
): Set<string> {
	const results = new Map<string, { i: number; m: PiMessage }>();
	messages.forEach((m, i) => {
		if (m.role === "toolResult" && typeof m.toolCallId === "string") results.set(m.toolCallId, { i, m });
	});
	const events: ToolEvent[] = [];
	messages.forEach((m, i) => {
		if (m.role !== "assistant" || !Array.isArray(m.content)) return;
		m.content.forEach((p, j) => {
			if (p?.type !== "toolCall" || typeof p.id !== "string") return;
			const r = results.get(p.id);
			const parts = Array.isArray(r?.m.content) ? r.m.content : [];
			const text = parts.filter((x) => x?.type === "text").map((x) => x.text ?? "");
			events.push({
				toolCallId: p.id,
				toolName: String(p.name ?? ""),
				args: p.arguments,
				callEntryId: lookup(m) ?? "",
				callBlockIndex: j,
				...(r && {
					result: {
						entryId: lookup(r.m) ?? "",
						text: text.join("\n"),
						isError: r.m.isError === true,
						truncated:
							(r.m.details as { truncation?: { truncated?: unknown } } | undefined)?.truncation?.truncated === true,
					},
				}),
				settled: r !== undefined && i < lastUser && r.i < Math.min(lastUser, lastOk),
			});
		});
	});
	return new Set(findStaleBlocks({ events }).map((b) => `${b.block === "result" ? "r" : "a"}:${b.entryId}`));
}
