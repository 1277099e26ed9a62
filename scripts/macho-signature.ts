/**
 * Checks the code signature of a 64-bit Mach-O executable without macOS: finds LC_CODE_SIGNATURE,
 * reads the CodeDirectory, and re-hashes every page it covers. Cross-compiled darwin binaries have
 * been reported to carry invalid signatures (Bun appends the program after signing); this tells the
 * release script which ones macOS would kill on launch, so they get re-signed on a Mac first.
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";

export type SignatureCheck =
	| { status: "not-macho" }
	| { status: "unsigned" }
	| {
			status: "valid" | "invalid";
			identifier: string;
			adhoc: boolean;
			pages: number;
			badPages: number;
			/** The signature covers the file up to here; bytes after it (besides the signature) are unsigned. */
			codeLimit: number;
	  };

const MH_MAGIC_64 = 0xfeedfacf;
const LC_CODE_SIGNATURE = 0x1d;
const CSMAGIC_CODEDIRECTORY = 0xfade0c02;
const CS_ADHOC = 0x2;

export function checkMachOSignature(path: string): SignatureCheck {
	const d = readFileSync(path);
	if (d.length < 32 || d.readUInt32LE(0) !== MH_MAGIC_64) return { status: "not-macho" };
	const ncmds = d.readUInt32LE(16);
	let off = 32;
	let sig: { offset: number; size: number } | null = null;
	for (let i = 0; i < ncmds; i++) {
		const cmd = d.readUInt32LE(off);
		if (cmd === LC_CODE_SIGNATURE) sig = { offset: d.readUInt32LE(off + 8), size: d.readUInt32LE(off + 12) };
		off += d.readUInt32LE(off + 4);
	}
	if (sig === null) return { status: "unsigned" };
	// The SuperBlob (big-endian): magic, length, count, then (type, offset) per blob.
	const count = d.readUInt32BE(sig.offset + 8);
	for (let k = 0; k < count; k++) {
		const blob = sig.offset + d.readUInt32BE(sig.offset + 16 + 8 * k);
		if (d.readUInt32BE(blob) !== CSMAGIC_CODEDIRECTORY) continue;
		const flags = d.readUInt32BE(blob + 12);
		const hashOffset = d.readUInt32BE(blob + 16);
		const identOffset = d.readUInt32BE(blob + 20);
		const pages = d.readUInt32BE(blob + 28);
		const codeLimit = d.readUInt32BE(blob + 32);
		const hashSize = d.readUInt8(blob + 36);
		const hashType = d.readUInt8(blob + 37);
		const pageSize = 2 ** d.readUInt8(blob + 39);
		const algo = hashType === 2 ? "sha256" : "sha1";
		let badPages = 0;
		for (let p = 0; p < pages; p++) {
			const start = p * pageSize;
			const page = d.subarray(start, Math.min(start + pageSize, codeLimit));
			const want = d.subarray(blob + hashOffset + p * hashSize, blob + hashOffset + (p + 1) * hashSize);
			if (!createHash(algo).update(page).digest().subarray(0, hashSize).equals(want)) badPages++;
		}
		const identEnd = d.indexOf(0, blob + identOffset);
		// Anything between the signed range and the signature itself would be unsigned code or data.
		const uncovered = sig.offset > codeLimit;
		return {
			status: badPages === 0 && !uncovered ? "valid" : "invalid",
			identifier: d.toString("utf8", blob + identOffset, identEnd),
			adhoc: (flags & CS_ADHOC) !== 0,
			pages,
			badPages,
			codeLimit,
		};
	}
	return { status: "unsigned" };
}

export function describeSignature(c: SignatureCheck): string {
	if (c.status === "not-macho" || c.status === "unsigned") return c.status;
	const kind = c.adhoc ? "ad hoc" : "certificate";
	if (c.status === "valid") return `valid ${kind} signature (${c.identifier}, ${c.pages} pages)`;
	return `INVALID ${kind} signature (${c.identifier}): ${c.badPages} of ${c.pages} pages do not match${c.badPages === 0 ? ", and bytes before the signature are not covered" : ""}; re-sign it on macOS`;
}
