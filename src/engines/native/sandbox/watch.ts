/**
 * The host-run paths a turn's sandbox protects inside the writable dirs, kept in place for the
 * turn: the nested ones are found once, at the turn's first command, and every protected path
 * is then watched; once one moved, was replaced or swapped for a link, Bash is refused for
 * the rest of the turn (the sandbox cannot follow it elsewhere).
 */
import { lstat, readdir, realpath } from "node:fs/promises";
import { dirname } from "node:path";
import { type HostRunScan, scanHostRun } from "../../../guard/host_run_scan.ts";
import type { ProtectedMounts } from "./mounts.ts";
import type { Sentinel } from "../../tree/journal.ts";
import { displayPath } from "../../../guard/real_paths.ts";
import { isInsideRoots } from "../../../platform/path_inside.ts";
import { hasRawBytes } from "../../../platform/file_names.ts";
import { rawLineage } from "../../../platform/raw_fs.ts";

/** What a turn's sandbox found and watches; see BwrapRunner.hostRun. */
export interface HostRunWatch {
  key: string;
  scan: HostRunScan;
  /** Protected path -> its signature when first mounted (see `signatures`). */
  watched?: Map<string, string>;
  /**
   * The refusal for the rest of the turn: a watched path moved or was replaced, or (set at
   * the turn's start, shell_watch.ts) the sandbox cannot hide or protect what it must.
   */
  moved?: string;
  /**
   * Where the turn has a change journal (turn_changes.ts): a sentinel over the watched paths,
   * so that they are looked at again only after something may have moved them (a few dozen
   * file system calls per path otherwise, each command).
   */
  sentinel?: (paths: readonly string[]) => Sentinel;
  watching?: Sentinel;
}
/**
 * What each path is, to notice one the sandbox could no longer find: the folder it is in
 * (inode and real path: a renamed folder is gone, a new one has another inode, one swapped for
 * a link to it has another real path) and the path itself (its type; for a folder or a link
 * also its inode, a link being replaceable inside the sandbox since only its target is
 * mounted). A regular file's own inode is left out: the sandbox keeps it from being renamed
 * or removed (EBUSY), and the user saving it on the host (write, then rename) must not stop
 * the delegate. An empty file or folder counts as absent, as in hostRunState: it may be
 * another sandbox's placeholder, which that sandbox removes when its command ends.
 */
async function signatures(paths: Iterable<string>): Promise<Map<string, string>> {
  const list = [...paths];
  // Looked up once per folder: a project's .git, .claude and CLAUDE.md share theirs.
  const folders = new Map<string, Promise<string>>();
  const folderOf = (parent: string) => {
    let found = folders.get(parent);
    if (!found) {
      found = Promise.all([lstat(parent), realpath(parent)])
        .then(([info, real]) => ` in ${info.dev}:${info.ino} ${real}`);
      folders.set(parent, found);
    }
    return found;
  };
  const identity = async (p: string) => {
    // A name that is not UTF-8 names nothing to these calls (all would be "gone", before and
    // after a `mv` of its folder): looked at by bytes, every folder above it too.
    if (hasRawBytes(p)) return rawLineage(p) ?? "gone";
    const where = await folderOf(dirname(p));
    const info = await lstat(p).catch(() => undefined);
    if (!info) return `absent${where}`;
    if (info.isFile()) return (info.size === 0 ? "absent" : "file") + where;
    if (info.isDirectory() && (await readdir(p)).length === 0) return `absent${where}`;
    const type = info.isDirectory() ? "dir" : info.isSymbolicLink() ? "link" : "other";
    return `${type} ${info.dev}:${info.ino}${where}`;
  };
  const sigs = await Promise.all(list.map((p) => identity(p).catch(() => "gone")));
  return new Map(list.map((p, i) => [p, sigs[i]!]));
}

/** The watched paths that are no longer what they were, sorted. */
export async function movedPaths(watch: HostRunWatch): Promise<string[]> {
  if (!watch.watched) return [];
  if (watch.watching && !watch.watching.dirty()) return [];
  const now = await signatures(watch.watched.keys());
  return [...now].filter(([p, sig]) => watch.watched!.get(p) !== sig).map(([p]) => p).sort();
}

/**
 * The host-run paths below the top of the writable dirs, found once per turn, at its first
 * command. Never scanned again within the turn: a scan leaves out `node_modules`, so a project
 * moved there (`mv proj node_modules`) would not be found, and its `.git` would be writable in
 * the next command. Instead every protected path is watched (see `watchMounts`), and Bash is
 * refused once one moved. A scan that stopped early is kept for the turn too: its commands
 * are refused.
 */
export async function nestedHostRun(
  runner: { hostRun?: HostRunWatch },
  writable: readonly string[],
) {
  const key = writable.join("\0");
  if (runner.hostRun?.key !== key) runner.hostRun = { key, scan: await scanHostRun(writable) };
  return runner.hostRun;
}

/**
 * Records, at the turn's first command, what every protected path the sandbox mounts over
 * inside the writable dirs is: its nested and top-level host-run paths, their link targets,
 * and the hidden credential stores and server dirs. A read-only mount keeps a path from being
 * renamed (EBUSY) but not its folder (`mv proj x`): the mount moves along inside that command,
 * but the next command's sandbox would find nothing to mount at the old path.
 */
export async function watchMounts(
  watch: HostRunWatch,
  mounts: ProtectedMounts,
  writable: readonly string[],
): Promise<void> {
  if (watch.watched) return;
  const paths = [
    ...watch.scan.paths,
    ...mounts.readOnly,
    ...mounts.masks.map((m) => m.path),
  ].filter((p) => isInsideRoots(writable, p) && !writable.includes(p));
  // The sentinel first: whatever happens while the signatures are taken makes it dirty.
  watch.watching = watch.sentinel?.([...new Set(paths)]);
  watch.watched = await signatures(new Set(paths));
}

/** The refusal once protected paths moved, for every later command of the turn. */
export function movedRefusal(moved: readonly string[], cwd: string): string {
  const shown = moved.slice(0, 5).map((p) => displayPath(p, cwd));
  const more = moved.length > 5 ? ` (+${moved.length - 5} more)` : "";
  return `Bash is refused for the rest of this turn: ${shown.join(", ")}${more} ` +
    `${moved.length === 1 ? "was" : "were"} moved, replaced or removed since the turn's ` +
    "first command (or a folder holding them was renamed). The sandbox keeps these paths " +
    "(git config and hooks, Claude Code settings, .envrc and other files the host runs " +
    "later, or hidden credential stores) read-only or hidden where they were, and cannot " +
    "follow them elsewhere. Read, Write and Edit still work. The user should check where " +
    "they went (and move them back) before running git or Claude Code there, then follow up " +
    "on the job or start a new one";
}

/** The refusal when the nested host-run paths could not all be found. */
export function scanRefusal(incomplete: string): string {
  return `Bash is refused for this turn: ${incomplete}, so the sandbox cannot find and make ` +
    "read-only every nested .git, .claude, .envrc or other file the host runs later. Start " +
    "the job with a narrower cwd (the project folder itself rather than a folder holding " +
    "many projects), or use Read, Write and Edit";
}
