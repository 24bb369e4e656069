/**
 * The protected files of a delegate's directories by what they are (device and inode), not
 * by the names they go by, collected at the start of a turn: a write of `tools/claude/x` when
 * `.claude -> tools/claude`, of `AGENTS.md` when `CLAUDE.md -> AGENTS.md` or when the two are
 * hard links of one file, or a read of `notes.txt` hard-linked to `.env`, passes every rule
 * about names and is caught here. Both engines use it: the native file tools compare the file
 * or directory they opened with these sets, and the sandboxes hide or protect the extra paths
 * it lists (link targets, other hard links) as they do the named ones.
 *
 * Found: every host-run path inside the roots (at the top and nested, by host_run_scan.ts's
 * bounded walk), the real targets of links among them, what lies inside host-run directories
 * that has other hard links or is a link leading elsewhere in the roots, every secret file by
 * name (protected_paths.ts's patterns, less the user's `allowSecretFiles`) with its link
 * target; and, only when one of these files has other hard links, their other names in the
 * roots. Bounded like the scan; whatever stops it early is said in `incomplete` (the sets may
 * miss a file: callers fail closed) or `pathsIncomplete` (the path lists may miss a hard link:
 * a sandbox that protects by path must not run).
 */
import type { Stats } from "node:fs";
import { lstat, readdir, readlink, realpath, stat } from "node:fs/promises";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { type HostRunScan, SCAN_BOUNDS, type ScanBounds, scanHostRun } from "./host_run_scan.ts";
import {
  CREDENTIAL_PATHS,
  HOST_RUN_DIRS,
  HOST_RUN_PATHS,
  isSecretFileName,
} from "./protected_paths.ts";

/** A file's identity as a map key: `dev:ino`. */
export function identityKey(s: { dev: number; ino: number }): string {
  return `${s.dev}:${s.ino}`;
}

/** True when `path` is one of `roots` or lies below one (not by string prefix). */
export function insideAny(roots: readonly string[], path: string): boolean {
  return roots.some((root) => {
    const rel = relative(root, path);
    return rel === "" || (!isAbsolute(rel) && rel !== ".." && !rel.startsWith(`..${sep}`));
  });
}

export interface GuardIdentities {
  /** The roots the sets cover (real paths). */
  roots: readonly string[];
  /** `dev:ino` of host-run files and directories -> the host-run path (absolute) they are. */
  hostRun: ReadonlyMap<string, string>;
  /** `dev:ino` of secret files -> the secret file (absolute) whose content they hold. */
  secret: ReadonlyMap<string, string>;
  /**
   * Paths inside the roots that are host-run without a host-run name: real targets of
   * host-run links (also missing ones, which a write would create: see `hostRunMissing`),
   * links' targets from inside host-run directories, other hard links of host-run files.
   * Absolute, sorted.
   */
  hostRunPaths: string[];
  /** The host-run or secret path each of hostRunPaths and secretPaths is another name of. */
  owners: ReadonlyMap<string, string>;
  /** The missing ones among hostRunPaths, with what they would be (a sandbox's placeholder). */
  hostRunMissing: Array<{ path: string; kind: "file" | "dir" }>;
  /**
   * Regular files inside the roots that hold a secret: secret files by name, real targets of
   * secret-named links, their other hard links. Absolute real paths, sorted.
   */
  secretPaths: string[];
  /** The nested host-run paths (host_run_scan.ts), for a sandbox's read-only mounts. */
  scan: HostRunScan;
  /** Why the identity sets may miss a protected file: callers refuse what they cannot check. */
  incomplete?: string;
  /** Why the path lists may miss one (set whenever `incomplete` is). */
  pathsIncomplete?: string;
}

export interface GuardOptions {
  /** Secret-looking file names the user lets delegates read (`allowSecretFiles`). */
  allowSecretFiles?: readonly string[];
  bounds?: ScanBounds;
  /** Entries looked at inside host-run directories (default HOST_RUN_ENTRIES). */
  maxHostRunEntries?: number;
  /** Files looked at for other hard links (default LINK_SEARCH_FILES). */
  maxLinkSearchFiles?: number;
}

/**
 * Entries read inside host-run directories. Git's object store, refs and logs are left out
 * (content the host never runs, and the bulk of a `.git`), which leaves a few dozen entries
 * in a repository; editors' and Claude Code's folders hold tens to hundreds.
 */
export const HOST_RUN_ENTRIES = 20_000;
/**
 * Files lstat'ed when looking for other hard links of a protected file: only done when one
 * has them (a link count above 1), which projects rarely do.
 */
export const LINK_SEARCH_FILES = 100_000;

/** Inside a `.git`: folders with nothing the host runs, and most of the entries. */
const GIT_BULK = new Set(["objects", "lfs", "refs", "logs", "rr-cache"]);
/**
 * Claude Code's worktrees, `.claude/worktrees/<name>` (`claude --worktree`): checkouts of the
 * project, thousands of files and nothing of `.claude`'s own.
 */
