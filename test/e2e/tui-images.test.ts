// The send confirmation and images, in Pi's TUI on both versions, seen the way a person sees them.
//
// How an image gets into a prompt in Pi's TUI (read in both versions' dist, 0.80.6 and 1.6.0):
// - `pi @shot.png "text"`: the CLI's `@file` arguments become the first prompt, and an image file among
//   them becomes a structured image attachment (cli/file-processor.js), submitted through
//   session.prompt(text, {images}) with source "interactive" (modes/interactive/interactive-mode.js).
//   This is the only way the TUI produces a structured image.
// - Ctrl+V: Pi writes the clipboard image to a temporary file and inserts that file's PATH into the
//   editor (handleClipboardPaste / handleClipboardImagePaste); dropping a file on the terminal pastes
//   its path; `@` completion inserts a path. The editor submits plain text (pi-tui's editor only
//   collapses long pastes into markers), so these reach the model as a path in the text. For them the
//   guarantee is that the path returns to the editor with the draft.
// tmux has no system clipboard here, so the clipboard case is covered by what it produces: a pasted path.
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { deflateSync } from "node:zlib";
import { bigOutputCommand, contentText, ensureBundle, scenarioPool } from "./cf.ts";
import {
	bash,
	type ChatMessage,
	expectSuccess,
	forEachPiVersion,
	type PiVersion,
	type RecordedRequest,
	replySequence,
	runPrint,
	type Scenario,
	startTui,
	type TuiSession,
	text,
	tmuxSkipAllowed,
} from "./harness/index.ts";

const TIMEOUT = 90_000;
const HOUR = 3_600_000;
const bundle = ensureBundle();
const scenario = scenarioPool();

// ---------------------------------------------------------------------------------------------
// A small real PNG: 4x4 pixels, RGB, built byte by byte so its validity does not depend on a fixture.

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
	let c = n;
	for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
	return c >>> 0;
});

function crc32(bytes: Buffer): number {
	let c = 0xffffffff;
	for (const b of bytes) c = (CRC_TABLE[(c ^ b) & 0xff] as number) ^ (c >>> 8);
	return (c ^ 0xffffffff) >>> 0;
}

function chunk(type: string, data: Buffer): Buffer {
	const head = Buffer.alloc(4);
	head.writeUInt32BE(data.length);
	const body = Buffer.concat([Buffer.from(type, "latin1"), data]);
	const crc = Buffer.alloc(4);
	crc.writeUInt32BE(crc32(body));
	return Buffer.concat([head, body, crc]);
}

function tinyPng(size = 4): Buffer {
	const ihdr = Buffer.alloc(13);
	ihdr.writeUInt32BE(size, 0);
	ihdr.writeUInt32BE(size, 4);
	ihdr[8] = 8; // bit depth
	ihdr[9] = 2; // RGB
	const rows: number[] = [];
	for (let y = 0; y < size; y++) {
		rows.push(0); // filter: none
		for (let x = 0; x < size; x++) rows.push((x * 60) & 0xff, (y * 60) & 0xff, 200);
	}
	return Buffer.concat([
		Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
		chunk("IHDR", ihdr),
		chunk("IDAT", deflateSync(Buffer.from(rows))),
		chunk("IEND", Buffer.alloc(0)),
	]);
}

// ---------------------------------------------------------------------------------------------

/** Image parts (OpenAI `image_url`) of the newest user message of a request. */
function userImages(req: RecordedRequest): string[] {
	const users = req.body.messages.filter((m) => m.role === "user");
	const content = (users.at(-1) as ChatMessage | undefined)?.content;
	if (!Array.isArray(content)) return [];
	return content.flatMap((part) => {
		const p = part as { type: string; image_url?: { url?: string } };
		return p.type === "image_url" ? [String(p.image_url?.url ?? "")] : [];
	});
}

function lastUserText(req: RecordedRequest): string {
	const users = req.body.messages.filter((m) => m.role === "user");
	return contentText((users.at(-1) as ChatMessage | undefined)?.content);
}

/** A model that takes images, a ~30k-token session written headless, and a PNG in the project. */
async function imageSession(version: PiVersion): Promise<{ s: Scenario; png: string }> {
	const s = await scenario({
		model: { contextWindow: 200_000, extra: { input: ["text", "image"] } },
		compaction: { enabled: false },
	});
	const png = join(s.sandbox.cwd, "shot.png");
	writeFileSync(png, tinyPng());
	const replies = [];
	for (let i = 0; i < 6; i++) replies.push(bash(bigOutputCommand(`img${i}`, 5000), `call_img${i}`));
	replies.push(text("built"));
	s.fake.setScript(replySequence(replies));
	expectSuccess(await runPrint({ version, sandbox: s.sandbox, prompt: "build", extensions: [bundle] }));
	return { s, png };
}

/** The TUI resumed on that session with the cache looking two hours cold and the confirmation on. */
async function coldTui(version: PiVersion, s: Scenario, args: string[] = []): Promise<TuiSession> {
	const tui = await startTui({
		version,
		sandbox: s.sandbox,
		extensions: [bundle],
		continue: true,
		args,
		width: 160,
		height: 50,
		env: { CONTEXTFOLD_CONFIRM_COLD_PROMPT: "on", CONTEXTFOLD_TEST_CLOCK_OFFSET_MS: String(2 * HOUR) },
	});
	s.defer(() => tui.kill());
	return tui;
}

