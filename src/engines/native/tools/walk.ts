import { readdir, realpath, stat } from "node:fs/promises";
import { join } from "node:path";
import { isInsideRoots } from "./confine.ts";
import { ToolFailure } from "./fields.ts";

/** Directories skipped unless the pattern or path names them, as ripgrep and Claude Code do. */
export const SKIPPED_DIRS = [".git", "node_modules"] as const;
/** Entries a walk looks at before it stops and says so; keeps a search of `/` bounded. */
export const MAX_WALK_ENTRIES = 200_000;

export interface WalkOptions {
  /** Real paths the walk may enter; symlinks resolving elsewhere are not followed. */
  roots: readonly string[];
  signal: AbortSignal;
  /** Text the user gave (pattern, path, glob): a skipped name in it is walked after all. */
  named: string;
  maxEntries?: number;
  /** Real paths never entered: the server's own settings and job records. */
  protect?: readonly string[];
}

export interface WalkResult {
  /** Absolute paths of regular files, below `base` as the walk reached them. */
  files: string[];
  /** True when the walk stopped at maxEntries. */
  truncated: boolean;
}

/**
 * Every regular file below the real directory `base`, sorted by path. Symlinks are
 * followed only when their target is inside the roots, and a directory is entered once
 * (by real path), so a link cycle cannot loop.
 */
export async function walkFiles(base: string, options: WalkOptions): Promise<WalkResult> {
  const skipped = new Set<string>(SKIPPED_DIRS.filter((name) => !options.named.includes(name)));
  const maxEntries = options.maxEntries ?? MAX_WALK_ENTRIES;
  const files: string[] = [];
  const visited = new Set<string>([base]);
  // Each directory with its real path: the path a link led to is not where it lives.
  const pending: Array<[path: string, real: string]> = [[base, base]];
  let entries = 0;
  while (pending.length > 0) {
    if (options.signal.aborted) throw new ToolFailure("Cancelled while walking the directory");
    const [dir, realDir] = pending.pop() as [string, string];
    let listing;
    try {
      listing = await readdir(dir, { withFileTypes: true });
    } catch {
      continue; // unreadable or vanished: the walk goes on, as find and rg do
    }
    for (const entry of listing) {
      if (++entries > maxEntries) return { files: files.sort(), truncated: true };
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        const real = join(realDir, entry.name);
        if (options.protect && isInsideRoots(options.protect, real)) continue;
        if (!skipped.has(entry.name) && !visited.has(real)) {
          visited.add(real);
          pending.push([path, real]);
        }
      } else if (entry.isFile()) {
        files.push(path);
      } else if (entry.isSymbolicLink()) {
        try {
          const target = await realpath(path);
          if (!isInsideRoots(options.roots, target)) continue;
          if (options.protect && isInsideRoots(options.protect, target)) continue;
          const info = await stat(target);
          if (info.isFile()) files.push(path);
          else if (info.isDirectory() && !skipped.has(entry.name) && !visited.has(target)) {
            visited.add(target);
            pending.push([path, target]);
          }
        } catch {
          continue; // dangling link
        }
      }
    }
  }
  return { files: files.sort(), truncated: false };
}
