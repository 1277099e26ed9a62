// The conversion lives in src/core/session/view.ts, shared with the CLI; re-exported for existing importers.
export * from "../../core/session/view.ts";
