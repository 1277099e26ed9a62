import { createHash } from "node:crypto";
import type { Hash } from "../core/digest.ts";

/** sha256 of the UTF-8 bytes of a string, as lowercase hex: the one hash the core is given, everywhere. */
export const sha256: Hash = (text) => createHash("sha256").update(text, "utf8").digest("hex");
