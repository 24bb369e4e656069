/**
 * A change journal of one delegate directory (a root): an inotify watch on every folder below
 * it, kept for as long as the server uses the root, so that what changed during a turn, and
 * which folders hold host-run, secret and credential names, are known without walking the
 * tree again. A walk costs a stat of every file (0.3 s for 100,000 files, measured), a turn
 * with the journal costs a few reads of its events.
 *
 * What it promises: every file created, written, closed after writing (a write through a
 * shared memory map leaves only that), renamed into place or changed in its attributes below
 * the root is in the log of the turn it happened in. A folder that appears (created, renamed,
 * moved in) is watched, then listed, and everything in it counts as changed; one that goes
 * (deleted, renamed, moved out) is forgotten with its watches. So a folder renamed and
 * replaced between events converges: the latest event about a name lists whatever is there
 * then. Whatever breaks the promise (the kernel's queue overflowed, the root was moved or
 * replaced, the watch limit was reached, one folder shows up under two paths) marks the
 * journal `invalid`: callers then walk the tree instead, and a new journal is built.
 *
 * Credential stores are never watched or looked into (delegates never see them: the sandboxes
 * hide them), as the walk never read into them.
 */
import { lstatSync } from "node:fs";
import process from "node:process";
import {
  type DirEntry,
  IN_ATTRIB,
  IN_CLOSE_WRITE,
  IN_CREATE,
  IN_DELETE,
  IN_DELETE_SELF,
  IN_DONT_FOLLOW,
  IN_IGNORED,
  IN_ISDIR,
  IN_MODIFY,
  IN_MOVE_SELF,
  IN_MOVED_FROM,
  IN_MOVED_TO,
  IN_ONLYDIR,
  IN_Q_OVERFLOW,
  IN_UNMOUNT,
  type LinuxFs,
  type RawEvent,
} from "../platform/posix/inotify.ts";
import { isCredentialName, isMarkedName } from "./tree_names.ts";
import { isHostRunName } from "./protected_paths.ts";

const WATCH_MASK = IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO |
  IN_CREATE | IN_DELETE | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR | IN_DONT_FOLLOW;

/** What a log entry saw: a write (content or attributes), or a close after opening to write. */
const WRITTEN = 1;
const CLOSED = 2;

const ENOENT = 2;
const EACCES = 13;
const ENOTDIR = 20;
const ELOOP = 40;
const ENOSPC = 28;

export interface JournalLimits {
  /** Folders watched at most; past it the root gets no journal (or loses it). */
  maxDirs: number;
  /** Paths logged while turns listen; past it the turns fall back to a walk. */
  maxLog: number;
}

export const JOURNAL_LIMITS: JournalLimits = { maxDirs: 200_000, maxLog: 500_000 };

/** A watched folder. Its path never changes: a folder that moves is forgotten and re-watched. */
interface DirNode {
  path: string;
  wd: number;
  parent: DirNode | undefined;
  /** The folders in it, watched. */
  dirs: Map<string, DirNode>;
  /** Its entries with names the identity scan or the sandbox look for: name -> is a folder. */
  marked: Map<string, boolean>;
}

/** An entry as the identity scan lists it. */
export interface ListedEntry {
  name: string;
  isDirectory(): boolean;
}

const asEntry = (name: string, dir: boolean): ListedEntry => ({ name, isDirectory: () => dir });

/**
 * Paths whose identity a sandbox holds on to (sandbox_watch.ts): told when an event touched
 * one of them, one of their folders on the way from the root, or an entry right inside one.
 */
export interface Sentinel {
  /** True when something may have moved them since the last call (then they are checked). */
  dirty(): boolean;
  close(): void;
}

interface SentinelState {
  /** The paths and every folder on their way from the root. */
  onTheWay: Set<string>;
  /** The paths themselves (an entry made or removed in one changes whether it is empty). */
  paths: Set<string>;
  dirty: boolean;
}

/** Folders that could not be watched, with why; shown as a limit of the change list. */
export interface Blind {
  path: string;
  why: string;
}

