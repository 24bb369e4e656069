/**
 * Which files a job created or changed, including through Bash: the server compares the
 * job's directories before and after rather than trusting the model's account. Bounded, so
 * a huge tree costs a capped walk and says it was capped.
 */
import { lstat, readdir } from "node:fs/promises";
import { join } from "node:path";

/** Entries looked at per snapshot; beyond this the comparison is partial. */
const MAX_ENTRIES = 20_000;
/** Folders never walked: version control and dependency caches. */
const SKIP = new Set([".git", "node_modules", ".hg", ".svn", "__pycache__", ".venv", "target"]);

export interface Snapshot {
  files: Map<string, string>;
  /** True when the walk stopped at MAX_ENTRIES. */
  capped: boolean;
}

export async function snapshot(roots: readonly string[]): Promise<Snapshot> {
  const files = new Map<string, string>();
  let seen = 0;
  const stack = [...roots];
  while (stack.length > 0) {
    const dir = stack.pop()!;
    let entries;
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    const statted: string[] = [];
    let capped = false;
    for (const entry of entries) {
      if (++seen > MAX_ENTRIES) {
        capped = true;
        break;
      }
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (!SKIP.has(entry.name)) stack.push(path);
      } else if (entry.isFile() || entry.isSymbolicLink()) {
        statted.push(path);
      }
    }
    // One directory's files at a time, concurrently: a stat per await is slow on big trees.
    const stats = await Promise.all(statted.map((path) => lstat(path).catch(() => undefined)));
    stats.forEach((st, i) => {
      if (st) files.set(statted[i]!, `${st.size}:${st.mtimeMs}`);
    });
    if (capped) return { files, capped: true };
  }
  return { files, capped: false };
}

/**
 * Paths created or changed between two snapshots, sorted. Deleted files are left out. When
 * either walk was capped, only paths both walks saw count: a shifted cut-off would otherwise
 * report untouched files as new.
 */
export function changedBetween(before: Snapshot, after: Snapshot): string[] {
  const partial = before.capped || after.capped;
  const out: string[] = [];
  for (const [path, sig] of after.files) {
    const old = before.files.get(path);
    if (old === undefined ? !partial : old !== sig) out.push(path);
  }
  return out.sort();
}