const CLAUDE_WORKTREES = "worktrees";

/** Never walked for other hard links: dependencies, and credential stores (hidden whole). */
const PRUNED = new Set(["node_modules", ...CREDENTIAL_PATHS.filter((p) => !p.includes("/"))]);

const codeOf = (e: unknown) => (e as { code?: string }).code;
const missing = (e: unknown) => codeOf(e) === "ENOENT" || codeOf(e) === "ENOTDIR";

class Collector {
  readonly hostRun = new Map<string, string>();
  readonly secret = new Map<string, string>();
  readonly hostRunPaths = new Set<string>();
  readonly owners = new Map<string, string>();
  readonly hostRunMissing = new Map<string, "file" | "dir">();
  readonly secretPaths = new Set<string>();
  /** Protected files with other hard links: `dev:ino` -> which sets (`.envrc` is in both). */
  readonly linked = new Map<string, Set<"hostRun" | "secret">>();
  /** Directories already walked inside host-run ones (by identity: links may cycle). */
  readonly walked = new Set<string>();
  entries = 0;
  incomplete?: string;

  constructor(
    readonly roots: readonly string[],
    readonly allow: readonly string[],
    readonly maxEntries: number,
  ) {}

  link(s: Stats, set: "hostRun" | "secret"): void {
    const key = identityKey(s);
    this.linked.set(key, (this.linked.get(key) ?? new Set()).add(set));
  }

  fail(why: string): void {
    this.incomplete ??= why;
  }

  /** lstat, undefined when the path is gone; another error makes the sets incomplete. */
  async look(path: string, follow = false): Promise<Stats | undefined> {
    try {
      return await (follow ? stat(path) : lstat(path));
    } catch (e) {
      if (!missing(e) && codeOf(e) !== "ELOOP") {
        this.fail(`"${path}" could not be looked at (${codeOf(e) ?? (e as Error).message})`);
      }
      return undefined;
    }
  }

  /** Where a link leads: its real path, or (dangling) the path it names, lexically. */
  async target(link: string): Promise<{ real: string; exists: boolean } | undefined> {
    try {
      return { real: await realpath(link), exists: true };
    } catch (e) {
      if (!missing(e)) return undefined;
    }
    const to = await readlink(link).catch(() => undefined);
    return to === undefined ? undefined : { real: resolve(dirname(link), to), exists: false };
  }

  /** A host-run path (a host-run name, or what one leads to); `kind` for a missing target. */
  async hostRunPath(path: string, owner: string, kind: "file" | "dir"): Promise<void> {
    const info = await this.look(path);
    if (!info) return;
    let real = path;
    if (info.isSymbolicLink()) {
      const to = await this.target(path);
      if (!to || !insideAny(this.roots, to.real)) {
        // Outside every root: no file tool reaches it, no sandbox mounts it. Its identity
        // still counts, for a root that is itself such a target.
        const s = await this.look(path, true);
        if (s) this.hostRun.set(identityKey(s), owner);
        return;
      }
      real = to.real;
      if (real !== owner) this.hostRunPaths.add(real);
      if (!this.owners.has(real)) this.owners.set(real, owner);
      if (!to.exists) {
        this.hostRunMissing.set(real, kind);
        return;
      }
    }
    const s = await this.look(real, true);
    if (!s) return;
    this.hostRun.set(identityKey(s), owner);
    if (s.isFile() && s.nlink > 1) this.link(s, "hostRun");
    if (s.isDirectory()) await this.hostRunDir(real, owner);
  }

  /** Inside a host-run directory: hard-linked files, links elsewhere, secret files. */
  async hostRunDir(dir: string, owner: string): Promise<void> {
    const name = basename(owner);
    // Folders with nothing the host runs: git's bulk at any depth (also in `modules/x`), and
    // `.claude/worktrees` at the top of `.claude`.
    const skipped = (at: string, entry: string) =>
      (name === ".git" && GIT_BULK.has(entry)) ||
      (name === ".claude" && at === dir && entry === CLAUDE_WORKTREES);
    const pending = [dir];
    while (pending.length > 0) {
      const at = pending.pop()!;
      const self = await this.look(at, true);
      if (!self || this.walked.has(identityKey(self))) continue;
      this.walked.add(identityKey(self));
      let names;
      try {
        names = await readdir(at, { withFileTypes: true });
      } catch (e) {
        if (!missing(e)) this.fail(`"${at}" could not be read (${codeOf(e)})`);
        continue;
      }
      for (const entry of names) {
        if (++this.entries > this.maxEntries) {
          return this.fail(
            `the host-run folders (.git, .claude...) hold over ` +
              `${this.maxEntries.toLocaleString("en-US")} entries`,
          );
        }
        const path = join(at, entry.name);
        if (entry.isDirectory()) {
          if (!skipped(at, entry.name)) pending.push(path);
          continue;
        }
        if (isSecretFileName(entry.name, this.allow)) await this.secretFile(path);
        if (entry.isSymbolicLink()) {
          // `.claude/settings.json -> ../config/claude.json`: the target is what is run.
          await this.hostRunPath(path, owner, "file");
        } else if (entry.isFile()) {
          const s = await this.look(path);
          if (s && s.nlink > 1) {
            this.hostRun.set(identityKey(s), owner);
            this.link(s, "hostRun");
          }
        }
      }
    }
  }

