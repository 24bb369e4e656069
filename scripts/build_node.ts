/**
 * Builds the Node distribution: one ES module, `dist/node/ollama-delegate.mjs`, that runs on
 * Node 20+ with no `Deno` global. `deno bundle` (esbuild underneath) inlines our code,
 * the MCP SDK and zod; `node:*` imports stay imports. We add the shebang and the execute bit.
 *
 * Run: deno task build:node [--out <file>]
 */
import { execFileSync } from "node:child_process";
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
export const NODE_BUNDLE = join(ROOT, "dist", "node", "ollama-delegate.mjs");
const SHEBANG = "#!/usr/bin/env node\n";

/** Bundles src/node_main.ts into `out` and returns its size in bytes. */
export function buildNode(out: string = NODE_BUNDLE): number {
  mkdirSync(dirname(out), { recursive: true });
  execFileSync(process.execPath, [
    "bundle",
    "--quiet",
    "--config",
    join(ROOT, "deno.json"),
    "--platform",
    "deno",
    "--format",
    "esm",
    "--output",
    out,
    join(ROOT, "src", "node_main.ts"),
  ], { stdio: ["ignore", "inherit", "inherit"] });
  const code = readFileSync(out, "utf8");
  // esbuild keeps a shebang only when the entry has one; ours is added here so the
  // source stays a plain module.
  const text = code.startsWith("#!") ? code : SHEBANG + code;
  writeFileSync(out, text);
  chmodSync(out, 0o755);
  return new TextEncoder().encode(text).length;
}

if (import.meta.main) {
  const { values } = parseArgs({ options: { out: { type: "string" } } });
  const out = values.out ? resolve(values.out) : NODE_BUNDLE;
  try {
    const size = buildNode(out);
    console.error(`Wrote ${out} (${(size / 1e6).toFixed(2)} MB)`);
  } catch (e) {
    console.error(`build_node: Cannot bundle src/node_main.ts: ${(e as Error).message}`);
    process.exit(1);
  }
}
