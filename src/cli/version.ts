/**
 * The version, baked in at build time (scripts/build.ts defines CONTEXT_FOLD_VERSION from
 * package.json for both the Bun binary and the Node bundle). Running from source says "dev".
 */
declare const CONTEXT_FOLD_VERSION: string | undefined;

export const VERSION: string = typeof CONTEXT_FOLD_VERSION === "string" ? CONTEXT_FOLD_VERSION : "dev";
