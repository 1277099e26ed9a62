// What both fake providers share (the e2e fake model and the economics replay model): a JSON body
// reader, OpenAI's usage shape, and an HTTP server on 127.0.0.1 that records handler failures.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export function readBody(req: IncomingMessage): Promise<string> {
	return new Promise((resolve, reject) => {
		const chunks: Buffer[] = [];
		req.on("data", (c: Buffer) => chunks.push(c));
		req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
		req.on("error", reject);
	});
}

/** OpenAI's usage shape; prompt_tokens includes cached and written tokens, which Pi subtracts back out. */
export function wireUsage(u: { input: number; output: number; cacheRead: number; cacheWrite: number }) {
	const prompt = u.input + u.cacheRead + u.cacheWrite;
	return {
		prompt_tokens: prompt,
		completion_tokens: u.output,
		total_tokens: prompt + u.output,
		prompt_tokens_details: { cached_tokens: u.cacheRead, cache_write_tokens: u.cacheWrite },
	};
}

export interface LocalServer {
	port: number;
	close(): Promise<void>;
}

/** Listen on a free loopback port; a handler that throws answers 500 and is noted in `problems`. */
export async function listenLocal(
	handle: (req: IncomingMessage, res: ServerResponse) => Promise<void>,
	problems: string[],
): Promise<LocalServer> {
	const server = createServer((req, res) => {
		handle(req, res).catch((error) => {
			problems.push(`handler failed: ${String(error)}`);
			if (!res.headersSent) res.writeHead(500);
			res.end();
		});
	});
	await new Promise<void>((resolve, reject) => {
		server.once("error", reject);
		server.listen(0, "127.0.0.1", () => resolve());
	});
	return {
		port: (server.address() as AddressInfo).port,
		close: () =>
			new Promise<void>((resolve) => {
				server.close(() => resolve());
				// Pi keeps connections alive; drop them so close() does not wait for their idle timeout.
				server.closeAllConnections();
			}),
	};
}
