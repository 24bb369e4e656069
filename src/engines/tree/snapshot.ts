/**
 * What a turn changed, by walking its directories where no change journal can be kept
 * (turn_changes.ts: the Node package, macOS, Windows, a root past the journal's limits), and
 * where a journal needs completing: at the turn's start a walk of the folders alone (no file
 * is looked at) finds the nested `.git` entries and credential stores the native sandbox must
 * protect; at its end `changedSince` lists every file whose change time falls in the turn.
 * Version control and dependency folders are walked too (a changed `.git/config` or a patched
 * file in `node_modules` runs on the host later), and so are credential stores: a sandbox hides
 * those that exist, but one a command creates (`lib/.ssh/payload.js`) or a new `.npmrc` is
 * the delegate's like any other file (issue 28). Only names and change times are read.
 *
 * Names that are not UTF-8 keep their bytes (platform/file_names.ts): Node's `readdir` with
 * string names puts U+FFFD in them, and that name opens nothing, so a folder holding one is
 * listed again by bytes. Deno's node:fs has no such listing: a name it cannot give is counted
 * in `unnamed`, and the caller says so on the `files:` line.
 *
 * The change time, not the size and modification time: a command can put those back
 * (`touch -r`), not the change time, which hard links share too. Bounded: past its limit a walk
 * stops and says so.
 */
