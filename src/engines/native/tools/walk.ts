import { join } from "node:path";
import { setImmediate } from "node:timers";
import type { BeneathCheck, BeneathDir } from "../../../platform/open_beneath/open_beneath.ts";
import { ToolFailure } from "./fields.ts";

/** Directories skipped unless the pattern or path names them, as ripgrep and Claude Code do. */
export const SKIPPED_DIRS = [".git", "node_modules"] as const;
/** Entries a walk looks at before it stops and says so; keeps a search of `/` bounded. */
export const MAX_WALK_ENTRIES = 200_000;
/** Directories deeper than this are not entered: each level holds one descriptor open. */
export const MAX_WALK_DEPTH = 128;

export interface WalkOptions {
  signal: AbortSignal;
  /** Text the user gave (pattern, path, glob): a skipped name in it is walked after all. */
  named: string;
  maxEntries?: number;
  /**
   * Why an entry is left out (directories with final=false, files with final=true): the
   * server's own directories, credential stores, the user's path rules.
   */
  check: BeneathCheck;
  /** performance.now() after which the walk stops and says so. */
  deadline?: number;
  /** Called between entries, so a long walk lets the server answer other requests. */
  pause?: () => Promise<void>;
  /**
   * A regular file: its directory (held open), its name, its path as resolved, and its path
   * relative to the walk's start with `/` separators. Returning true ends the walk.
   */
  visit(dir: BeneathDir, name: string, real: string, rel: string): Promise<boolean | void>;
}

export interface WalkResult {
  /** True when the walk stopped at maxEntries. */
  truncated: boolean;
  /** True when it stopped at the deadline. */
  timedOut: boolean;
}

/**
 * Visits every regular file below `base`, in the order of their paths. Every directory is
 * entered through the one above it, held open (see platform/open_beneath/open_beneath.ts), so no directory swapped
 * for a symlink during the walk can lead it elsewhere. Symlinks are not followed, as ripgrep
 * does without --follow: a link to a directory outside, or to a cycle, is simply not walked.
 */
export async function walkBeneath(base: BeneathDir, options: WalkOptions): Promise<WalkResult> {
  const skipped = new Set<string>(SKIPPED_DIRS.filter((name) => !options.named.includes(name)));
  const maxEntries = options.maxEntries ?? MAX_WALK_ENTRIES;
  const result: WalkResult = { truncated: false, timedOut: false };
  let entries = 0;

  const walk = async (dir: BeneathDir, rel: string, depth: number): Promise<boolean> => {
    if (options.signal.aborted) throw new ToolFailure("Cancelled while walking the directory");
    let listing;
    try {
      listing = await dir.list();
    } catch {
      return false; // unreadable or vanished: the walk goes on, as find and rg do
    }
    // `a/` sorts as the path `a/x` would against `a.txt`, so the walk goes in path order.
    const key = (e: { name: string; kind: string }) => e.kind === "dir" ? `${e.name}/` : e.name;
    listing.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
    for (const entry of listing) {
      if (++entries > maxEntries) {
        result.truncated = true;
        return true;
      }
      if (options.deadline !== undefined && performance.now() > options.deadline) {
        result.timedOut = true;
        return true;
      }
      await options.pause?.();
      const real = join(dir.real, entry.name);
      const path = rel === "" ? entry.name : `${rel}/${entry.name}`;
      if (entry.kind === "dir") {
        if (skipped.has(entry.name) || depth >= MAX_WALK_DEPTH) continue;
        if (options.check(real, false) !== undefined) continue;
        let sub: BeneathDir;
        try {
          sub = await dir.openDir(entry.name);
        } catch {
          continue; // replaced by a symlink or removed since the listing
        }
        try {
          if (await walk(sub, path, depth + 1)) return true;
        } finally {
          await sub.close();
        }
      } else if (entry.kind === "file") {
        if (options.check(real, true) !== undefined) continue;
        if (await options.visit(dir, entry.name, real, path)) return true;
      }
    }
    return false;
  };

  await walk(base, "", 0);
  return result;
}

/** Gives the event loop a turn when `sliceMs` have passed since the last one. */
export function pacer(sliceMs = 15): () => Promise<void> {
  let last = performance.now();
  return async () => {
    const now = performance.now();
    if (now - last < sliceMs) return;
    await new Promise<void>((resolve) => setImmediate(resolve));
    last = performance.now();
  };
}
