/**
 * Tool calls as the seed index reads them: which file a call touched and how, and the command it
 * ran. The adapter passes structured calls; without them the toolCall blocks are parsed.
 */
import type { ViewMessage } from "../blocks.ts";
import { isRecord } from "../values.ts";
import type { FileOp } from "./schema.ts";

/** A tool call with structured arguments, as the adapter knows it from Pi's message. */
export interface SeedToolCall {
	toolCallId: string;
	name: string;
	args: unknown;
}

/** File ops by tool name (lowercase). Any other tool that names a path counts as `command`. */
const TOOL_OPS: Record<string, FileOp> = {
	read: "read",
	edit: "edit",
	multiedit: "edit",
	multi_edit: "edit",
	str_replace: "edit",
	apply_patch: "edit",
	write: "write",
	create: "write",
};

const PATH_ARGS = ["path", "file_path", "filePath"];

export interface CallFacts {
	path?: string;
	command?: string;
	/** How the path was touched. */
	op: FileOp;
}

export function readCall(call: SeedToolCall): CallFacts {
	const args = isRecord(call.args) ? call.args : {};
	const op = TOOL_OPS[call.name.toLowerCase()] ?? "command";
	const path = PATH_ARGS.map((k) => args[k]).find((v): v is string => typeof v === "string");
	const command = typeof args.command === "string" ? args.command : undefined;
	return { ...(path !== undefined && { path }), ...(command !== undefined && { command }), op };
}

/**
 * Fallback when the adapter passes no calls: a toolCall block's text is JSON(arguments) followed by
 * the tool name (see src/core/session/view.ts). The ids are unknown, so they are left empty.
 */
export function parseCallBlocks(messages: readonly ViewMessage[]): SeedToolCall[] {
	const calls: SeedToolCall[] = [];
	for (const m of messages) {
		if (m.role !== "assistant") continue;
		for (const b of m.blocks) {
			if (b.kind !== "toolCall") continue;
			const end = b.text.lastIndexOf("}");
			if (end < 0) continue;
			try {
				calls.push({ toolCallId: "", name: b.text.slice(end + 1), args: JSON.parse(b.text.slice(0, end + 1)) });
			} catch {
				// Not the adapter's serialization: nothing to learn from this block.
			}
		}
	}
	return calls;
}