import { lstatSync, readdirSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { TimeSlices } from "../../platform/time_slices.ts";
import { decodeFileName, diskPath, hasRawBytes } from "../../platform/file_names.ts";
import type { LinuxFs } from "../../platform/posix/inotify.ts";
import { quotePath } from "../../platform/plain_text.ts";
import process from "node:process";
import { isDeno } from "../../platform/runtime.ts";
import { hostRunPart } from "../../guard/protected_paths.ts";
import { isInside } from "../../platform/path_inside.ts";
import type { ListedEntry } from "../../guard/host_run_scan.ts";
import { isCredentialEntry, isMarkedName, storesThroughLink } from "./names.ts";

/** What a walk of the folders found below the roots. */
export interface NestedFound {
  /** `.git` entries below the top of a root (nested repositories, submodules). */
  nestedGit: string[];
  /** Credential stores (`.ssh`, `.aws`...) found anywhere below the roots. */
  credentials: string[];
  /** Where stores would be through entries that may be links (names.ts storesThroughLink). */
  throughLinks?: string[];
  /** True when the walk stopped at its limit: the lists may miss some. */
  capped: boolean;
  /** True when a folder could not be read: what it holds is not in the lists. */
  unread?: boolean;
}

/** A folder's entries, by name and whether each is a folder (undefined: not known). */
interface Listing {
  entries: Array<{ name: string; dir: boolean | undefined }>;
  /** Names the runtime could not give (not UTF-8, where only decoded names can be had). */
  unnamed: number;
  /** True when names were read as bytes: one may hold a byte that is not UTF-8. */
  raw?: boolean;
}

/** U+FFFD: what a runtime puts in a name in place of bytes that are not UTF-8. */
const REPLACED = "\uFFFD";

/**
 * A folder's entries; undefined when unreadable. Read at once, not through promises: a walk
 * makes a call per file, and each promise cost Deno 30 µs more (3.6 s instead of about 1 s
 * for 100,000 files, measured); the walks yield to the server between folders instead (see
 * TimeSlices).
 */
function entriesOf(dir: string, fast?: Pick<LinuxFs, "listDir">): Listing | undefined {
  if (fast) {
    const listed = fast.listDir(dir);
    if (typeof listed === "number") return undefined;
    const entries = listed.map((e) => ({
      name: e.name,
      dir: e.kind === "unknown" ? undefined : e.kind === "dir",
    }));
    return { entries, unnamed: 0 };
  }
  try {
    const listed = readdirSync(diskPath(dir), { withFileTypes: true });
    if (!listed.some((e) => e.name.includes(REPLACED))) {
      return { entries: listed.map((e) => ({ name: e.name, dir: e.isDirectory() })), unnamed: 0 };
    }
    return byBytes(dir);
  } catch (e) {
    // Where the file system gives no entry's type, Node's typed listing looks each entry up and
    // throws for the whole folder when one is gone by then (a delegate can make that happen at
    // will): a folder still there is listed by name, each entry looked up on its own.
    if ((e as { code?: string }).code !== "ENOENT") return undefined;
    try {
      return isFolder(dir) ? byBytes(dir) : undefined;
    } catch {
      return undefined;
    }
  }
}

/**
 * A folder holding a name that is not UTF-8, listed again by the names' bytes (each one's kind
 * then looked up). A name that still holds U+FFFD and names nothing was decoded by the runtime
 * before we got it (Deno): counted, not guessed at.
 */
function byBytes(dir: string): Listing {
  const out: Listing = { entries: [], unnamed: 0, raw: true };
  for (const bytes of readdirSync(diskPath(dir), { encoding: "buffer" })) {
    const name = decodeFileName(bytes);
    let info;
    try {
      info = lstatSync(diskPath(join(dir, name)));
    } catch {
      if (name.includes(REPLACED)) out.unnamed++;
      continue; // otherwise gone since the listing
    }
    out.entries.push({ name, dir: info.isDirectory() });
  }
  return out;
}

function isFolder(path: string): boolean {
  try {
    return lstatSync(diskPath(path)).isDirectory();
  } catch {
    return false;
  }
}

/**
 * A folder that is there and ours (where users are known): one we cannot read but own, a
 * delegate running as us could open (chmod); one of another user's stays closed to it, as the
 * host-run scan (guard/host_run_scan.ts) and the journal's blind folders judge it.
 */
function isOwnFolder(path: string): boolean {
  try {
    const info = lstatSync(diskPath(path));
    const uid = process.getuid?.();
    return info.isDirectory() && (uid === undefined || info.uid === uid);
  } catch {
    return false;
  }
}

/**
 * The change time of `path` (ms), or undefined when it is gone. `raw`: the path may hold a byte
 * that is not UTF-8 (then its bytes are asked for; looking for one in every path cost Node 50 ms
 * a walk at 100,000 files, measured).
 */
function changeTime(path: string, raw: boolean): number | undefined {
  try {
    return lstatSync(raw ? diskPath(path) : path).ctimeMs;
  } catch {
    return undefined;
  }
}

/**
 * `dir`'s entry `name`: what `join` gives, without its normalising, which cost Node 0.1 s a
 * turn at 100,000 files (measured). The walks start at real paths and names from a listing hold
 * no `/`, so there is nothing to normalise; elsewhere (Windows' separators) `join` does it.
 */
const childPath = sep === "/"
  ? (dir: string, name: string) => dir.endsWith("/") ? `${dir}${name}` : `${dir}/${name}`
  : join;

const asEntry = (name: string, dir: boolean): ListedEntry => ({ name, isDirectory: () => dir });

/**
 * The nested `.git` entries and credential stores below `roots`, at any depth (dependency
 * folders too), from a walk of the folders that looks at no file; at most `limit` entries.
 *
 * With `listed`, each folder read whole is kept there as the identity scan lists it from a
 * journal (view.ts's listNode): its folders and its marked names, which are all the scan acts
 * on; so a turn without a journal reads its folders once instead of twice (the scan read them
 * again: 0.4 s of a turn at 100,000 files under Node, measured). A folder that could not be
 * read, or holds a name this runtime could not give, or where the walk stopped, is left out:
 * the scan reads it itself, and says what it could not.
 */
export async function nestedWalk(
  roots: readonly string[],
  limit: number,
  listed?: Map<string, ListedEntry[]>,
  /** Listing through libc (as changedSince): every name by its bytes, UTF-8 or not. */
  fast?: Pick<LinuxFs, "listDir">,
): Promise<NestedFound> {
  const rootSet = new Set(roots);
  const nestedGit: string[] = [];
  const credentials: string[] = [];
  const throughLinks: string[] = [];
  const stack = [...roots];
  let seen = 0;
  let unread = false;
  const pause = new TimeSlices();
  while (stack.length > 0) {
    await pause.maybe();
    const dir = stack.pop()!;
    const listing = entriesOf(dir, fast);
    // Gone since it was listed is nothing to hide; there, ours and unreadable, it may hold a
    // store a command opens up. So may a folder holding a name this runtime could not give (not
    // UTF-8, see entriesOf): a command names it by its bytes.
    if ((!listing && isOwnFolder(dir)) || (listing?.unnamed ?? 0) > 0) unread = true;
    const kept: ListedEntry[] = [];
    for (const entry of listing?.entries ?? []) {
      if (++seen > limit) {
        return {
          nestedGit: nestedGit.sort(),
          credentials: credentials.sort(),
          throughLinks: throughLinks.sort(),
          capped: true,
          ...(unread ? { unread } : {}),
        };
      }
      const path = childPath(dir, entry.name);
      const isDir = entry.dir ?? isFolder(path);
      if (isDir || isMarkedName(entry.name)) kept.push(asEntry(entry.name, isDir));
      if (isCredentialEntry(dir, entry.name)) {
        // Not walked further: a sandbox hides it whole, what is below it too.
        credentials.push(path);
        continue;
      }
      if (entry.name === ".git" && !rootSet.has(dir)) nestedGit.push(path);
      if (isDir) stack.push(path);
      else throughLinks.push(...storesThroughLink(dir, entry.name));
    }
    if (listing && listing.unnamed === 0) listed?.set(dir, kept);
  }
  return {
    nestedGit: nestedGit.sort(),
    credentials: credentials.sort(),
    throughLinks: throughLinks.sort(),
    capped: false,
    ...(unread ? { unread } : {}),
  };
}

/** Clock ticks between a change and the change time the kernel gives it (coarse clocks). */
const CTIME_SLACK_MS = 20;

/**
 * Now, for a later changedSince: on the clock the kernel stamps change times with, where it
 * can be read (see LinuxFs.coarseNowMs); this process's clock elsewhere, where CTIME_SLACK_MS
 * must cover the difference. Date.now() alone runs ahead of the change times by as long as
 * the kernel's timekeeping is held up, and the files a turn changed at its start would be
 * missed.
 */
export function changeClockMs(fs?: Pick<LinuxFs, "coarseNowMs">): number {
  return fs?.coarseNowMs?.() ?? Date.now();
}

/** What a walk for changed files found. */
export interface ChangedFound {
  /** Files changed (absolute, sorted). */
  files: string[];
  /** True when the walk stopped at its limit: `files` may miss some. */
  capped: boolean;
  /** Folders holding names this runtime could not give (see entriesOf), with how many. */
  unnamed: Array<{ dir: string; count: number }>;
}

/**
 * Files (not folders) below `roots` whose change time is `sinceMs` (the turn's start, from
 * changeClockMs) or later: what a turn changed, credential stores included (by name and
 * change time only). The change time cannot be set back by a command (utimes sets only the
 * access and modification times). Walks at most `limit` entries; `capped` when it stopped
 * there.
 */
export async function changedSince(
  roots: readonly string[],
  sinceMs: number,
  limit: number,
  /**
   * Listing and change times through libc (platform/posix/inotify.ts), where the runtime's
   * own stat has the change time only to the second (Deno), and is slower.
   */
  fast?: Pick<LinuxFs, "listDir" | "changeTimeMs">,
): Promise<ChangedFound> {
  const files: string[] = [];
  const unnamed: ChangedFound["unnamed"] = [];
  const stack = [...roots];
  let seen = 0;
  const pause = new TimeSlices();
  // Deno's own stat gives the change time to the second: compared to the second, a file
  // changed just before the turn may count, none changed in it is missed.
  const threshold = fast || !isDeno
    ? sinceMs - CTIME_SLACK_MS
    : Math.floor((sinceMs - CTIME_SLACK_MS) / 1000) * 1000;
  while (stack.length > 0) {
    const dir = stack.pop()!;
    const statted: string[] = [];
    const listing = entriesOf(dir, fast);
    if (listing?.unnamed) unnamed.push({ dir, count: listing.unnamed });
    // Names read as text hold no byte that is not UTF-8 (the runtime puts U+FFFD there).
    const raw = listing?.raw === true || hasRawBytes(dir);
    for (const entry of listing?.entries ?? []) {
      if (++seen > limit) return { files: files.sort(), capped: true, unnamed };
      const path = childPath(dir, entry.name);
      if (entry.dir ?? isFolder(path)) stack.push(path);
      else statted.push(path);
    }
    for (const path of statted) {
      const ctime = fast ? fast.changeTimeMs(path) : changeTime(path, raw);
      if (ctime !== undefined && ctime >= threshold) files.push(path);
    }
    await pause.maybe();
  }
  return { files: files.sort(), capped: false, unnamed };
}

/** Planted paths named in the warning; the rest are counted. */
const PLANTED_SHOWN = 5;

/**
 * The warning for files created or changed at a host-run path at any depth (`proj/.envrc`,
 * `sub/.git/hooks/post-checkout`), or none. The sandbox keeps the existing ones read-only, but
 * one a command creates where none existed (a new `.envrc` in a subfolder) cannot be mounted
 * beforehand, and git, Claude Code, direnv or an editor would run it on the host later: the
 * orchestrator is told, whatever else the list of changed files shows. Paths are shown
 * relative to the first root (cwd).
 */
export function plantedWarnings(changed: readonly string[], roots: readonly string[]): string[] {
  const planted = changed.filter((path) =>
    roots.some((root) => isInside(root, path) && hostRunPart(relative(root, path)) !== undefined)
  );
  if (planted.length === 0) return [];
  const cwd = roots[0]!;
  const shown = planted.slice(0, PLANTED_SHOWN).map((path) =>
    quotePath(isInside(cwd, path) ? relative(cwd, path).split(sep).join("/") : path)
  );
  const more = planted.length > PLANTED_SHOWN ? `, +${planted.length - PLANTED_SHOWN} more` : "";
  return [
    `planted: ${shown.join(", ")}${more} (files that git, coding agents, package managers, ` +
    "direnv or editors run or read on the host, outside any sandbox: check them before working " +
    "in that folder)",
  ];
}
