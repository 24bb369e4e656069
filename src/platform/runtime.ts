/**
 * The one place that knows which JavaScript runtime we are on. Everything else asks here,
 * so the Node bundle and the Deno build differ only behind these exports.
 */
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";

interface DenoLike {
  Command?: unknown;
  stdin: { isTerminal(): boolean };
  stdout: { isTerminal(): boolean };
  stderr: { isTerminal(): boolean };
}

/** True under Deno (source or compiled), false under Node. */
export const isDeno: boolean =
  typeof (globalThis as { Deno?: DenoLike }).Deno?.Command === "function";

/** The operating system, as Node names it ("linux", "darwin", "win32"...). */
export const osPlatform: string = process.platform;

/** The operating system family, for the thin OS dispatches in this folder. */
export const isWindows: boolean = osPlatform === "win32";

/** Linux: the only OS with a sandbox for the native engine's shell (bubblewrap). */
export const isLinux: boolean = osPlatform === "linux";

/** A snapshot of this process's environment as a plain object. */
export function currentEnv(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined) out[k] = v;
  return out;
}

/** Whether this process runs as root (uid 0), where some limits (RLIMIT_NPROC) do not bind. */
export function isRoot(): boolean {
  return process.getuid?.() === 0;
}

/** Whether one of this process's standard streams is a terminal (a TTY), on Deno and Node. */
export function isTty(stream: "stdin" | "stdout" | "stderr"): boolean {
  // Deno asks its own handles: its node:tty costs ~25 ms of start-up, measured.
  const deno = (globalThis as { Deno?: DenoLike }).Deno;
  try {
    return isDeno && deno ? deno[stream].isTerminal() : process[stream].isTTY === true;
  } catch {
    return false;
  }
}

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
