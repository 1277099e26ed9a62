/**
 * Which thinking-fold policy fits the API a request goes out on. Facts per converter are in
 * docs/pi-api-surface.md ("Signed thinking"); unknown APIs get the conservative unsigned-only.
 */
import type { ThinkingPolicy } from "./blocks.ts";

const POLICIES: Record<string, ThinkingPolicy> = {
	"anthropic-messages": "drop-signature",
	"bedrock-converse-stream": "drop-signature",
	"openai-responses": "skip",
	"azure-openai-responses": "skip",
	"openai-codex-responses": "skip",
	"openai-completions": "keep-signature",
	"google-generative-ai": "keep-signature",
	"google-vertex": "keep-signature",
	"google-gemini-cli": "keep-signature",
	"mistral-conversations": "keep-signature",
};

export function thinkingPolicyFor(api: string | undefined): ThinkingPolicy {
	if (api === undefined) return "unsigned-only";
	return POLICIES[api] ?? "unsigned-only";
}
