#!/usr/bin/env node
import { processIo } from "../src/cli/io.ts";
/**
 * The context-fold binary's entry (compiled with Bun into dist/context-fold, bundled with esbuild
 * into dist/cli.js for Node). Everything else lives in src/cli and takes its I/O from here.
 */
import { main } from "../src/cli/main.ts";

process.exitCode = await main(process.argv.slice(2), processIo());
