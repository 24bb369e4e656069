/**
 * The names in a folder, without their types, as fast as the runtime can list them: the
 * listings of a state dir of 10,000 job folders list it again whenever it changed (issue 34,
 * item 4). On Deno its own call takes half the time of its node:fs, which builds each name from
 * Deno's entries again (measured on 10,000 names: median 13.5 against 29.7 ms, 15 runs).
 * Names that are not UTF-8 come back decoded with replacement characters on Deno, as node:fs
 * gives them there too.
 */
import { readdirSync } from "node:fs";
import { isDeno } from "./runtime.ts";

/** Throws as the runtime's listing does (a missing or unreadable folder). */
export function dirNames(dir: string): string[] {
  if (!isDeno) return readdirSync(dir);
  const names: string[] = [];
  for (const entry of Deno.readDirSync(dir)) names.push(entry.name);
  return names;
}
