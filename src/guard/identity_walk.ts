/**
 * The walk behind identities.ts: from the host-run and secret paths found by name, to
 * what they are (device and inode), where their links lead, what lies inside host-run folders,
 * and, only when one of them has other hard links, their other names in the roots. Bounded;
 * whatever stops it or cannot be looked at is kept in `incomplete`. The host-run and secret
 * paths are looked at with synchronous calls, in time slices (platform/time_slices.ts): through
 * node:fs/promises each call cost Deno about half a millisecond, and 100 nested projects' 500
 * host-run paths 0.5-0.65 s of every turn (issue 34).
 */
import { readdirSync, readlinkSync, realpathSync } from "node:fs";
import { lstat, readdir } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";
import { pathFacts, type StatFacts } from "../platform/path_facts.ts";
import { isInsideRoots } from "../platform/path_inside.ts";
import { TimeSlices } from "../platform/time_slices.ts";
import { CREDENTIAL_PATHS, isSecretFileName } from "./protected_paths.ts";
import { formatCount } from "../platform/count_text.ts";

/** A file's identity as a map key: `dev:ino`. */
export function identityKey(s: { dev: number; ino: number }): string {
  return `${s.dev}:${s.ino}`;
}

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

/** What one collection (collectGuardIdentities) has found so far, and how it looks further. */
export class Collector {
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
  readonly #slices = new TimeSlices();

  constructor(
    readonly roots: readonly string[],
    readonly allow: readonly string[],
    readonly maxEntries: number,
  ) {}

  link(s: StatFacts, set: "hostRun" | "secret"): void {
    const key = identityKey(s);
    this.linked.set(key, (this.linked.get(key) ?? new Set()).add(set));
  }

  fail(why: string): void {
    this.incomplete ??= why;
  }

  /** lstat, undefined when the path is gone; another error makes the sets incomplete. */
  async look(path: string, follow = false): Promise<StatFacts | undefined> {
    await this.#slices.maybe();
    try {
      return pathFacts(path, follow);
    } catch (e) {
      if (!missing(e) && codeOf(e) !== "ELOOP") {
        this.fail(`"${path}" could not be looked at (${codeOf(e) ?? (e as Error).message})`);
      }
      return undefined;
    }
  }

  /** Where a link leads: its real path, or (dangling) the path it names, lexically. */
  target(link: string): { real: string; exists: boolean } | undefined {
    try {
      return { real: realpathSync(link), exists: true };
    } catch (e) {
      if (!missing(e)) return undefined;
    }
    let to: string;
    try {
      to = readlinkSync(link);
    } catch {
      return undefined;
    }
    return { real: resolve(dirname(link), to), exists: false };
  }

  /** A host-run path (a host-run name, or what one leads to); `kind` for a missing target. */
  async hostRunPath(path: string, owner: string, kind: "file" | "dir"): Promise<void> {
    const info = await this.look(path);
    if (!info) return;
    let real = path;
    if (info.kind === "link") {
      const to = this.target(path);
      if (!to || !isInsideRoots(this.roots, to.real)) {
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
    if (s.kind === "file" && s.nlink > 1) this.link(s, "hostRun");
    if (s.kind === "dir") await this.hostRunDir(real, owner);
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
        names = readdirSync(at, { withFileTypes: true });
      } catch (e) {
        if (!missing(e)) this.fail(`"${at}" could not be read (${codeOf(e)})`);
        continue;
      }
      for (const entry of names) {
        if (++this.entries > this.maxEntries) {
          return this.fail(
            `the host-run folders (.git, .claude...) hold over ` +
              `${formatCount(this.maxEntries)} entries`,
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
    if (info.kind === "link") {
      const to = this.target(path);
      if (!to?.exists) return; // dangling: nothing to read yet
      real = to.real;
    }
    const s = await this.look(real, true);
    if (s?.kind !== "file") return;
    this.secret.set(identityKey(s), path);
    if (isInsideRoots(this.roots, real)) this.secretPaths.add(real);
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
        return `the job's directories hold over ${formatCount(maxFiles)} files ` +
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
