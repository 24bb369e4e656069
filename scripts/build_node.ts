/**
 * Builds the Node distribution: one ES module, `dist/node/ollama-delegate.mjs`, that runs on
 * Node 20+ with no `Deno` global. `deno bundle` (esbuild underneath) inlines our code,
 * the MCP SDK and zod; `node:*` imports stay imports. We add the shebang and the execute bit.
 *
 * With `split` (the npm package, scripts/build_npm.ts) the bundle is cut into chunks, in
 * `chunks/` beside the entry, and Node loads only those a command imports: the server answers
 * `initialize` without parsing the 3 MB of the tools, the job layer, the engines and
 * OpenTelemetry, which load after or not at all (issue 34, item 3; figures in
 * bench/startup_bench.ts). The release's single file stays one file (docs/install.md).
 *
 * Run: deno task build:node [--out <file>] [--split]
 */
import { execFileSync } from "node:child_process";
import {
  chmodSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { dirname, join, resolve } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
export const NODE_BUNDLE = join(ROOT, "dist", "node", "ollama-delegate.mjs");
const SHEBANG = "#!/usr/bin/env node\n";
/** The folder of a split build's chunks, beside its entry. */
export const CHUNKS = "chunks";

/**
 * Bundles src/node_main.ts into `out` and returns its size in bytes; with `split`, `out` is a
 * two-line entry that imports `chunks/node_main.js`, and the size counts the chunks too.
 */
export function buildNode(out: string = NODE_BUNDLE, options: { split?: boolean } = {}): number {
  mkdirSync(dirname(out), { recursive: true });
  if (options.split) return buildSplit(out);
  bundleForNode(join(ROOT, "src", "node_main.ts"), out);
  const code = readFileSync(out, "utf8");
  // esbuild keeps a shebang only when the entry has one; ours is added here so the
  // source stays a plain module.
  const text = code.startsWith("#!") ? code : SHEBANG + code;
  writeFileSync(out, text);
  chmodSync(out, 0o755);
  return new TextEncoder().encode(text).length;
}

/**
 * Bundles `entry` (any module of this repository: the program, or a bench's or test's entry that
 * runs our code under Node) into the ES module `out`, as the Node distribution is bundled; with
 * `outdir`, into chunks in that folder instead.
 */
export function bundleForNode(
  entry: string,
  out: string,
  options: { outdir?: boolean } = {},
): void {
  execFileSync(process.execPath, [
    "bundle",
    "--quiet",
    "--config",
    join(ROOT, "deno.json"),
    "--platform",
    "deno",
    "--format",
    "esm",
    ...(options.outdir ? ["--code-splitting", "--outdir"] : ["--output"]),
    out,
    entry,
  ], { stdio: ["ignore", "inherit", "inherit"] });
}

function buildSplit(out: string): number {
  const chunks = join(dirname(out), CHUNKS);
  // Chunk names carry content hashes: a previous build's would stay behind unused.
  rmSync(chunks, { recursive: true, force: true });
  bundleForNode(join(ROOT, "src", "node_main.ts"), chunks, { outdir: true });
  // The chunks are ES modules named .js: without this a folder with no package.json of type
  // "module" above it (a release, a copy) would have Node read them as CommonJS.
  writeFileSync(join(chunks, "package.json"), '{ "type": "module" }\n');
  const text = `${SHEBANG}import "./${CHUNKS}/node_main.js";\n`;
  writeFileSync(out, text);
  chmodSync(out, 0o755);
  const size = readdirSync(chunks).reduce((sum, f) => sum + statSync(join(chunks, f)).size, 0);
  return size + text.length;
}

if (import.meta.main) {
  const { values } = parseArgs({
    options: { out: { type: "string" }, split: { type: "boolean" } },
  });
  const out = values.out ? resolve(values.out) : NODE_BUNDLE;
  try {
    const size = buildNode(out, { split: values.split === true });
    console.error(`Wrote ${out} (${(size / 1e6).toFixed(2)} MB)`);
  } catch (e) {
    console.error(`build_node: Cannot bundle src/node_main.ts: ${(e as Error).message}`);
    process.exit(1);
  }
}
