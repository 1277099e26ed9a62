// Settings loading lives in src/store/settings-load.ts, shared with the CLI; re-exported for existing importers.
export * from "../../store/settings-load.ts";
