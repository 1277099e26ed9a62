// The policy table lives in src/core/thinking-policy.ts, shared with the CLI's replay; re-exported here.
export * from "../../core/thinking-policy.ts";
