/**
 * Which files a job created or changed, by walking its directories: where no change journal
 * can be kept (turn_changes.ts), the server compares them before and after the turn rather
 * than trusting the model's account; and `changedSince` finds what changed after a journal
 * stopped in the middle of a turn. Version
 * control and dependency folders are walked too (a changed `.git/config` or a patched file
 * in `node_modules` runs on the host later), after the rest and with a budget of their own,
 * so a large `node_modules` cannot crowd out the project's own files. Bounded: a huge tree
 * costs a capped walk and says it was capped.
 */
import { lstat, readdir } from "node:fs/promises";
import { join, relative, sep } from "node:path";
import type { LinuxFs } from "../platform/posix/inotify.ts";
import { quotePath } from "../platform/plain_text.ts";
import { CREDENTIAL_PATHS, hostRunPart } from "./protected_paths.ts";
import { isInside } from "./native/tools/real_paths.ts";

/** Entries looked at in the project's own files; beyond this the comparison is partial. */
const MAX_ENTRIES = 20_000;
/** Entries looked at inside version control and dependency folders. */
const MAX_BULK_ENTRIES = 200_000;
/** Folders walked after everything else, with their own budget. */
const BULK = new Set([".git", "node_modules", ".hg", ".svn", "__pycache__", ".venv", "target"]);
/** Credential names that are a single path part (`.ssh`, not `.config/gcloud`). */
const CREDENTIAL_NAMES = new Set(CREDENTIAL_PATHS.filter((p) => !p.includes("/")));

export interface Snapshot {
  files: Map<string, string>;
  /** Where the walk stopped early, when it did: the comparison is partial there. */
  capped: false | "project" | "bulk";
  /** `.git` entries below the top of a root (nested repositories, submodules). */
  nestedGit: string[];
  /** Credential stores (`.ssh`, `.aws`...) found anywhere below the roots. */
  credentials: string[];
}

interface Walk {
  files: Map<string, string>;
  seen: number;
  limit: number;
  nestedGit: string[];
  credentials: string[];
  /** Folders set aside for the second pass (only filled by the first). */
  bulk?: string[];
}

/** Walks `start` depth-first; false when the budget ran out. */
async function walk(starts: readonly string[], roots: ReadonlySet<string>, w: Walk) {
  const stack = [...starts];
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
      if (++w.seen > w.limit) {
        capped = true;
        break;
      }
      const path = join(dir, entry.name);
      if (CREDENTIAL_NAMES.has(entry.name)) {
        // Never read into: its content is not the job's business, and it stays hidden.
        w.credentials.push(path);
        continue;
      }
      if (entry.name === ".git" && !roots.has(dir)) w.nestedGit.push(path);
      if (entry.isDirectory()) {
        if (w.bulk && BULK.has(entry.name)) w.bulk.push(path);
        else stack.push(path);
      } else if (entry.isFile() || entry.isSymbolicLink()) {
        statted.push(path);
      }
    }
    // One directory's files at a time, concurrently: a stat per await is slow on big trees.
    const stats = await Promise.all(statted.map((path) => lstat(path).catch(() => undefined)));
    // The change time too: a command can put a file's size and mtime back (`touch -r`), not
    // its ctime, nor its inode when it replaced the file.
    stats.forEach((st, i) => {
      if (st) w.files.set(statted[i]!, `${st.size}:${st.mtimeMs}:${st.ctimeMs}:${st.ino}`);
    });
    if (capped) return false;
  }
  return true;
}

export async function snapshot(roots: readonly string[]): Promise<Snapshot> {
  const files = new Map<string, string>();
  const rootSet = new Set(roots);
  const project: Walk = {
    files,
    seen: 0,
    limit: MAX_ENTRIES,
    nestedGit: [],
    credentials: [],
    bulk: [],
  };
  const complete = await walk(roots, rootSet, project);
  const bulk: Walk = {
    files,
    seen: 0,
    limit: MAX_BULK_ENTRIES,
    nestedGit: project.nestedGit,
    credentials: project.credentials,
  };
  // The bulk folders found before a cap are still walked: their changes matter most.
  const bulkComplete = await walk(project.bulk!, rootSet, bulk);
  return {
    files,
    capped: !complete ? "project" : !bulkComplete ? "bulk" : false,
    nestedGit: project.nestedGit.sort(),
    credentials: project.credentials.sort(),
  };
}

/** Clock ticks between a change and the change time the kernel gives it (coarse clocks). */
const CTIME_SLACK_MS = 20;

/**
 * Files (not folders) below `roots` whose change time is `sinceMs` (the turn's start, this
 * process's clock) or later: what a turn changed when nothing was recorded before it. The
 * change time cannot be set back by a command (utimes sets only the access and modification
 * times). Walks at most `limit` entries; `capped` when it stopped there.
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
): Promise<{ files: string[]; capped: boolean }> {
  const files: string[] = [];
  const stack = [...roots];
  let seen = 0;
  let slice = performance.now();
  while (stack.length > 0) {
    const dir = stack.pop()!;
    const entries = fast ? fast.listDir(dir) : await readdir(dir, { withFileTypes: true }).then(
      (list) => list.map((e) => ({ name: e.name, kind: e.isDirectory() ? "dir" : "file" })),
      () => -1,
    );
    if (typeof entries === "number") continue;
    const statted: string[] = [];
    for (const entry of entries) {
      if (++seen > limit) return { files: files.sort(), capped: true };
      if (CREDENTIAL_NAMES.has(entry.name)) continue;
      const path = join(dir, entry.name);
      const isDir = entry.kind === "unknown"
        ? await lstat(path).then((s) => s.isDirectory(), () => false)
        : entry.kind === "dir";
      if (isDir) stack.push(path);
      else statted.push(path);
    }
    const times = fast ? statted.map((p) => fast.changeTimeMs(p)) : await Promise.all(
      statted.map((path) => lstat(path).then((s) => s.ctimeMs, () => undefined)),
    );
    times.forEach((ctime, i) => {
      if (ctime !== undefined && ctime >= sinceMs - CTIME_SLACK_MS) files.push(statted[i]!);
    });
    // A walk through libc does not yield by itself: the server must keep answering.
    if (performance.now() - slice > 20) {
      await new Promise((resolve) => setTimeout(resolve, 0));
      slice = performance.now();
    }
  }
  return { files: files.sort(), capped: false };
}

/**
 * Paths created or changed between two snapshots, sorted. Deleted files are left out. When
 * either walk was capped, only paths both walks saw count: a shifted cut-off would otherwise
 * report untouched files as new.
 */
export function changedBetween(before: Snapshot, after: Snapshot): string[] {
  const partial = before.capped !== false || after.capped !== false;
  const out: string[] = [];
  for (const [path, sig] of after.files) {
    const old = before.files.get(path);
    if (old === undefined ? !partial : old !== sig) out.push(path);
  }
  return out.sort();
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
    `planted: ${shown.join(", ")}${more} (files that git, Claude Code, direnv or editors run ` +
    "on the host, outside any sandbox: check them before working in that folder)",
  ];
}
