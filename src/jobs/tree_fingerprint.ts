/**
 * Whether a repair round changed anything: a digest of the names, sizes, modes and modification
 * times of everything under a job's directories, taken before and after the round. Links are
 * not followed; version-control and dependency folders are left out (a commit changes the
 * files it commits too). Bounded: past MAX_ENTRIES the answer is "unknown", never "no change".
 */
import { createHash } from "node:crypto";
import { lstat, readdir } from "node:fs/promises";
import { join } from "node:path";

/** Entries looked at in all; a larger tree is not fingerprinted. */
export const MAX_ENTRIES = 20_000;
const SKIPPED = new Set([".git", "node_modules", ".hg", ".svn"]);

/** A digest of `roots`, or undefined when they hold more than `maxEntries` entries. */
export async function treeFingerprint(
  roots: readonly string[],
  maxEntries = MAX_ENTRIES,
): Promise<string | undefined> {
  const hash = createHash("sha256");
  let seen = 0;
  const pending = [...roots];
  while (pending.length > 0) {
    const dir = pending.pop()!;
    let names: string[];
    try {
      names = (await readdir(dir)).sort();
    } catch {
      hash.update(`${dir}\0unreadable\n`);
      continue;
    }
    for (const name of names) {
      if (++seen > maxEntries) return undefined;
      const path = join(dir, name);
      try {
        const info = await lstat(path);
        hash.update(`${path}\0${info.size}\0${info.mode}\0${info.mtimeMs}\n`);
        if (info.isDirectory() && !SKIPPED.has(name)) pending.push(path);
      } catch {
        hash.update(`${path}\0gone\n`);
      }
    }
  }
  return hash.digest("hex");
}
