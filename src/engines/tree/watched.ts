/**
 * The folders below one root, each watched by inotify (through Deno's FFI,
 * platform/posix/inotify.ts) and known by the names the identity scan and the sandboxes look
 * for: the part of a change journal (journal.ts) that keeps up with the tree.
 *
 * A folder that appears (created, renamed, moved in) is watched, then listed, and every file
 * in it is reported as changed; one that goes (deleted, renamed, moved out) is forgotten with
 * its watches. So a folder renamed and replaced between two reads of the events converges:
 * the latest event about a name lists whatever is there then. Whatever it cannot follow (the
 * kernel's queue overflowed, the root moved or was replaced, the folder limit or the watch
 * limit was reached, one folder shows up under two paths) makes it `invalid` for good.
 *
 * Credential stores are watched like any folder: the sandboxes hide those that exist, but one a
 * command creates (`mkdir lib/.ssh`) can hold anything, and a file in one is reported by name
 * like any other (issue 28). Only names and change times are looked at, never a file's content.
 * A name that is not UTF-8 keeps its bytes (platform/file_names.ts), so such folders are
 * watched and such files reported like the others.
 */
import { setTimeout as delay } from "node:timers/promises";
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
} from "../../platform/posix/inotify.ts";
import type { ListedEntry } from "../../guard/host_run_scan.ts";
import { isMarkedName } from "./names.ts";
import { type DirNode, findNode, listNode, nestedBelow, type NestedNames } from "./view.ts";
import { formatCount } from "../../platform/count_text.ts";

const WATCH_MASK = IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO |
  IN_CREATE | IN_DELETE | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR | IN_DONT_FOLLOW;

/**
 * What a file event saw: a write (content or attributes), a close after opening to write, the
 * name made by a create or a link (not a move), the name removed (unlinked), or moved away.
 * Moved in, or listed in a folder that appeared: 0.
 */
export const WRITTEN = 1;
export const CLOSED = 2;
export const MADE = 4;
export const REMOVED = 8;
export const MOVED_OUT = 16;

const ENOENT = 2;
const EACCES = 13;
const ENOTDIR = 20;
const ELOOP = 40;
const ENOSPC = 28;

/** Folders that could not be watched, with why; shown as a limit of the change list. */
export interface Blind {
  path: string;
  why: string;
}

/** What the tree tells its journal, as it reads events. */
export interface TreeHooks {
  /**
   * A file (not a folder) made (MADE) or moved in (0), written, closed after writing, removed
   * (REMOVED) or moved away (MOVED_OUT).
   */
  file(path: string, kind: number): void;
  /** An event on `dir` itself (`name` empty) or on its entry `name`. */
  event(dir: string, name: string): void;
}

export class WatchedTree {
  #top: DirNode | undefined;
  readonly #byWd = new Map<number, DirNode>();
  #rootId = "";
  #fd = -1;
  readonly #blind = new Map<string, string>();
  #invalid: string | undefined;

  private constructor(
    readonly root: string,
    private readonly fs: LinuxFs,
    private readonly maxDirs: number,
    private readonly hooks: TreeHooks,
  ) {}

