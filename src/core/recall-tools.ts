/**
 * Tokens context-fold's recall_folded and unfold declarations add to every request that carries them
 * (tool schemas plus their system-prompt lines), chars/4: measured on the wire in real Pi 1.6.0 as
 * +1,216 chars of tools array and +999 chars of system prompt (Pi 0.80.6: +1,246 and +999, 561
 * tokens). The planner charges a first fold event this much per later request for declaring them
 * (lazy declaration), and `simulate` charges the folded arm with it from the request that declares
 * them on. test/e2e/lazy-tools.test.ts
 * re-measures it on both versions; test/adapters/pi/tools-size.test.ts checks it against the
 * declarations themselves.
 */
export const RECALL_TOOLS_TOKENS = 554;

/**
 * customType of the note context-fold appends when it declares the recall tools during a session:
 * `{v: 1, declared: true}`. A resume (or a branch switch) reads it to declare them again, so the
 * prompt it sends matches the one the provider cached. A separate type, so an older release (which
 * validates every `context-fold` entry) never sees it.
 */
export const TOOLS_ENTRY_TYPE = "context-fold-tools";
