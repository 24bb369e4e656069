/**
 * Finds the host-run paths (protected_paths.ts: `.git`, `.claude`, `.envrc`...) that exist
 * below the top of a delegate's writable directories, so that a sandbox can make them
 * read-only too: a delegate working in `~/code` must not reach `~/code/proj/.git/hooks`.
 *
 * Bounded, and honest about it: the walk looks only at directories, never descends into a
 * host-run directory once found nor below `node_modules` or into credential stores, and stops
 * after a number of directories or beyond a depth. A scan that stopped early says why, and the
 * caller must then not start a sandbox that relies on it (fail closed): a `.git` it did not
 * reach would stay writable. Asynchronous, a bounded number of directories at a time, so a
 * large tree does not hold up the server's event loop. The same walk can list secret files
 * by name (identities.ts), so a turn reads its directories once.
 */
import { lstat, readdir } from "node:fs/promises";
import { basename, join } from "node:path";
import process from "node:process";
import { CREDENTIAL_PATHS, isHostRunEntry } from "./protected_paths.ts";
import { hasRawBytes } from "../platform/file_names.ts";
import { listDirByBytes, rawKindOf } from "../platform/raw_fs.ts";
import { quoteString } from "../platform/plain_text.ts";
import { formatCount } from "../platform/count_text.ts";

export interface ScanBounds {
  /** Directories read before the scan gives up. */
  maxDirs: number;
  /** Levels below a root read before the scan gives up. */
  maxDepth: number;
}

/**
 * 50,000 directories take a fraction of a second (a typical project, dependencies pruned,
 * holds a few thousand); 16 levels fit deep source trees (`src/main/java/com/...` in one of
 * several projects below cwd).
 */
export const SCAN_BOUNDS: ScanBounds = { maxDirs: 50_000, maxDepth: 16 };

export interface HostRunScan {
  /** Host-run paths below the top of the roots (absolute, sorted): dirs, files and links. */
  paths: string[];
  /** Directories read. */
  dirs: number;
  /**
   * Entries (files, links, anything not a directory) whose name `ScanOptions.secret` picked,
   * at any depth, the top of the roots included (absolute, sorted); empty without it.
   */
  secrets: string[];
  /** Why the scan stopped before it covered the roots; absent when it covered them. */
  incomplete?: string;
}

export interface ScanOptions {
  /** Picks the secret files to list by name, in the same walk (identities.ts). */
  secret?: (name: string) => boolean;
  /**
   * Lists a folder from memory instead of the disk: a change journal's (engines/tree/journal.ts)
   * folders and marked names, which are all this scan looks at; undefined where it does not
   * know the folder, which is then read.
   */
  list?: (dir: string) => ListedEntry[] | undefined;
}

/** A folder's entry as the scan sees it: a name, and whether it is a folder. */
export interface ListedEntry {
  name: string;
  isDirectory(): boolean;
}

/** Directories never descended into: dependencies (large, not where users run git). */
const PRUNED = new Set(["node_modules", ...CREDENTIAL_PATHS.filter((p) => !p.includes("/"))]);

/** Pruned directories whose own entries are still looked at (see scanHostRun). */
const PEEKED = new Set(["node_modules"]);

/** A directory to read; `peek`: look at its entries but descend no further. */
interface Pending {
  dir: string;
  depth: number;
  peek?: boolean;
}

/** Directories read at once. */
const BATCH = 32;

function codeOf(e: unknown): string | undefined {
  return (e as { code?: string }).code;
}

/** U+FFFD: what a runtime puts in a name in place of bytes that are not UTF-8. */
const REPLACED = "\uFFFD";

/**
 * `dir`'s entries, by their names' bytes when one is not UTF-8 (platform/file_names.ts): a
 * name the runtime decoded names nothing, and the host-run files below it would be missed
 * (found on both engines: `proj\377/.envrc` stayed writable). Throws node:fs's errors, and one
 * saying so where this runtime cannot list by bytes (the scan then fails closed).
 */
async function listEntries(dir: string): Promise<ListedEntry[]> {
  if (!hasRawBytes(dir)) {
    const entries = await readdir(dir, { withFileTypes: true });
    if (!entries.some((e) => e.name.includes(REPLACED))) return entries;
  }
  const raw = listDirByBytes(dir);
  if (raw === undefined) {
    throw Object.assign(
      new Error(
        `${quoteString(dir)} holds a name that is not UTF-8, which this runtime cannot read`,
      ),
      { code: "ENAMEBYTES" },
    );
  }
  return raw.map(({ name, kind }) => {
    const isDir = (kind ?? rawKindOf(`${dir}/${name}`)) === "dir";
    return { name, isDirectory: () => isDir };
  });
}

