/**
 * The one place that knows which JavaScript runtime we are on. Everything else asks here,
 * so the Node bundle and the Deno build differ only behind these exports.
 */
import process from "node:process";

interface DenoLike {
  Command?: unknown;
}

/** True under Deno (source or compiled), false under Node. */
export const isDeno: boolean =
  typeof (globalThis as { Deno?: DenoLike }).Deno?.Command === "function";

/** The operating system family, for the thin OS dispatches in this folder. */
export const isWindows: boolean = process.platform === "win32";

/** Linux: the only OS with a sandbox for the native engine's shell (bubblewrap). */
export const isLinux: boolean = process.platform === "linux";

/** A snapshot of this process's environment as a plain object. */
export function currentEnv(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined) out[k] = v;
  return out;
}