  /** A file with a secret's name: its identity, and its real path when it lies in a root. */
  async secretFile(path: string): Promise<void> {
    const info = await this.look(path);
    if (!info) return;
    let real = path;
    if (info.isSymbolicLink()) {
      const to = await this.target(path);
      if (!to?.exists) return; // dangling: nothing to read yet
      real = to.real;
    }
    const s = await this.look(real, true);
    if (!s?.isFile()) return;
    this.secret.set(identityKey(s), path);
    if (insideAny(this.roots, real)) this.secretPaths.add(real);
    if (!this.owners.has(real)) this.owners.set(real, path);
    if (s.nlink > 1) this.link(s, "secret");
  }

  /**
   * The other names, inside the roots, of protected files that have some: walks every folder
   * but dependencies, credential stores and git's object store, and looks at every file.
   */
  async otherLinks(maxFiles: number): Promise<string | undefined> {
    const pending = [...this.roots];
    const seen = new Set<string>();
    let files = 0;
    while (pending.length > 0) {
      const dir = pending.pop()!;
      if (seen.has(dir)) continue;
      seen.add(dir);
      let names;
      try {
        names = await readdir(dir, { withFileTypes: true });
      } catch (e) {
        if (missing(e)) continue;
        return `"${dir}" could not be read (${codeOf(e)})`;
      }
      const candidates: string[] = [];
      for (const entry of names) {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) {
          const gitBulk = GIT_BULK.has(entry.name) && dir.split(/[\\/]/).includes(".git");
          if (!PRUNED.has(entry.name) && !gitBulk) pending.push(path);
        } else if (entry.isFile()) candidates.push(path);
      }
      files += candidates.length;
      if (files > maxFiles) {
        return `the job's directories hold over ${maxFiles.toLocaleString("en-US")} files ` +
          "to look through for other hard links of a protected file";
      }
      const stats = await Promise.all(candidates.map((p) => lstat(p).catch(() => undefined)));
      stats.forEach((s, i) => {
        const sets = s && s.nlink > 1 ? this.linked.get(identityKey(s)) : undefined;
        if (!s || !sets) return;
        const path = candidates[i]!;
        if (sets.has("hostRun")) this.hostRunPaths.add(path);
        if (sets.has("secret")) this.secretPaths.add(path);
        const owner = this.hostRun.get(identityKey(s)) ?? this.secret.get(identityKey(s));
        if (owner !== undefined && !this.owners.has(path)) this.owners.set(path, owner);
      });
    }
    return undefined;
  }
}

/**
 * The identities and extra paths protecting `roots` (real paths of a turn's working
 * directory and add_dirs). Never throws: what it could not look at is said in `incomplete`.
 */
export async function collectGuardIdentities(
  roots: readonly string[],
  options: GuardOptions = {},
): Promise<GuardIdentities> {
  const allow = options.allowSecretFiles ?? [];
  const c = new Collector(roots, allow, options.maxHostRunEntries ?? HOST_RUN_ENTRIES);
  const scan = await scanHostRun(roots, options.bounds ?? SCAN_BOUNDS, {
    secret: (name) => isSecretFileName(name, allow),
  });
  if (scan.incomplete) c.fail(scan.incomplete);
  const kindOf = (path: string) => HOST_RUN_DIRS.has(basename(path)) ? "dir" : "file";
  const top = roots.flatMap((root) => HOST_RUN_PATHS.map((name) => join(root, name)));
  for (const path of [...top, ...scan.paths]) await c.hostRunPath(path, path, kindOf(path));
  for (const path of scan.secrets) await c.secretFile(path);
  let pathsIncomplete = c.incomplete;
  if (!pathsIncomplete && c.linked.size > 0) {
    pathsIncomplete = await c.otherLinks(options.maxLinkSearchFiles ?? LINK_SEARCH_FILES);
  }
  // What a host-run name protects already (a hard link's other name inside `.vscode`).
  const named = [...top, ...scan.paths];
  for (const path of [...c.hostRunPaths]) {
    if (insideAny(named, path)) c.hostRunPaths.delete(path);
  }
  return {
    roots,
    hostRun: c.hostRun,
    secret: c.secret,
    hostRunPaths: [...c.hostRunPaths].sort(),
    owners: c.owners,
    hostRunMissing: [...c.hostRunMissing].map(([path, kind]) => ({ path, kind })),
    secretPaths: [...c.secretPaths].sort(),
    scan,
    ...(c.incomplete ? { incomplete: c.incomplete } : {}),
    ...(pathsIncomplete ? { pathsIncomplete } : {}),
  };
}
