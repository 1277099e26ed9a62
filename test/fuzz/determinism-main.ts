// Entry for the Node side of the cross-runtime check: prints the workload's digests as JSON.
import { determinismDigest } from "./determinism.ts";

const [seed, sessions, texts] = process.argv.slice(2).map(Number);
process.stdout.write(`${JSON.stringify(determinismDigest(seed ?? 1, sessions ?? 100, texts ?? 100))}\n`);