/**
 * Why a host-run path whose name is not UTF-8 cannot be mounted read-only, or undefined when it
 * can: the sandboxes name it to bubblewrap by its bytes (bwrap_base.ts `bwrapCommand`), which
 * needs it to be a file or folder this runtime can look at; a link would have to be followed to
 * its target, which is not done by bytes.
 */
function unmountable(path: string): string | undefined {
  if (!hasRawBytes(path)) return undefined;
  const kind = rawKindOf(path);
  if (kind === "dir" || kind === "file" || kind === "missing") return undefined;
  return kind === undefined
    ? `${quoteString(path)} has a name that is not UTF-8, which this runtime cannot look at`
    : `${
      quoteString(path)
    } is a host-run ${kind} below a folder whose name is not UTF-8, which the ` +
      "sandbox cannot hold read-only";
}

/**
 * The host-run paths below the top of `roots` (a root's own `.git` is left out: callers
 * protect the top already). Never throws.
 */
export async function scanHostRun(
  roots: readonly string[],
  bounds: ScanBounds = SCAN_BOUNDS,
  options: ScanOptions = {},
): Promise<HostRunScan> {
  const found = new Set<string>();
  const secrets = new Set<string>();
  const result = (dirs: number, incomplete?: string): HostRunScan => ({
    paths: [...found].sort(),
    secrets: [...secrets].sort(),
    dirs,
    ...(incomplete !== undefined ? { incomplete } : {}),
  });
  const rootSet = new Set(roots);
  let queue: Pending[] = roots.map((dir) => ({ dir, depth: 0 }));
  let dirs = 0;
  const uid = process.getuid?.();
  while (queue.length > 0) {
    const next: Pending[] = [];
    for (let i = 0; i < queue.length; i += BATCH) {
      const batch = queue.slice(i, i + BATCH);
      if (dirs + batch.length > bounds.maxDirs) {
        return result(
          dirs,
          `the job's directories hold over ${
            formatCount(bounds.maxDirs)
          } folders (dependencies left out)`,
        );
      }
      dirs += batch.length;
      const listed: Array<{
        dir: string;
        depth: number;
        peek?: boolean;
        entries: ListedEntry[];
        error?: string;
      }> = await Promise.all(batch.map(async ({ dir, depth, peek }) => {
        try {
          const known = options.list?.(dir);
          if (known) return { dir, depth, peek, entries: known };
          return { dir, depth, peek, entries: await listEntries(dir) };
        } catch (e) {
          const code = codeOf(e);
          if (code === "ENOENT" || code === "ENOTDIR") return { dir, depth, entries: [] };
          if (code === "ENAMEBYTES") {
            return { dir, depth, entries: [], error: (e as Error).message };
          }
          // A folder we cannot read but own could be opened up (chmod) by a delegate running
          // as us, and a `.git` in it written; one owned by someone else stays closed to it.
          const owner = await lstat(dir).then((s) => s.uid, () => undefined);
          if (uid !== undefined && owner !== uid) return { dir, depth, entries: [] };
          return { dir, depth, entries: [], error: `"${dir}" could not be read (${code})` };
        }
      }));
      for (const { dir, depth, peek, entries, error } of listed) {
        if (error) return result(dirs, error);
        for (const entry of entries) {
          const path = join(dir, entry.name);
          // `.envrc` is both: host-run, and read as a secret.
          if (!entry.isDirectory() && options.secret?.(entry.name)) secrets.add(path);
          if (isHostRunEntry(basename(dir), entry.name)) {
            const refused = unmountable(path);
            if (refused) return result(dirs, refused);
            if (!rootSet.has(dir)) found.add(path);
            continue;
          }
          if (peek || !entry.isDirectory() || rootSet.has(path)) continue;
          if (PRUNED.has(entry.name)) {
            // Its own entries are still looked at, not descended into: a project renamed to
            // `node_modules` (by an earlier turn's command) keeps its `.git` right there.
            if (PEEKED.has(entry.name)) next.push({ dir: path, depth: depth + 1, peek: true });
            continue;
          }
          if (depth + 1 > bounds.maxDepth) {
            return result(
              dirs,
              `the job's directories are nested deeper than ${bounds.maxDepth} ` +
                `folders ("${path}")`,
            );
          }
          next.push({ dir: path, depth: depth + 1 });
        }
      }
    }
    queue = next;
  }
  return result(dirs);
}