/** Answers the open confirmation: the first option is Keep draft, the second Send anyway. */
async function answer(tui: TuiSession, choice: "keep" | "send"): Promise<void> {
	const screen = await tui.waitFor("Send anyway");
	expect(screen).toContain("Keep draft");
	if (choice === "send") tui.sendKeys("Down");
	tui.sendKeys("Enter");
	await tui.waitForGone("Send anyway");
}

async function quit(tui: TuiSession): Promise<void> {
	tui.sendKeys("C-c"); // clear whatever the editor holds
	tui.type("/quit");
	tui.sendKeys("Enter");
	await tui.waitForExit();
}

forEachPiVersion((version) => {
	describe(`pi ${version}: send confirmation and images in the TUI`, () => {
		test.skipIf(tmuxSkipAllowed())(
			"an @image prompt: Keep draft sends nothing and retains the image; the next submission carries it exactly once",
			async () => {
				const { s, png } = await imageSession(version);
				s.fake.setScript(replySequence([text("I see a tiny gradient")]));
				const before = s.fake.requests.length;
				// What a person types: `pi -c @shot.png "…"` submits the text with the image attached.
				const tui = await coldTui(version, s, [`@${png}`, "what is in this screenshot?"]);
				await tui.waitForReady();
				await answer(tui, "keep");
				// One notice (Pi's TUI shows only the newest of consecutive info notices).
				const screen = await tui.waitFor(
					"nothing was sent: your draft is back in the editor. 1 image(s) retained for your next prompt. /context-fold discard-images drops them.",
				);
				// The draft is back in the editor, with Pi's reference to the image file.
				expect(screen).toContain("what is in this screenshot?");
				expect(screen).toContain(`<file name="${png}"></file>`);
				expect(s.fake.requests.length).toBe(before);

				tui.sendKeys("Enter"); // submit the restored draft
				await answer(tui, "send");
				await tui.waitFor("I see a tiny gradient", 30_000);
				expect(s.fake.requests.length).toBe(before + 1);
				const sent = s.fake.request(-1);
				expect(lastUserText(sent)).toContain("what is in this screenshot?");
				const images = userImages(sent);
				expect(images).toHaveLength(1);
				expect(images[0]).toStartWith("data:image/png;base64,");
				// Exactly once in the whole request, not also on an earlier message.
				expect(JSON.stringify(sent.body).split("data:image/png;base64,").length - 1).toBe(1);
				await quit(tui);
			},
			TIMEOUT,
		);

		test.skipIf(tmuxSkipAllowed())(
			"Discard retained images from the menu: the next prompt carries no image",
			async () => {
				const { s, png } = await imageSession(version);
				s.fake.setScript(replySequence([text("answered without the image")]));
				const before = s.fake.requests.length;
				const tui = await coldTui(version, s, [`@${png}`, "what is in this screenshot?"]);
				await tui.waitForReady();
				await answer(tui, "keep");
				await tui.waitFor("1 image(s) retained for your next prompt");
				// Put the draft aside (Ctrl+C clears the editor), open the menu, discard.
				tui.sendKeys("C-c");
				await tui.waitForGone(`<file name="${png}"></file>`);
				tui.type("/context-fold");
				tui.sendKeys("Enter");
				await tui.waitFor("Discard retained images");
				tui.sendKeys("Down", "Down", "Enter"); // Status, Settings, Discard retained images
				await tui.waitFor("Discarded 1 retained image(s).");
				expect(s.fake.requests.length).toBe(before);

				tui.type("describe it from memory");
				tui.sendKeys("Enter");
				await answer(tui, "send");
				await tui.waitFor("answered without the image", 30_000);
				expect(s.fake.requests.length).toBe(before + 1);
				const sent = s.fake.request(-1);
				expect(lastUserText(sent)).toContain("describe it from memory");
				expect(userImages(sent)).toHaveLength(0);
				expect(JSON.stringify(sent.body)).not.toContain("data:image/");
				await quit(tui);
			},
			TIMEOUT,
		);

		test.skipIf(tmuxSkipAllowed())(
			"a pasted image path (what Ctrl+V and drag-and-drop produce) returns to the editor with the draft",
			async () => {
				const { s, png } = await imageSession(version);
				s.fake.setScript(replySequence([text("reading that file")]));
				const before = s.fake.requests.length;
				const tui = await coldTui(version, s);
				await tui.waitForReady();
				await tui.waitFor("cache may have expired");
				tui.type("compare with");
				tui.paste(png);
				await tui.waitFor(`compare with ${png}`);
				tui.sendKeys("Enter");
				await answer(tui, "keep");
				const screen = await tui.waitFor("nothing was sent: your draft is back in the editor.");
				expect(screen).toContain(`compare with ${png}`);
				expect(screen).not.toContain("image(s) retained");
				expect(s.fake.requests.length).toBe(before);

				tui.sendKeys("Enter");
				await answer(tui, "send");
				await tui.waitFor("reading that file", 30_000);
				expect(s.fake.requests.length).toBe(before + 1);
				const sent = s.fake.request(-1);
				expect(lastUserText(sent)).toBe(`compare with ${png}`);
				expect(userImages(sent)).toHaveLength(0);
				await quit(tui);
			},
			TIMEOUT,
		);
	});
});
