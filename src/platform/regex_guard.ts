/**
 * Grep and Glob run patterns a model wrote. A pattern like `^(a+)+$` backtracks
 * exponentially and, being synchronous, would block the whole server: every job, reply,
 * cancel and timeout. V8 can fall back to its linear-time engine when a match backtracks
 * too much. Node accepts the flag at run time; Deno only at start-up, so the compiled
 * binary, `deno task serve` and the documented `deno run` line pass
 * `--v8-flags=--enable-experimental-regexp-engine-on-excessive-backtracks`. Under Node,
 * src/node_main.ts turns it on for every command but those that never run an engine
 * (main.ts needsRegexFallback), which skip loading `node:v8` for it.
 */
import v8 from "node:v8";
import { isDeno } from "./runtime.ts";

export const REGEX_FALLBACK_FLAG = "--enable-experimental-regexp-engine-on-excessive-backtracks";

/** Turns the fallback on where the runtime allows it at run time (Node). */
export function enableRegexFallback(): void {
  if (isDeno) return;
  try {
    v8.setFlagsFromString(REGEX_FALLBACK_FLAG);
  } catch {
    // An engine without the flag: patterns run as before.
  }
}
