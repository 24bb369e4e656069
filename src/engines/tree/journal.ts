/**
 * A change journal of one delegate directory (a root): its folders watched (watched.ts)
 * for as long as the server uses the root, so that what changed during a turn, and which
 * folders hold host-run, secret and credential names, are known without walking the tree
 * again. A walk costs a stat of every file (0.3 s for 100,000 files, measured); a turn with the
 * journal costs a read of its events.
 *
 * What it promises: every file created, written, closed after writing (a write through a
 * shared memory map leaves only that), renamed into place or changed in its attributes below
 * the root during a turn is in that turn's `changes`, or `changes` says that a walk must
 * complete them (a file written through another hard link), or that they cannot be known
 * (the tree stopped: callers then walk instead, and a new journal is built).
 */
import type { LinuxFs } from "../../platform/posix/inotify.ts";
import type { ListedEntry } from "../../guard/host_run_scan.ts";
import { type Blind, CLOSED, MADE, MOVED_OUT, REMOVED, WatchedTree, WRITTEN } from "./watched.ts";
import { formatCount } from "../../platform/count_text.ts";
import type { NestedNames } from "./view.ts";

export type { Blind };

export interface JournalLimits {
  /** Folders watched at most; past it the root gets no journal (or loses it). */
  maxDirs: number;
  /** Paths logged while turns listen; past it the turns fall back to a walk. */
  maxLog: number;
}

export const JOURNAL_LIMITS: JournalLimits = { maxDirs: 200_000, maxLog: 500_000 };

