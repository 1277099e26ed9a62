/**
 * Small synthetic traces for the economics harness's own tests: a v3 session (header, then message
 * entries chained by parentId) with exact timestamps, built message by message.
 */
import { type Trace, type TraceEntry, traceFromEntries } from "./trace-read.ts";

export class TraceBuilder {
	private readonly entries: TraceEntry[];
	private parent: string | null = null;

	constructor(t0: number, id = "synthetic") {
		this.entries = [{ type: "session", version: 3, id, timestamp: new Date(t0).toISOString() }];
	}

	/** Appends a message recorded at `t`; returns its entry id (e1, e2, … in order). */
	add(t: number, message: Record<string, unknown>): string {
		const id = `e${this.entries.length}`;
		this.entries.push({
			type: "message",
			id,
			parentId: this.parent,
			timestamp: new Date(t).toISOString(),
			message: { ...message, timestamp: t } as TraceEntry["message"],
		});
		this.parent = id;
		return id;
	}

	user(t: number, text: string): string {
		return this.add(t, { role: "user", content: textContent(text) });
	}

	/** An assistant message calling bash once per id (the command is the id unless given). */
	calls(t: number, ids: string[], extra: Record<string, unknown> = {}): string {
		return this.add(t, {
			role: "assistant",
			content: ids.map((id) => ({ type: "toolCall", id, name: "bash", arguments: { command: id } })),
			stopReason: "toolUse",
			...extra,
		});
	}

	result(t: number, id: string, text = `out ${id}`): string {
		return this.add(t, {
			role: "toolResult",
			toolCallId: id,
			toolName: "bash",
			content: textContent(text),
			isError: false,
		});
	}

	answer(t: number, text: string): string {
		return this.add(t, { role: "assistant", content: textContent(text), stopReason: "stop" });
	}

	build(name: string, path?: string): Trace {
		return traceFromEntries(name, [...this.entries], path);
	}
}

export function textContent(text: string): Array<{ type: "text"; text: string }> {
	return [{ type: "text", text }];
}
