/**
 * How this program is started again, for the line that tells a person at a terminal what to
 * register. Apart from runtime.ts since it reads the disk (node:fs), which the server does not
 * load before it answers `initialize` (issue 34, item 3).
 */
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { isDeno } from "./runtime.ts";

/**
 * The argv that starts this program again, for telling a user what to register with an MCP
 * client: the compiled binary, `deno run` on the source, the Node bundle (or the npm command
 * that links to it), or `npx --prefix <home> -y ollama-delegate` when npx fetched it into its cache.
 */
export function selfCommand(): string[] {
  const deno = (globalThis as { Deno?: { execPath(): string; mainModule: string } }).Deno;
  if (isDeno && deno) {
    const exe = deno.execPath();
    // `deno compile` output is a program of its own; only the deno CLI needs `run` and a file.
    if (!/^deno(\.exe)?$/i.test(basename(exe))) return [exe];
    if (!deno.mainModule.startsWith("file:")) return ["deno", "run", "-A", deno.mainModule];
    const main = fileURLToPath(deno.mainModule);
    const config = join(dirname(dirname(main)), "deno.json");
    return ["deno", "run", "-A", ...(existsSync(config) ? ["--config", config] : []), main];
  }
  const script = process.argv[1];
  if (script === undefined) return [process.execPath];
  // npx runs packages from its cache (~/.npm/_npx/<hash>/...), which it may clear at any time.
  // Its prefix is the home folder, so that npx started in a project never takes the project's
  // node_modules/ollama-delegate or .npmrc (docs/install.md).
  if (/[\\/]_npx[\\/]/.test(script)) {
    return ["npx", "--prefix", homedir(), "-y", "ollama-delegate"];
  }
  // A bin link (npm's) starts by itself; the bundle file itself is started by node.
  if (/\.[cm]?js$/i.test(script)) return [process.execPath, resolve(script)];
  return [resolve(script)];
}