/**
 * Paths whose identity a sandbox holds on to (native/sandbox/watch.ts): told when an event touched
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

export class TreeJournal {
  #tree!: WatchedTree;
  /** Paths changed, in order; `#logBase` is the sequence number of its first entry. */
  #log: string[] = [];
  /**
   * Beside each, what the event saw (watched.ts: WRITTEN, CLOSED, MADE, REMOVED, MOVED_OUT, 0),
   * and ALONE on a MADE when the file had one link when the event was read.
   */
  #logKind: number[] = [];
  #logBase = 0;
  /** Turns listening: token -> the sequence number they started at. */
  readonly #listeners = new Map<number, number>();
  #nextToken = 1;
  readonly #sentinels = new Set<SentinelState>();

  private constructor(
    readonly root: string,
    private readonly limits: JournalLimits,
    private readonly fs: LinuxFs,
  ) {}

  /**
   * Watches every folder below `root` (a real path). Resolves to the journal, or to why there
   * can be none (too many folders, the watch limit).
   */
  static async open(
    root: string,
    fs: LinuxFs,
    limits: JournalLimits = JOURNAL_LIMITS,
  ): Promise<TreeJournal | string> {
    const journal = new TreeJournal(root, limits, fs);
    const tree = await WatchedTree.open(root, fs, limits.maxDirs, {
      file: (path, kind) => journal.#record(path, kind),
      event: (dir, name) => journal.#alarm(dir, name),
    });
    if (typeof tree === "string") return tree;
    journal.#tree = tree;
    return journal;
  }

  /** Why the journal can no longer be trusted (callers walk instead), or undefined. */
  get invalid(): string | undefined {
    return this.#tree.invalid;
  }

  /** Folders watched. */
  get size(): number {
    return this.#tree.size;
  }

  /** True while a turn listens. */
  get listening(): boolean {
    return this.#listeners.size > 0;
  }

  /** Reads and applies the events queued so far. */
  drain(): void {
    this.#tree.drain();
    if (this.#log.length > this.limits.maxLog) {
      this.#tree.fail(`over ${formatCount(this.limits.maxLog)} changes came in at once`);
    }
  }

  #check(): void {
    this.#tree.check();
    this.drain();
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
    if (this.invalid !== undefined) return { unknown: this.invalid };
    if (from === undefined) throw new RangeError(`Journal token ${token} is not listening`);
    const start = from - this.#logBase;
    const kinds = new Map<string, number>();
    for (let i = start; i < this.#log.length; i++) {
      const path = this.#log[i]!;
      kinds.set(path, (kinds.get(path) ?? 0) | this.#logKind[i]!);
    }
    const written = (path: string) => ((kinds.get(path) ?? 0) & (WRITTEN | CLOSED)) !== 0;
    const temporary = temporaryFiles(this.#log, this.#logKind, start);
    const removedWritten = removedAfterWrite(this.#log, this.#logKind, start);
    const files = new Set<string>();
    const seen = new Set<string>();
    let walk: string | undefined;
    for (const path of this.#log.slice(start)) {
      if (seen.has(path)) continue;
      seen.add(path);
      // Through libc: a name that is not UTF-8 is looked up by its bytes.
      const info = this.fs.lstat(path);
      if (!info) {
        // Gone again: a temporary file, unless it was another name of a file that stays.
        if (written(path) && !temporary.has(path)) {
          walk ??= `"${path}" was written, then removed`;
        }
        continue;
      }
      if (info.kind === "dir") continue;
      files.add(path);
      // There again, but written before it was removed or moved away: what was written may
      // have been another name's file (see removedAfterWrite).
      if (removedWritten.has(path)) walk ??= `"${path}" was written, then removed`;
      if (written(path) && info.kind === "file" && info.nlink > 1) {
        walk ??= `"${path}" was written and has other hard links`;
      }
    }
    if (this.#tree.blind().length > 0) walk ??= "a folder in it cannot be watched";
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
  }

  /** Folders below the root whose changes cannot be seen (unreadable ones of ours). */
  blind(): Blind[] {
    return this.#tree.blind();
  }

  /** See WatchedTree.list. */
  list(dir: string): ListedEntry[] | undefined {
    return this.#tree.list(dir);
  }

  /** `.git` entries below the top, and credential stores, anywhere (dependencies too). */
  nested(): NestedNames {
    return this.#tree.nested();
  }

  close(): void {
    this.#tree?.close();
  }

  /**
   * A sentinel over `paths` (inside the root). One whose folder the journal does not watch
   * (an unreadable folder) is always dirty: those are checked every time.
   */
  sentinel(paths: readonly string[]): Sentinel {
    const state: SentinelState = { onTheWay: new Set(), paths: new Set(paths), dirty: false };
    for (const path of paths) {
      if (!path.startsWith(`${this.root}/`)) state.dirty = true;
      for (let at = path; at.length > this.root.length; at = at.slice(0, at.lastIndexOf("/"))) {
        state.onTheWay.add(at);
      }
      const parent = path.slice(0, path.lastIndexOf("/"));
      if (!this.#tree.knows(parent)) state.dirty = true;
    }
    const always = state.dirty;
    this.#sentinels.add(state);
    return {
      dirty: () => {
        this.#check();
        const was = state.dirty || always || this.invalid !== undefined;
        state.dirty = false;
        return was;
      },
      close: () => this.#sentinels.delete(state),
    };
  }

  #record(path: string, kind: number): void {
    if (this.#listeners.size === 0) return;
    if (kind === MADE) {
      // Looked at as soon as the event is read (every 20 ms while a turn listens,
      // journal_registry.ts): a file with one link then is no other name of a file (see
      // temporaryFiles).
      const info = this.fs.lstat(path);
      if (info?.kind === "file" && info.nlink === 1) kind |= ALONE;
    }
    this.#log.push(path);
    this.#logKind.push(kind);
  }

  /** Marks the sentinels an event at `dir`/`name` (or on `dir` itself) may concern. */
  #alarm(dir: string, name: string): void {
    if (this.#sentinels.size === 0) return;
    const path = name === "" ? dir : `${dir}/${name}`;
    for (const s of this.#sentinels) {
      if (s.onTheWay.has(path) || s.paths.has(dir)) s.dirty = true;
    }
  }
}

/** On a MADE: the file had one link (st_nlink 1) when the journal read the event. */
const ALONE = 32;

/**
 * The files of the log from `start` on that were temporary files of their own: their name's
 * first event is its creation (MADE, not a move in), when the journal found one link to the
 * file, its last is its removal (REMOVED), and in between it was only written or closed, no
 * other creation, removal, move or folder listing. A write through such a name reached no
 * file that stays, whatever the name is (issue 34: a sandbox's mount points, Claude Code's
 * `.bashrc` or `.gitconfig` among them, made empty and removed around each command):
 *
 * - another name of an existing file is made by link(2), and that file keeps its own name,
 *   so the new name has two links when the journal looks; a name whose other names were all
 *   removed first names a file that is gone (a removal, which the journal does not report);
 * - from the look to the removal, only events on the name change what it names (a create, a
 *   link, a rename onto it or away, a removal, a folder moved in its place: each is logged
 *   here), so the file removed is the one looked at;
 * - a name made later for that file (`ln x y`, a rename onto an existing name) is logged on
 *   its own and is in `changes` if it stays.
 *
 * The name alone proves nothing: a command left running can make `.bashrc` a hard link of
 * package.json (a removed mount point no longer holds it), write through a shared memory map
 * (which leaves only the close), and remove it, events a placeholder also leaves. A file the
 * journal could not look at before it went (made and removed between two reads) is not taken
 * for temporary: the turn is walked.
 */
function temporaryFiles(log: readonly string[], kinds: readonly number[], start: number) {
  const state = new Map<string, "open" | "done" | "no">();
  for (let i = start; i < log.length; i++) {
    const path = log[i]!;
    const kind = kinds[i]!;
    const was = state.get(path);
    if (was === "no") continue;
    let now: "open" | "done" | "no";
    if (was === undefined) now = kind === (MADE | ALONE) ? "open" : "no";
    else if (was === "done") now = "no";
    else if (kind === REMOVED) now = "done";
    else now = kind === WRITTEN || kind === CLOSED ? "open" : "no";
    state.set(path, now);
  }
  return new Set([...state].filter(([, s]) => s === "done").map(([path]) => path));
}

/**
 * The names of the log from `start` on that were written and then removed or moved away,
 * whatever came after. A name that is there again at the turn's end is another file now, so
 * nothing the journal can look at tells what the write before reached: `ln package.json x`,
 * a write through `x` (through a memory map, only a close), `rm x` and `touch x` changed
 * package.json with no event naming it, and leave `x` a new file of one link.
 */
function removedAfterWrite(log: readonly string[], kinds: readonly number[], start: number) {
  const writtenSince = new Set<string>();
  const out = new Set<string>();
  for (let i = start; i < log.length; i++) {
    const path = log[i]!;
    const kind = kinds[i]!;
    if (kind & (WRITTEN | CLOSED)) writtenSince.add(path);
    if (kind & (REMOVED | MOVED_OUT) && writtenSince.has(path)) out.add(path);
  }
  return out;
}
