/**
 * The builder a session is written with: user prompts, assistant turns and their tool calls. It keeps
 * the sandbox files current as edits land (so every edit is checked to apply), and records the output
 * of each toolchain command for the replay shims that stand in for npm, npx, gh, git and docker.
 */
import { applyEdits, type Edit } from "./project.ts";
import { Seeded } from "./seeded.ts";

export interface ToolCall {
	id: string;
	name: string;
	args: Record<string, unknown>;
}

/** Text in call arguments or answers that the model fills in with the line it found (see model.ts). */
export const QUOTE = "{{quote}}";

export type Turn =
	| { kind: "calls"; id: string; say?: string; calls: ToolCall[]; quote?: string }
	| { kind: "answer"; id: string; text: string; quote?: string }
	/** Only when recall_folded is on offer: search every folded block for `needle`. */
	| { kind: "recall-search"; id: string; callId: string; needle: string }
	/** Only when recall_folded is on offer: read back the block the previous search named. */
	| { kind: "recall-code"; id: string; callId: string };

export interface Phase {
	prompt: string;
	turns: Turn[];
}

/** Commands served by the replay shims; everything else (cat, grep, ls, wc) runs for real. */
const SHIMS = ["npm", "npx", "gh", "git", "docker"];
const SHIM_DIR = ".demo";
/** Pi's bash tool keeps the last 50 KB / 2000 lines of output; replays stay under both. */
const MAX_REPLAY_BYTES = 48 * 1024;
const MAX_REPLAY_LINES = 1900;

/**
 * Every shim is this script. Pi runs a turn's tool calls in parallel, so outputs are keyed by the
 * command line (and how often it ran), never by a global counter.
 */
const SHIM_SCRIPT = `#!/bin/sh
# ledgerline demo toolchain: prints the output test/demo/session.ts recorded for this command line.
d=$(dirname "$0")/..
got="$(basename "$0") $*"
key=$(printf '%s' "$got" | tr -c 'A-Za-z0-9' '_')
mkdir -p "$d/seen"
n=$(( $(cat "$d/seen/$key" 2>/dev/null || echo 0) + 1 ))
echo "$n" > "$d/seen/$key"
if [ ! -f "$d/out/$key.$n.txt" ]; then
	echo "demo shim: no recorded output #$n for '$got'" >&2
	exit 97
fi
cat "$d/out/$key.$n.txt"
exit "$(cat "$d/out/$key.$n.code")"
`;

/** The file name a command line's outputs are stored under (what the shim's tr computes). */
function replayKey(argv: string): string {
	return argv.replace(/[^A-Za-z0-9]/g, "_");
}

export class Story {
	/** The sandbox as it starts: files as first written, before any of the agent's edits. */
	readonly files: Record<string, string> = {};
	/** The files as the agent's edits and writes leave them, to check that each edit applies. */
	private readonly current: Record<string, string> = {};
	readonly phases: Phase[] = [];
	/** Lines added and removed per edited file, for `git diff --stat`. */
	readonly changes = new Map<string, { added: number; removed: number }>();
	private readonly ids: Seeded;
	/** How many outputs are recorded per command line. */
	private readonly replays = new Map<string, number>();
	private turnCount = 0;

	constructor(seed: number) {
		this.ids = new Seeded(seed);
		for (const shim of SHIMS) this.files[`${SHIM_DIR}/bin/${shim}`] = SHIM_SCRIPT;
	}

	/** Executable files of the sandbox (the shims), relative to the project. */
	executables(): string[] {
		return SHIMS.map((s) => `${SHIM_DIR}/bin/${s}`);
	}

	binDir(): string {
		return `${SHIM_DIR}/bin`;
	}

	file(path: string, text: string): void {
		this.files[path] = text;
		this.current[path] = text;
	}

	/** A file's content at this point of the session. */
	text(path: string): string {
		const text = this.current[path];
		if (text === undefined) throw new Error(`demo session: no file ${path}`);
		return text;
	}

	prompt(text: string): void {
		this.phases.push({ prompt: text, turns: [] });
	}

	private phase(): Phase {
		const phase = this.phases.at(-1);
		if (!phase) throw new Error("demo session: a turn before the first prompt");
		return phase;
	}

