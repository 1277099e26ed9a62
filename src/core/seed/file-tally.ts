import { FILE_OPS, type FileOp, type SeedFile } from "./schema.ts";

const OP_TIER: Record<FileOp, number> = { write: 0, edit: 0, read: 1, command: 2, output: 3 };

/** Paths by strongest op (write/edit, read, command, output), then mentions, then first sighting. */
export class FileTally {
	private readonly seen = new Map<string, { ops: Set<FileOp>; count: number; first: number }>();

	add(path: string, op: FileOp): void {
		const hit = this.seen.get(path);
		if (hit === undefined) this.seen.set(path, { ops: new Set([op]), count: 1, first: this.seen.size });
		else {
			hit.ops.add(op);
			hit.count++;
		}
	}

	ranked(): SeedFile[] {
		return [...this.seen.entries()]
			.map(([path, v]) => {
				const ops = FILE_OPS.filter((op) => v.ops.has(op));
				return { path, ops, tier: OP_TIER[ops[0] as FileOp], count: v.count, first: v.first };
			})
			.sort((a, b) => a.tier - b.tier || b.count - a.count || a.first - b.first)
			.map((f) => ({ path: f.path, ops: f.ops }));
	}
}
