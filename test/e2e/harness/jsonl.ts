// JSONL framing as Pi's docs require: split on LF only (Node's readline also splits on U+2028/U+2029).

/** Incremental splitter for a byte stream; feed chunks, get complete records back. */
export class JsonlSplitter {
	private buffer = "";
	private readonly decoder = new TextDecoder();

	push(chunk: Uint8Array | string): string[] {
		this.buffer += typeof chunk === "string" ? chunk : this.decoder.decode(chunk, { stream: true });
		const lines = this.buffer.split("\n");
		this.buffer = lines.pop() ?? "";
		return lines.map(stripCr).filter((l) => l.length > 0);
	}

	/** Whatever is left after the stream ended (a last record without LF). */
	flush(): string[] {
		const rest = stripCr(this.buffer + this.decoder.decode());
		this.buffer = "";
		return rest.length > 0 ? [rest] : [];
	}
}

function stripCr(line: string): string {
	return line.endsWith("\r") ? line.slice(0, -1) : line;
}

export function parseJsonl<T = Record<string, unknown>>(text: string): T[] {
	return text
		.split("\n")
		.map(stripCr)
		.filter((l) => l.trim().length > 0)
		.map((l, i) => {
			try {
				return JSON.parse(l) as T;
			} catch (error) {
				throw new Error(`JSONL line ${i + 1} is not JSON (${String(error)}): ${l.slice(0, 200)}`);
			}
		});
}
