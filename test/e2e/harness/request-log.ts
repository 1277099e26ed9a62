// The request record both fake providers keep (OpenAI chat and Anthropic Messages): arrival order,
// lookup by index, and a wait for a number of requests.
export interface RequestLog<R> {
	/** Every request, in arrival order. */
	readonly requests: R[];
	add(request: R): void;
	/** The request at `index` (negative counts from the end); throws if there is none, naming how many came. */
	request(index: number): R;
	/** Resolves once at least `count` requests have arrived. */
	waitForRequests(count: number, timeoutMs?: number): Promise<R[]>;
}

export function requestLog<R>(label: string): RequestLog<R> {
	const requests: R[] = [];
	const waiters = new Set<() => void>();
	return {
		requests,
		add(request) {
			requests.push(request);
			for (const wake of waiters) wake();
		},
		request(index) {
			const found = requests.at(index);
			if (!found) throw new Error(`${label}: no request at index ${index}; received ${requests.length}`);
			return found;
		},
		waitForRequests(count, timeoutMs = 10_000) {
			if (requests.length >= count) return Promise.resolve(requests);
			return new Promise((resolve, reject) => {
				const timer = setTimeout(() => {
					waiters.delete(check);
					reject(new Error(`${label}: expected ${count} requests, got ${requests.length} in ${timeoutMs} ms`));
				}, timeoutMs);
				const check = () => {
					if (requests.length < count) return;
					clearTimeout(timer);
					waiters.delete(check);
					resolve(requests);
				};
				waiters.add(check);
			});
		},
	};
}
