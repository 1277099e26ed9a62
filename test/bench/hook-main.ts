/**
 * The hook benchmark in its own process, on the engine Pi runs extensions on (Node): progress on
 * stderr, the result as one JSON document on stdout. `npm run bench` starts it through runHookOnNode.
 */
import { runHookBench } from "./hook.ts";

const result = runHookBench((line) => process.stderr.write(`${line}\n`));
process.stdout.write(`${JSON.stringify(result)}\n`);