export class TreeJournal {
  #top: DirNode | undefined;
  readonly #byWd = new Map<number, DirNode>();
  #rootId = "";
  #fd = -1;
  /** Paths changed, in order; `#logBase` is the sequence number of its first entry. */
  #log: string[] = [];
  /** Beside each: WRITTEN, CLOSED (after being open for writing) or 0 (made or moved). */
  #logKind: number[] = [];
  #logBase = 0;
  /** Paths logged whose names are not UTF-8: reported as they are, never looked up. */
  readonly #lossy = new Set<string>();
  /** Turns listening: token -> the sequence number they started at. */
  readonly #listeners = new Map<number, number>();
  #nextToken = 1;
  readonly #blind = new Map<string, string>();
  readonly #sentinels = new Set<SentinelState>();
  #invalid: string | undefined;

  private constructor(
    readonly root: string,
    private readonly fs: LinuxFs,
    private readonly limits: JournalLimits,
  ) {}

  /**
   * Watches every folder below `root` (a real path) and learns its marked names. Resolves to
   * the journal, or to why there can be none (too many folders, the watch limit).
   */
  static async open(
    root: string,
    fs: LinuxFs,
    limits: JournalLimits = JOURNAL_LIMITS,
  ): Promise<TreeJournal | string> {
    const journal = new TreeJournal(root, fs, limits);
    const fd = fs.inotifyInit();
    if (fd < 0) return `inotify could not be started (errno ${-fd})`;
    journal.#fd = fd;
    try {
      journal.#rootId = identity(root) ?? "";
      const top = journal.#watch(root, undefined);
      if (typeof top === "string") throw new JournalError(top);
      if (!top) throw new JournalError(`"${root}" is not a folder that can be watched`);
      journal.#top = top;
      // Listed a slice at a time, so that a large tree does not hold up the server.
      const pending: DirNode[] = [top];
      let slice = performance.now();
      while (pending.length > 0) {
        journal.#list(pending.pop()!, pending, false);
        if (journal.#invalid) throw new JournalError(journal.#invalid);
        if (performance.now() - slice > 20) {
          await new Promise((resolve) => setTimeout(resolve, 0));
          slice = performance.now();
        }
      }
      if (identity(root) !== journal.#rootId) throw new JournalError(`"${root}" was replaced`);
      return journal;
    } catch (e) {
      journal.close();
      if (e instanceof JournalError) return e.message;
      throw e;
    }
  }

  /** Why the journal can no longer be trusted (callers walk instead), or undefined. */
  get invalid(): string | undefined {
    return this.#invalid;
  }

  /** Folders watched. */
  get size(): number {
    return this.#byWd.size;
  }

  /** True while a turn listens. */
  get listening(): boolean {
    return this.#listeners.size > 0;
  }

  /** Reads and applies the events queued so far. */
  drain(): void {
    if (this.#invalid) return;
    for (;;) {
      const events = this.fs.readEvents(this.#fd);
      if (typeof events === "number") {
        return this.#fail(`its events could not be read (errno ${-events})`);
      }
      if (events.length === 0) break;
      for (const event of events) {
        this.#apply(event);
        if (this.#invalid) return;
      }
    }
    if (this.#log.length > this.limits.maxLog) {
      this.#fail(`over ${this.limits.maxLog.toLocaleString("en-US")} changes came in at once`);
    }
  }

  /** Starts listening for a turn: every change from now on is kept for its token. */
  listen(): number {
    this.#check();
    const token = this.#nextToken++;
    this.#listeners.set(token, this.#logBase + this.#log.length);
    return token;
  }

  /**
   * The files (not folders) created or changed below the root since `token` started
   * listening, that are there now, sorted; or why that cannot be known.
   *
   * inotify names the path a file was written through, not its other hard links: a write
   * through `x`, made by `ln package.json x` and removed after, changed package.json with no
   * event naming it. So when a file written in the turn is gone, or has other names, or a
   * folder could not be watched, `walk` says that a walk by change time must complete the
   * list (turn_changes.ts does it): hard links share their change time.
   */
  changes(token: number): { files: string[]; walk?: string } | { unknown: string } {
    this.#check();
    const from = this.#listeners.get(token);
    if (this.#invalid !== undefined) return { unknown: this.#invalid };
    if (from === undefined) throw new RangeError(`Journal token ${token} is not listening`);
    const start = from - this.#logBase;
    const kinds = new Map<string, number>();
    for (let i = start; i < this.#log.length; i++) {
      const path = this.#log[i]!;
      kinds.set(path, (kinds.get(path) ?? 0) | this.#logKind[i]!);
    }
    const written = (path: string) => (kinds.get(path) ?? 0) !== 0;
    const files = new Set<string>();
    const seen = new Set<string>();
    let walk: string | undefined;
    for (const path of this.#log.slice(start)) {
      if (seen.has(path)) continue;
      seen.add(path);
      if (this.#lossy.has(path)) {
        files.add(path);
        continue;
      }
      let info;
      try {
        info = lstatSync(path);
      } catch {
        // Gone again: a temporary file, unless it was another name of a file that stays.
        if (written(path) && !this.#placeholder(path, kinds.get(path)!)) {
          walk ??= `"${path}" was written, then removed`;
        }
        continue;
      }
      if (info.isDirectory()) continue;
      files.add(path);
      if (written(path) && info.isFile() && info.nlink > 1) {
        walk ??= `"${path}" was written and has other hard links`;
      }
    }
    if (this.#blind.size > 0) walk ??= "a folder in it cannot be watched";
    return { files: [...files].sort(), ...(walk ? { walk } : {}) };
  }

  /** Stops listening for `token`; the log is emptied once no turn listens. */
  release(token: number): void {
    this.#listeners.delete(token);
    if (this.#listeners.size > 0) {
      const oldest = Math.min(...this.#listeners.values());
      this.#log.splice(0, oldest - this.#logBase);
      this.#logKind.splice(0, oldest - this.#logBase);
      this.#logBase = oldest;
      return;
    }
    this.#logBase += this.#log.length;
    this.#log = [];
    this.#logKind = [];
    this.#lossy.clear();
  }

  /** Folders below the root whose changes cannot be seen (unreadable ones of ours). */
  blind(): Blind[] {
    return [...this.#blind].map(([path, why]) => ({ path, why }));
  }

  /**
   * The entries of `dir` that the identity scan looks at (folders, and marked names), as of
   * the last drain; undefined when `dir` is no watched folder of this journal.
   */
  list(dir: string): ListedEntry[] | undefined {
    const node = this.#find(dir);
    if (!node) return undefined;
    const out = [...node.dirs.keys()].map((name) => asEntry(name, true));
    for (const [name, isDir] of node.marked) {
      if (!node.dirs.has(name)) out.push(asEntry(name, isDir));
    }
    return out;
  }

  /**
   * A sentinel over `paths` (inside the root). One whose folder the journal does not watch
   * (a credential store, an unreadable folder) is always dirty: those are checked every time.
   */
  sentinel(paths: readonly string[]): Sentinel {
    const state: SentinelState = { onTheWay: new Set(), paths: new Set(paths), dirty: false };
    for (const path of paths) {
      if (!path.startsWith(`${this.root}/`)) state.dirty = true;
      for (let at = path; at.length > this.root.length; at = at.slice(0, at.lastIndexOf("/"))) {
        state.onTheWay.add(at);
      }
      const parent = path.slice(0, path.lastIndexOf("/"));
      if (!this.#find(parent)) state.dirty = true;
    }
    const always = state.dirty;
    this.#sentinels.add(state);
    return {
      dirty: () => {
        this.#check();
        const was = state.dirty || always || this.#invalid !== undefined;
        state.dirty = false;
        return was;
      },
      close: () => this.#sentinels.delete(state),
    };
  }

  /** `.git` entries below the top, and credential stores, anywhere (dependencies too). */
  nested(): { nestedGit: string[]; credentials: string[] } {
    const nestedGit: string[] = [];
    const credentials: string[] = [];
    const pending = this.#top ? [this.#top] : [];
    while (pending.length > 0) {
      const node = pending.pop()!;
      for (const name of node.marked.keys()) {
        if (name === ".git" && node !== this.#top) nestedGit.push(`${node.path}/${name}`);
        if (isCredentialName(name)) credentials.push(`${node.path}/${name}`);
      }
      pending.push(...node.dirs.values());
    }
    return { nestedGit: nestedGit.sort(), credentials: credentials.sort() };
  }

  close(): void {
    if (this.#fd >= 0) this.fs.close(this.#fd);
    this.#fd = -1;
    this.#byWd.clear();
    this.#top = undefined;
    this.#invalid ??= "it was closed";
  }

  /** Drains, and checks that the root is still the folder the journal watches. */
  #check(): void {
    this.drain();
    if (!this.#invalid && identity(this.root) !== this.#rootId) {
      this.#fail(`"${this.root}" was moved or replaced`);
    }
  }

  #fail(why: string): void {
    this.#invalid ??= why;
    this.close();
  }

  #find(dir: string): DirNode | undefined {
    if (!this.#top) return undefined;
    if (dir === this.root) return this.#top;
    if (!dir.startsWith(`${this.root}/`)) return undefined;
    let node: DirNode | undefined = this.#top;
    for (const part of dir.slice(this.root.length + 1).split("/")) {
      node = node.dirs.get(part);
      if (!node) return undefined;
    }
    return node;
  }

  /** Adds a watch on the folder at `path`; a node, or why the journal cannot go on. */
  #watch(path: string, parent: DirNode | undefined): DirNode | string | undefined {
    if (this.#byWd.size >= this.limits.maxDirs) {
      return `the job's directories hold over ${
        this.limits.maxDirs.toLocaleString("en-US")
      } folders`;
    }
    const wd = this.fs.addWatch(this.#fd, path, WATCH_MASK);
    if (wd < 0) {
      const errno = -wd;
      // Gone, or no folder any more (a link now): the events that did it come next.
      if (errno === ENOENT || errno === ENOTDIR || errno === ELOOP) return undefined;
      if (errno === EACCES) return this.#unreadable(path);
      if (errno === ENOSPC) {
        return "the system's limit of inotify watches (fs.inotify.max_user_watches) is reached";
      }
      return `"${path}" could not be watched (errno ${errno})`;
    }
    const known = this.#byWd.get(wd);
    if (known) {
      // Watched already: moved here by a rename whose events are not read yet (`mkdir b;
      // mv a/x b/`, and b is listed first), or the same folder under two paths (a bind
      // mount), whose events could belong to either.
      if (identity(known.path) === identity(path)) {
        return `"${path}" is the same folder as "${known.path}"`;
      }
      this.#forget(known, false);
    }
    const node: DirNode = { path, wd, parent, dirs: new Map(), marked: new Map() };
    this.#byWd.set(wd, node);
    this.#blind.delete(path);
    return node;
  }

  /** A folder that cannot be read: noted when it is ours (a delegate could open it up). */
  #unreadable(path: string): undefined {
    let owner: number | undefined;
    try {
      owner = lstatSync(path).uid;
    } catch {
      return undefined;
    }
    if (owner === process.getuid?.()) this.#blind.set(path, "it cannot be read");
    return undefined;
  }

  /** Lists `node`, learning its entries; with `log`, every file in it counts as changed. */
  #list(node: DirNode, pending: DirNode[], log: boolean): void {
    const entries = this.fs.listDir(node.path);
    if (typeof entries === "number") {
      if (-entries === EACCES) this.#unreadable(node.path);
      // Otherwise gone, or replaced by a link: the events that did it come next.
      return;
    }
    for (const entry of entries) this.#entry(node, entry, pending, log);
  }

  /** One entry found by listing a folder. */
  #entry(node: DirNode, entry: DirEntry, pending: DirNode[], log: boolean): void {
    const path = `${node.path}/${entry.name}`;
    let kind = entry.kind;
    if (kind === "unknown") {
      try {
        const info = lstatSync(path);
        kind = info.isDirectory() ? "dir" : info.isSymbolicLink() ? "link" : "file";
      } catch {
        return;
      }
    }
    const isDir = kind === "dir";
    if (isMarkedName(entry.name)) node.marked.set(entry.name, isDir);
    if (!isDir) {
      if (log) this.#record(path, entry.lossy);
      return;
    }
    if (entry.lossy) {
      this.#blind.set(path, "its name is not UTF-8");
      return;
    }
    if (isCredentialName(entry.name)) return;
    this.#forget(node.dirs.get(entry.name), true);
    const child = this.#watch(path, node);
    if (typeof child === "string") return this.#fail(child);
    if (!child) return;
    node.dirs.set(entry.name, child);
    pending.push(child);
  }

  #record(path: string, lossy?: true, kind = 0): void {
    if (this.#listeners.size === 0) return;
    this.#log.push(path);
    this.#logKind.push(kind);
    if (lossy) this.#lossy.add(path);
  }

  /**
   * A sandbox's placeholder (native/placeholders.ts): an empty file made at a missing
   * host-run path at the top of the root for one command, then removed; nothing was written
   * to it, it was only made and closed. Delegates cannot make a file there (the sandboxes hold
   * those paths), so no other name of a file can have been written through it.
   */
  #placeholder(path: string, kind: number): boolean {
    const at = path.lastIndexOf("/");
    return kind === CLOSED && path.slice(0, at) === this.root && isHostRunName(path.slice(at + 1));
  }

  /** Forgets `node` and everything below it; `unwatch` also removes their watches. */
  #forget(node: DirNode | undefined, unwatch: boolean): void {
    if (!node) return;
    const pending = [node];
    while (pending.length > 0) {
      const n = pending.pop()!;
      if (this.#byWd.get(n.wd) === n) {
        this.#byWd.delete(n.wd);
        if (unwatch && this.#fd >= 0) this.fs.removeWatch(this.#fd, n.wd);
      }
      pending.push(...n.dirs.values());
    }
    const name = node.path.slice(node.path.lastIndexOf("/") + 1);
    if (node.parent?.dirs.get(name) === node) node.parent.dirs.delete(name);
    for (const path of this.#blind.keys()) {
      if (path.startsWith(`${node.path}/`)) this.#blind.delete(path);
    }
  }

  /** Marks the sentinels an event at `dir`/`name` (or on `dir` itself) may concern. */
  #alarm(dir: string, name: string): void {
    const path = name === "" ? dir : `${dir}/${name}`;
    for (const s of this.#sentinels) {
      if (s.onTheWay.has(path) || s.paths.has(dir)) s.dirty = true;
    }
  }

  #apply(event: RawEvent): void {
    if (event.mask & IN_Q_OVERFLOW) {
      return this.#fail("more changes came in at once than the kernel could queue");
    }
    const node = this.#byWd.get(event.wd);
    if (!node) return; // a watch already forgotten
    if (event.mask & IN_UNMOUNT) {
      return this.#fail(`a filesystem below "${this.root}" was unmounted`);
    }
    if (event.mask & IN_IGNORED) {
      // The folder is gone (deleted, or its watch removed).
      if (node === this.#top) return this.#fail(`"${this.root}" was removed`);
      return this.#forget(node, false);
    }
    if (this.#sentinels.size > 0) this.#alarm(node.path, event.name);
    if (event.mask & (IN_DELETE_SELF | IN_MOVE_SELF)) {
      // Below the top, the entry's own event in its parent says the rest.
      if (node === this.#top) this.#fail(`"${this.root}" was moved or removed`);
      return;
    }
    if (event.name === "") return; // the folder's own attributes
    const path = `${node.path}/${event.name}`;
    const isDir = (event.mask & IN_ISDIR) !== 0;
    if (event.mask & (IN_DELETE | IN_MOVED_FROM)) {
      node.marked.delete(event.name);
      this.#forget(node.dirs.get(event.name), true);
      this.#blind.delete(path);
      return;
    }
    if (event.mask & (IN_CREATE | IN_MOVED_TO)) {
      if (!isDir) {
        if (isMarkedName(event.name)) node.marked.set(event.name, false);
        else node.marked.delete(event.name);
        return this.#record(path, event.lossy);
      }
      // A folder appeared: watched, then listed, so nothing made in it meanwhile is missed.
      const pending: DirNode[] = [];
      this.#entry(
        node,
        { name: event.name, kind: "dir", ...(event.lossy ? { lossy: true } : {}) },
        pending,
        true,
      );
      while (pending.length > 0 && !this.#invalid) this.#list(pending.pop()!, pending, true);
      return;
    }
    // Written, closed after writing, or its attributes changed (chmod, touch, a new link).
    if (!isDir) {
      const kind = event.mask & (IN_MODIFY | IN_ATTRIB) ? WRITTEN : CLOSED;
      this.#record(path, event.lossy, kind);
    } else if (event.mask & IN_ATTRIB && this.#blind.has(path)) {
      // An unreadable folder of ours opened up: what it holds is new to the journal.
      const pending: DirNode[] = [];
      this.#entry(node, { name: event.name, kind: "dir" }, pending, true);
      while (pending.length > 0 && !this.#invalid) this.#list(pending.pop()!, pending, true);
    }
  }
}

class JournalError extends Error {}

/** `dev:ino` of the folder at `path` (not followed), or undefined. */
function identity(path: string): string | undefined {
  try {
    const info = lstatSync(path);
    return info.isDirectory() ? `${info.dev}:${info.ino}` : undefined;
  } catch {
    return undefined;
  }
}
