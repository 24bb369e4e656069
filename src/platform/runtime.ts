/**
 * The one place that knows which JavaScript runtime we are on. Everything else asks here,
 * so the Node bundle and the Deno build differ only behind these exports (and self_command.ts,
 * which reads the disk and so loads only when a person starts the server at a terminal).
 */
import process from "node:process";

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
