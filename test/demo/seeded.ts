/**
 * A fixed-seed random source (mulberry32). Everything the demo generates draws from one of these, so
 * the session is the same byte for byte on every machine and every run: no clock, no Math.random.
 */
export class Seeded {
	private state: number;

	constructor(seed: number) {
		this.state = seed >>> 0;
	}

	/** A float in [0, 1). */
	next(): number {
		this.state = (this.state + 0x6d2b79f5) >>> 0;
		let t = this.state;
		t = Math.imul(t ^ (t >>> 15), t | 1);
		t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
		return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
	}

	/** An integer in [lo, hi], both included. */
	int(lo: number, hi: number): number {
		return lo + Math.floor(this.next() * (hi - lo + 1));
	}

	pick<T>(items: readonly T[]): T {
		const item = items[Math.floor(this.next() * items.length)];
		if (item === undefined) throw new Error("pick from an empty list");
		return item;
	}

	hex(length: number): string {
		let out = "";
		while (out.length < length) out += this.int(0, 15).toString(16);
		return out;
	}

	chance(p: number): boolean {
		return this.next() < p;
	}
}
