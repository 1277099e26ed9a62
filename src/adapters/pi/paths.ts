// The path rules live in src/store/paths.ts, shared with the CLI; re-exported for existing importers.
export * from "../../store/paths.ts";
