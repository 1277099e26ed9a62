/**
 * Entry ids by message identity. Pi hands the context hook a deep copy of the messages on every
 * request, so a message is known by its content keys: role, message timestamp and tool call id. A
 * key that two entries share maps to nothing (null), which means "never mask" (see BranchState).
 *
 * The lookup runs for every outgoing message of every request, so it builds no string: slots are
 * found by the timestamp (a number) and told apart by role and tool call id.
 */
interface Slot {
	role: string;
	toolCallId: string;
	id: string | null;
}

/** Messages without a numeric timestamp share one key (`?` in the string form role|timestamp|toolCallId). */
const NO_TIME = "?";

interface Keyed {
	role: unknown;
	timestamp?: unknown;
	toolCallId?: unknown;
}

const timeOf = (m: Keyed): number | string => (typeof m.timestamp === "number" ? m.timestamp : NO_TIME);
const roleOf = (m: Keyed): string => (typeof m.role === "string" ? m.role : String(m.role));
const callOf = (m: Keyed): string =>
	typeof m.toolCallId === "string"
		? m.toolCallId
		: m.toolCallId === undefined || m.toolCallId === null
			? ""
			: String(m.toolCallId);

export class MessageIndex {
	private readonly byTime = new Map<number | string, Slot[]>();
	private count = 0;

	/** Record `id` for the message's key; a key already held becomes ambiguous (null). */
	add(m: Keyed, id: string): void {
		const time = timeOf(m);
		const role = roleOf(m);
		const toolCallId = callOf(m);
		let slots = this.byTime.get(time);
		if (slots === undefined) {
			slots = [];
			this.byTime.set(time, slots);
		}
		for (const s of slots) {
			if (s.role === role && s.toolCallId === toolCallId) {
				s.id = null;
				return;
			}
		}
		slots.push({ role, toolCallId, id });
		this.count++;
	}

	/** The entry id of the one message with this key, or null (unknown or ambiguous). */
	get(m: Keyed): string | null {
		const slots = this.byTime.get(timeOf(m));
		if (slots === undefined) return null;
		const role = typeof m.role === "string" ? m.role : String(m.role);
		const toolCallId = typeof m.toolCallId === "string" ? m.toolCallId : callOf(m);
		for (let i = 0; i < slots.length; i++) {
			const s = slots[i] as Slot;
			if (s.role === role && s.toolCallId === toolCallId) return s.id;
		}
		return null;
	}

	/** Distinct keys held. */
	get size(): number {
		return this.count;
	}
}