  /**
   * Watches every folder below `root` (a real path) and learns its marked names. Resolves to
   * the tree, or to why there can be none (too many folders, the watch limit).
   */
  static async open(
    root: string,
    fs: LinuxFs,
    maxDirs: number,
    hooks: TreeHooks,
  ): Promise<WatchedTree | string> {
    const tree = new WatchedTree(root, fs, maxDirs, hooks);
    const fd = fs.inotifyInit();
    if (fd < 0) return `inotify could not be started (errno ${-fd})`;
    tree.#fd = fd;
    try {
      tree.#rootId = tree.#identity(root) ?? "";
      const top = tree.#watch(root, undefined);
      if (typeof top === "string") throw new TreeError(top);
      if (!top) throw new TreeError(`"${root}" is not a folder that can be watched`);
      tree.#top = top;
      // Listed a slice at a time, so that a large tree does not hold up the server.
      const pending: DirNode[] = [top];
      let slice = performance.now();
      while (pending.length > 0) {
        tree.#list(pending.pop()!, pending, false);
        if (tree.#invalid) throw new TreeError(tree.#invalid);
        if (performance.now() - slice > 20) {
          await delay(0);
          slice = performance.now();
        }
      }
      if (tree.#identity(root) !== tree.#rootId) throw new TreeError(`"${root}" was replaced`);
      return tree;
    } catch (e) {
      tree.close();
      if (e instanceof TreeError) return e.message;
      throw e;
    }
  }

  /** Why the tree can no longer be trusted, or undefined. */
  get invalid(): string | undefined {
    return this.#invalid;
  }

  /** Folders watched. */
  get size(): number {
    return this.#byWd.size;
  }

  /** Reads and applies the events queued so far. */
  drain(): void {
    if (this.#invalid) return;
    for (;;) {
      const events = this.fs.readEvents(this.#fd);
      if (typeof events === "number") {
        return this.fail(`its events could not be read (errno ${-events})`);
      }
      if (events.length === 0) return;
      for (const event of events) {
        try {
          this.#apply(event);
        } catch (e) {
          // Whatever it could not apply, it can no longer vouch for.
          return this.fail(`an event could not be applied (${(e as Error).message})`);
        }
        if (this.#invalid) return;
      }
    }
  }

  /** Drains, and checks that the root is still the folder watched. */
  check(): void {
    this.drain();
    if (!this.#invalid && this.#identity(this.root) !== this.#rootId) {
      this.fail(`"${this.root}" was moved or replaced`);
    }
  }

  /** Stops for good, saying why. */
  fail(why: string): void {
    this.#invalid ??= why;
    this.close();
  }

  /** Folders below the root whose changes cannot be seen (unreadable ones of ours). */
  blind(): Blind[] {
    return [...this.#blind].map(([path, why]) => ({ path, why }));
  }

  /**
   * The entries of `dir` that the identity scan looks at, as of the last drain (see
   * listNode); undefined when `dir` is no watched folder of this tree.
   */
  list(dir: string): ListedEntry[] | undefined {
    const node = findNode(this.#top, dir);
    return node && listNode(node);
  }

  /** `.git` entries below the top, and credential stores, anywhere (dependencies too). */
  nested(): NestedNames {
    return nestedBelow(this.#top);
  }

  close(): void {
    if (this.#fd >= 0) this.fs.close(this.#fd);
    this.#fd = -1;
    this.#byWd.clear();
    this.#top = undefined;
    this.#invalid ??= "it was closed";
  }

  /** True when `dir` is a watched folder. */
  knows(dir: string): boolean {
    return findNode(this.#top, dir) !== undefined;
  }

  /**
   * Adds a watch on the folder at `path` (or takes the one asked for already, `given`); a node,
   * or why the tree cannot go on.
   */
  #watch(
    path: string,
    parent: DirNode | undefined,
    given?: number,
  ): DirNode | string | undefined {
    if (this.#byWd.size >= this.maxDirs) {
      return `the job's directories hold over ${formatCount(this.maxDirs)} folders`;
    }
    const wd = given ?? this.fs.addWatch(this.#fd, path, WATCH_MASK);
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
      if (this.#identity(known.path) === this.#identity(path)) {
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
    const owner = this.fs.lstat(path)?.uid;
    if (owner !== undefined && owner === process.getuid?.()) {
      this.#blind.set(path, "it cannot be read");
    }
    return undefined;
  }

  /** `device:inode` of the folder at `path` (not followed), or undefined. */
  #identity(path: string): string | undefined {
    const info = this.fs.lstat(path);
    return info?.kind === "dir" ? info.id : undefined;
  }

  /** Lists `node`, learning its entries; with `log`, every file in it counts as changed. */
  #list(node: DirNode, pending: DirNode[], log: boolean): void {
    const entries = this.fs.listDir(node.path);
    if (typeof entries === "number") {
      if (-entries === EACCES) return void this.#unreadable(node.path);
      // Gone, or replaced (by a link, or by another folder of the same name): the events that
      // did it come next. The very folder watched, still there, that could not be listed would
      // stay empty here without a word: what is in it cannot be known. The kernel tells which
      // it is: a watch asked for again on the same folder is the one it has.
      const again = this.fs.addWatch(this.#fd, node.path, WATCH_MASK);
      if (again >= 0 && !this.#byWd.has(again)) this.fs.removeWatch(this.#fd, again);
      const info = again === node.wd ? this.fs.lstat(node.path) : undefined;
      if (info?.kind === "dir" && info.nlink > 0) {
        this.fail(`"${node.path}" could not be listed (errno ${-entries})`);
      }
      return;
    }
    // The subfolders' watches asked for at once where calls cost a round trip, as many as the
    // tree may still watch (the rest one by one, which stops at the limit). Each is taken once
    // (#entry): a name listed twice would otherwise get a watch its first node's forgetting
    // removed. Only for a folder none of whose subfolders is known (every folder listed here
    // is new; should that change, forgetting a known one would remove a watch an early one on
    // the same folder shares).
    let early: Map<string, number> | undefined;
    if (this.fs.addWatches && node.dirs.size === 0) {
      const room = Math.max(0, this.maxDirs - this.#byWd.size);
      const dirs = [
        ...new Set(
          entries.filter((e) => e.kind === "dir").map((e) => `${node.path}/${e.name}`),
        ),
      ].slice(0, room);
      if (dirs.length > 1) {
        const wds = this.fs.addWatches(this.#fd, dirs, WATCH_MASK);
        early = new Map(dirs.map((path, i) => [path, wds[i]!]));
      }
    }
    let lost = false;
    for (const entry of entries) lost = !this.#entry(node, entry, pending, log, early) || lost;
    // Entries named but not one of them to be looked up: gone meanwhile (the events that did it
    // come next), or a folder that can be read but not entered (no search right, on a file
    // system that gives no entry types), which is unreadable: what is in it cannot be seen.
    if (lost && this.fs.lstat(`${node.path}/.`) === undefined) this.#unreadable(node.path);
  }

  /** One entry found by listing a folder; false when it could not be looked up. */
  #entry(
    node: DirNode,
    entry: DirEntry,
    pending: DirNode[],
    log: boolean,
    early?: Map<string, number>,
  ): boolean {
    // A tree that failed on an earlier entry is closed: nothing more goes into it.
    if (this.#invalid) return true;
    const path = `${node.path}/${entry.name}`;
    const kind = entry.kind === "unknown" ? this.fs.lstat(path)?.kind : entry.kind;
    if (kind === undefined) return false;
    const isDir = kind === "dir";
    if (isMarkedName(entry.name)) node.marked.set(entry.name, isDir);
    if (!isDir) {
      if (log) this.hooks.file(path, 0);
      return true;
    }
    this.#forget(node.dirs.get(entry.name), true);
    const given = early?.get(path);
    early?.delete(path);
    const child = this.#watch(path, node, given);
    if (typeof child === "string") {
      this.fail(child);
      return true;
    }
    if (!child) return true;
    node.dirs.set(entry.name, child);
    pending.push(child);
    return true;
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

  #apply(event: RawEvent): void {
    if (event.mask & IN_Q_OVERFLOW) {
      return this.fail("more changes came in at once than the kernel could queue");
    }
    const node = this.#byWd.get(event.wd);
    if (!node) return; // a watch already forgotten
    if (event.mask & IN_UNMOUNT) {
      return this.fail(`a filesystem below "${this.root}" was unmounted`);
    }
    if (event.mask & IN_IGNORED) {
      // The folder is gone (deleted, or its watch removed).
      if (node === this.#top) return this.fail(`"${this.root}" was removed`);
      return this.#forget(node, false);
    }
    this.hooks.event(node.path, event.name);
    if (event.mask & (IN_DELETE_SELF | IN_MOVE_SELF)) {
      // Below the top, the entry's own event in its parent says the rest.
      if (node === this.#top) this.fail(`"${this.root}" was moved or removed`);
      return;
    }
    if (event.name === "") return; // the folder's own attributes
    const path = `${node.path}/${event.name}`;
    const isDir = (event.mask & IN_ISDIR) !== 0;
    if (event.mask & (IN_DELETE | IN_MOVED_FROM)) {
      node.marked.delete(event.name);
      this.#forget(node.dirs.get(event.name), true);
      this.#blind.delete(path);
      if (!isDir) this.hooks.file(path, event.mask & IN_DELETE ? REMOVED : MOVED_OUT);
      return;
    }
    if (event.mask & (IN_CREATE | IN_MOVED_TO)) {
      if (!isDir) {
        if (isMarkedName(event.name)) node.marked.set(event.name, false);
        else node.marked.delete(event.name);
        return this.hooks.file(path, event.mask & IN_CREATE ? MADE : 0);
      }
      // A folder appeared: watched, then listed, so nothing made in it meanwhile is missed.
      const pending: DirNode[] = [];
      this.#entry(node, { name: event.name, kind: "dir" }, pending, true);
      while (pending.length > 0 && !this.#invalid) this.#list(pending.pop()!, pending, true);
      return;
    }
    // Written, closed after writing, or its attributes changed (chmod, touch, a new link).
    if (!isDir) {
      const kind = event.mask & (IN_MODIFY | IN_ATTRIB) ? WRITTEN : CLOSED;
      this.hooks.file(path, kind);
    } else if (event.mask & IN_ATTRIB && this.#blind.has(path)) {
      // An unreadable folder of ours opened up: what it holds is new to the tree.
      const pending: DirNode[] = [];
      this.#entry(node, { name: event.name, kind: "dir" }, pending, true);
      while (pending.length > 0 && !this.#invalid) this.#list(pending.pop()!, pending, true);
    }
  }
}

class TreeError extends Error {}
