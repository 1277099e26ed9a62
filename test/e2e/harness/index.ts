// Everything an e2e test needs from the harness, from one import.
export * from "./anthropic-model.ts";
export * from "./cache-model.ts";
export * from "./fake-model.ts";
export * from "./jsonl.ts";
export * from "./pi.ts";
export * from "./replies.ts";
export * from "./requests.ts";
export type { RpcEvent, RpcResponse, UiAnswer, UiRequest, WaitOptions } from "./rpc.ts";
export * from "./sandbox.ts";
export * from "./scenario.ts";
export * from "./tmux.ts";