	private nextTurnId(): string {
		this.turnCount++;
		return `t${String(this.turnCount).padStart(3, "0")}`;
	}

	private callId(): string {
		return `call_${this.ids.hex(24)}`;
	}

	/** One assistant response making `calls` (in parallel, as models do), with optional narration. */
	step(say: string | undefined, ...calls: Array<Omit<ToolCall, "id">>): void {
		const commands = calls.map((c) => c.args.command).filter((c) => c !== undefined);
		if (new Set(commands).size < commands.length) throw new Error("demo session: one command twice in one turn");
		const turn: Turn = {
			kind: "calls",
			id: this.nextTurnId(),
			calls: calls.map((c) => ({ ...c, id: this.callId() })),
			...(say !== undefined && { say }),
		};
		this.phase().turns.push(turn);
	}

	/** Like step, but arguments may hold QUOTE: the model fills in the line containing `needle`. */
	quoting(needle: string, ...calls: Array<Omit<ToolCall, "id">>): void {
		this.phase().turns.push({
			kind: "calls",
			id: this.nextTurnId(),
			calls: calls.map((c) => ({ ...c, id: this.callId() })),
			quote: needle,
		});
	}

	answer(text: string, quote?: string): void {
		this.phase().turns.push({ kind: "answer", id: this.nextTurnId(), text, ...(quote !== undefined && { quote }) });
	}

	recallSearch(needle: string): void {
		this.phase().turns.push({ kind: "recall-search", id: this.nextTurnId(), callId: this.callId(), needle });
	}

	recallCode(): void {
		this.phase().turns.push({ kind: "recall-code", id: this.nextTurnId(), callId: this.callId() });
	}

	/** A bash call; with `replay`, the command's shim prints `replay.text` and exits with its code. */
	bash(command: string, replay?: { text: string; code?: number }): Omit<ToolCall, "id"> {
		if (replay) {
			const argv = command.replace(/\s*(2>&1|\|).*$/, "");
			if (!SHIMS.includes(argv.split(" ")[0] ?? "")) throw new Error(`demo session: no shim for ${command}`);
			if (!/^[\x20-\x7e]+$/.test(argv)) throw new Error(`demo session: shim command lines are ASCII: ${argv}`);
			const bytes = Buffer.byteLength(replay.text);
			const lines = replay.text.split("\n").length;
			if (bytes > MAX_REPLAY_BYTES || lines > MAX_REPLAY_LINES) {
				throw new Error(`demo session: output of "${command}" is ${bytes} bytes / ${lines} lines, over Pi's limit`);
			}
			const key = replayKey(argv);
			const n = (this.replays.get(key) ?? 0) + 1;
			this.replays.set(key, n);
			this.files[`${SHIM_DIR}/out/${key}.${n}.txt`] = replay.text;
			this.files[`${SHIM_DIR}/out/${key}.${n}.code`] = `${replay.code ?? 0}\n`;
		}
		return { name: "bash", args: { command } };
	}

	read(path: string, range?: { offset: number; limit: number }): Omit<ToolCall, "id"> {
		this.text(path);
		return { name: "read", args: { path, ...range } };
	}

	edit(path: string, edits: Edit[]): Omit<ToolCall, "id"> {
		this.current[path] = applyEdits(path, this.text(path), edits);
		const c = this.changes.get(path) ?? { added: 0, removed: 0 };
		for (const e of edits) {
			const before = e.oldText.split("\n");
			const after = e.newText.split("\n");
			c.added += after.filter((l) => !before.includes(l)).length;
			c.removed += before.filter((l) => !after.includes(l)).length;
		}
		this.changes.set(path, c);
		return { name: "edit", args: { path, edits } };
	}

	write(path: string, content: string): Omit<ToolCall, "id"> {
		this.current[path] = content;
		this.changes.set(path, { added: content.split("\n").length - 1, removed: 0 });
		return { name: "write", args: { path, content } };
	}

	toolCalls(): number {
		let n = 0;
		for (const p of this.phases)
			for (const t of p.turns) n += t.kind === "calls" ? t.calls.length : t.kind === "answer" ? 0 : 1;
		return n;
	}
}
