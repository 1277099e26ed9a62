/**
 * `/context-fold`: a menu (Status, Settings, Discard retained images, Close) in interactive Pi, and
 * the shortcuts `status`, `config`/`settings`, `discard-images` everywhere. Only select and input
 * dialogs are used: over RPC they are the only kinds both supported Pi versions carry
 * (`ctx.ui.custom()` answers nothing there on 0.80.6). The settings list and its edits are
 * settings-menu.ts.
 */
import type { ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent";
import { ruleSummary } from "../../core/payback.ts";
import type { Runtime } from "./runtime.ts";
import { settingsListing, settingsMenu } from "./settings-menu.ts";

export const MENU_TITLE = "context-fold";
export const STATUS = "Status";
export const SETTINGS = "Settings";
export const DISCARD_IMAGES = "Discard retained images";
export const CLOSE = "Close";

const SUBCOMMANDS = [
	{ value: "status", description: "fold position, cache ratios and flags" },
	{ value: "config", description: "every setting, its value and where it comes from" },
	{ value: "settings", description: "same as config" },
	{ value: "discard-images", description: "drop images kept from a prompt you did not send" },
] as const;

export function registerMenu(pi: ExtensionAPI, rt: Runtime): void {
	pi.registerCommand("context-fold", {
		description: "context-fold: status, settings, retained images",
		getArgumentCompletions: (prefix: string) => {
			const p = prefix.trim().toLowerCase();
			const items = SUBCOMMANDS.filter((s) => s.value.startsWith(p)).map((s) => ({
				value: s.value,
				label: s.value,
				description: s.description,
			}));
			return items.length > 0 ? items : null;
		},
		handler: async (args, ctx) => {
			try {
				await runCommand(rt, args, ctx);
			} catch (error) {
				rt.notices.say(ctx, `/context-fold failed: ${(error as Error).message}`, "error");
			}
		},
	});
}

async function runCommand(rt: Runtime, args: string, ctx: ExtensionContext): Promise<void> {
	const word = args.trim().split(/\s+/)[0]?.toLowerCase() ?? "";
	switch (word) {
		case "":
			// Headless modes have no dialogs: the bare command keeps printing the status.
			if (ctx.hasUI) await mainMenu(rt, ctx);
			else showStatus(rt, ctx);
			return;
		case "status":
			showStatus(rt, ctx);
			return;
		case "config":
		case "settings":
			if (ctx.hasUI) await settingsMenu(rt, ctx);
			else rt.notices.say(ctx, settingsListing(rt, ctx), "info");
			return;
		case "discard-images":
			discardImages(rt, ctx);
			return;
		default:
			rt.notices.say(
				ctx,
				`unknown subcommand "${word}". Use /context-fold alone for the menu, or one of: ${SUBCOMMANDS.map((s) => s.value).join(", ")}.`,
				"warning",
			);
	}
}

async function mainMenu(rt: Runtime, ctx: ExtensionContext): Promise<void> {
	for (;;) {
		const choice = await ctx.ui.select(menuTitle(rt), [STATUS, SETTINGS, DISCARD_IMAGES, CLOSE]);
		switch (choice) {
			case STATUS:
				showStatus(rt, ctx);
				return;
			case SETTINGS:
				// Leaving the settings list comes back here, one level up, like any nested menu.
				await settingsMenu(rt, ctx);
				continue;
			case DISCARD_IMAGES:
				discardImages(rt, ctx);
				return;
			default:
				// Close, or Escape (undefined).
				return;
		}
	}
}

/** The menu's title: which rule decides, and the payback of the fold due (or waiting) and of the last fold. */
function menuTitle(rt: Runtime): string {
	const lines = ruleSummary({
		plan: rt.lastOutcome?.plan ?? null,
		rule: rt.rule,
		lastFold: rt.state.index.layers.at(-1) ?? null,
	});
	return [MENU_TITLE, ...lines].join("\n");
}

function showStatus(rt: Runtime, ctx: ExtensionContext): void {
	rt.sync(ctx);
	rt.notices.say(ctx, rt.statusText(ctx), "info");
}

function discardImages(rt: Runtime, ctx: ExtensionContext): void {
	const n = rt.retainedImages.length;
	// Replaced, not emptied in place: the advisories hand the old array to Pi when they send it.
	rt.retainedImages = [];
	rt.notices.say(ctx, n === 0 ? "No retained images." : `Discarded ${n} retained image(s).`, "info");
}
