/**
 * Small hand-written sessions for seed-index tests. docs/SEED_INDEX_SPEC.md shows the records these
 * produce, and a test checks the spec against them byte for byte.
 */
import type { ViewMessage } from "../../../src/core/blocks.ts";
import type { MaskedBlock } from "../../../src/core/layers.ts";
import type { ExtractInput, SeedToolCall } from "../../../src/core/seed/extract.ts";
import { maskBlock, sha256 } from "./trace.ts";

export const T0 = Date.UTC(2025, 0, 1);

const TEST_OUTPUT = [
	"> app@1.4.0 test",
	"> vitest run src/auth",
	"",
	" FAIL  src/auth/login.test.ts > login > rejects an expired session",
	"AssertionError: expected 401 to be 200",
	" ❯ src/auth/login.test.ts:42:17",
	"Error: connect ECONNREFUSED 127.0.0.1:5432",
	"  using DATABASE_URL=postgres://app:s3cr3t-pw@db.internal:5432/app",
	"Tests  1 failed | 11 passed (12)",
	"Duration  2.31s",
].join("\n");

const FILE_TEXT = [
	'import { verifyToken } from "./tokens.ts";',
	'import { SESSION_TTL_MS } from "../config/session.ts";',
	"",
	"export async function loginUser(req: LoginRequest): Promise<LoginResult> {",
	"\tconst session = await verifyToken(req.sessionToken);",
	"\tif (session.expiresAt < Date.now() - SESSION_TTL_MS) {",
	'\t\tthrow new AuthError("session expired", 401);',
	"\t}",
	"\treturn { ok: true, userId: session.userId };",
	"}",
].join("\n");

export const FOLD_CALLS: SeedToolCall[] = [
	{ toolCallId: "call_1", name: "bash", args: { command: "npm test -- src/auth 2>&1 | tail -20" } },
	{ toolCallId: "call_2", name: "read", args: { path: "src/auth/login.ts" } },
];

export const FOLD_MESSAGES: ViewMessage[] = [
	{
		role: "user",
		entryId: "u1",
		timestamp: T0,
		blocks: [
			{ kind: "text", text: "Fix the failing login test.\nIt broke after the token refactor.\n\nDetails below." },
		],
	},
	{
		role: "assistant",
		entryId: "a1",
		timestamp: T0 + 1000,
		blocks: FOLD_CALLS.map((c) => ({ kind: "toolCall" as const, text: JSON.stringify(c.args) + c.name })),
		stopReason: "toolUse",
	},
	{
		role: "toolResult",
		entryId: "r1",
		timestamp: T0 + 2000,
		toolName: "bash",
		toolCallId: "call_1",
		callSummary: "npm test -- src/auth 2>&1 | tail -20",
		blocks: [{ kind: "text", text: TEST_OUTPUT }],
	},
	{
		role: "toolResult",
		entryId: "r2",
		timestamp: T0 + 2000,
		toolName: "read",
		toolCallId: "call_2",
		callSummary: "src/auth/login.ts",
		blocks: [{ kind: "text", text: FILE_TEXT }],
	},
];

export function foldMasked(): MaskedBlock[] {
	const taken = new Set<string>();
	return [maskBlock(FOLD_MESSAGES[2] as ViewMessage, 0, taken), maskBlock(FOLD_MESSAGES[3] as ViewMessage, 0, taken)];
}

export function foldInput(): ExtractInput {
	return {
		kind: "fold",
		seq: 1,
		at: T0 + 60_000,
		messages: FOLD_MESSAGES,
		masked: foldMasked(),
		calls: FOLD_CALLS,
		hash: sha256,
	};
}

export const COMPACTION_MESSAGES: ViewMessage[] = [
	{
		role: "user",
		entryId: "u2",
		timestamp: T0 + 100_000,
		blocks: [{ kind: "text", text: "Now make the session TTL configurable." }],
	},
	{
		role: "assistant",
		entryId: "a2",
		timestamp: T0 + 101_000,
		blocks: [
			{ kind: "text", text: "I'll read SESSION_TTL_MS from the environment in src/config/session.ts." },
			{ kind: "toolCall", text: '{"path":"src/config/session.ts"}edit' },
		],
		stopReason: "toolUse",
	},
	{
		role: "toolResult",
		entryId: "r3",
		timestamp: T0 + 102_000,
		toolName: "edit",
		toolCallId: "call_3",
		blocks: [{ kind: "text", text: "Successfully replaced text in src/config/session.ts." }],
	},
];

/** No calls list: the extractor parses the toolCall block, as it must when the adapter passes none. */
export function compactionInput(): ExtractInput {
	return { kind: "compaction", seq: 2, at: T0 + 200_000, messages: COMPACTION_MESSAGES, hash: sha256 };
}
