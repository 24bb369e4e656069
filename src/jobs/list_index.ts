/**
 * What a listing needs to know of the job folders without reading them all (issue 34, item
 * 4): which folders there are, and when each ended job was created and how it ended. Job ids
 * are random, so the newest jobs can only be found by knowing every job's creation time;
 * reading 10,000 `job.json` files for that took over a second, for a listing that shows 20.
 *
 * The index is derived from the job folders alone and checked against them on every use, so
 * it cannot disagree with them, after a crash or otherwise:
 * - Which folders exist: the state dir's own listing, reused only while the state dir is the
 *   same directory with the same modification time as when it was listed. Creating, removing
 *   or renaming a folder in it changes that time (POSIX: a directory's mtime is updated when
 *   an entry is added or removed). The time is trusted only when the listing was taken at
 *   least SETTLED_MS after it: a change in the same clock tick as an earlier one could leave
 *   it unchanged (as git does with its index, "racy git").
 * - Only a job whose `job.json` said it had ended keeps its creation time and state here, and
 *   an ended record does not change (the job layer writes a job's end last, store.ts
 *   writeFinal). Queued and running jobs, unreadable records and folders without a record are
 *   read again on every listing.
 * - The rows a listing shows are read from their folders each time (list_page.ts), and an
 *   entry that disagrees with its folder is replaced.
 *
 * A copy is kept in `<stateDir>/.list/index.json` (not in the state dir itself, whose time it
 * would change) so that a new process (`ollama-delegate jobs`) starts from it. It is written
 * whole and atomically; a missing or unreadable copy is rebuilt from the folders, and two
 * processes that write it at once each write a true one.
 */
import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { writeFileAtomic } from "../platform/atomic_write.ts";
import { dirNames } from "../platform/dir_names.ts";
import { isValidId } from "./ids.ts";
import { LIST_INDEX_DIR } from "./job_folder.ts";
import { isTerminal, type JobRecord, type JobState } from "./record.ts";

/** The index's file in its folder of the state dir. */
const LIST_INDEX_FILE = "index.json";
/** Bumped when the file changes shape: a copy of another format is ignored. */
const FORMAT = 1;
/** An ended job's state in the file, one letter each; NOT_ENDED: read its folder each time. */
const STATE_CODES: Partial<Record<JobState, string>> = {
  completed: "c",
  failed: "f",
  cancelled: "x",
  interrupted: "i",
};
const STATE_OF: Record<string, JobState> = Object.fromEntries(
  Object.entries(STATE_CODES).map(([state, code]) => [code, state as JobState]),
);
const NOT_ENDED = "-";
/** How long after the state dir last changed a listing of it is trusted (see above). */
const SETTLED_MS = 2000;
/** A job id as save() writes it: a lower-case UUID, 36 characters. */
const ID_LENGTH = 36;

/** What the index knows of an ended job. */
export interface IndexEntry {
  createdAt: number;
  state: JobState;
}

/**
 * The job folders as listed once: their names, and by position what the index knows of each.
 * Columns rather than an object per job: a new process (`ollama-delegate jobs`) takes 10,000
 * of them from the file without building 10,000 objects and map entries (measured: ~30 ms of
 * a 300 ms command), and finds a folder's entry by its position in the listing.
 */
export interface FolderList {
  /** The names of the job folders (valid ids, lower case). */
  readonly ids: readonly string[];
  /** The entry of the folder at `at`, if its job had ended when last read. */
  entry(at: number): IndexEntry | undefined;
}

/** The state dir as stat() saw it: which directory, and when its entries last changed. */
interface DirStamp {
  ino: number;
  mtimeMs: number;
  ctimeMs: number;
}

export class ListIndex {
  /** Every job folder as last listed (never changed in place: a new listing replaces it). */
  #ids: string[] = [];
  /** By position: the creation time of an ended job (else anything). */
  #created: number[] = [];
  /** By position: an ended job's state letter (STATE_CODES), or NOT_ENDED. */
  #codes: string[] = [];
  /** Position of each id in #ids: built when a change needs it, not for a listing. */
  #at: Map<string, number> | undefined;
  /** The state dir when the folders were listed, if that listing can be trusted later. */
  #stamp: DirStamp | undefined;
  readonly #file: string;
  #loaded = false;
  #changed = false;

  constructor(readonly stateDir: string) {
    this.#file = join(stateDir, LIST_INDEX_DIR, LIST_INDEX_FILE);
  }

  /**
   * The job folders: the last listing while the state dir has not changed since, else a new
   * one. None when the state dir cannot be read.
   */
  async folders(): Promise<FolderList> {
    await this.#load();
    let now: DirStamp;
    let seenAt: number;
    try {
      const s = await stat(this.stateDir);
      seenAt = Date.now();
      now = { ino: s.ino, mtimeMs: s.mtimeMs, ctimeMs: s.ctimeMs };
    } catch {
      return NO_FOLDERS;
    }
    if (!this.#stamp || !sameStamp(this.#stamp, now)) {
      let names: string[];
      try {
        // Names only: a type for each of 10,000 entries costs more than the rare stray file,
        // which reads as a folder without a record. Synchronous: on Deno the asynchronous
        // readdir costs twice the CPU time (56 against 27 ms for 10,000 names), all of it on
        // this thread anyway.
        names = dirNames(this.stateDir).filter(isValidId).map((n) => n.toLowerCase());
      } catch {
        return NO_FOLDERS;
      }
      this.#relisted(names);
      // Stat before the listing: whatever changed since is in it, and changes the time again.
      if (seenAt - now.mtimeMs >= SETTLED_MS) {
        this.#stamp = now;
        this.#changed = true;
      } else if (this.#stamp) {
        this.#stamp = undefined;
        this.#changed = true;
      }
    }
    const ids = this.#ids;
    return { ids, entry: (at) => this.#ids === ids ? this.#entryAt(at) : this.get(ids[at]!) };
  }

  /** The entry of the job in folder `id` (lower case), if it had ended when last read. */
  get(id: string): IndexEntry | undefined {
    const at = this.#position(id);
    return at === undefined ? undefined : this.#entryAt(at);
  }

  /**
   * Learns a record read from the job's folder: kept when it had ended, and otherwise read
   * again at the next listing. A folder the last listing did not have is left out. `hint`:
   * the folder's position in the listing it came from (folders()).
   */
  learn(id: string, record: JobRecord, hint?: number): void {
    if (!isTerminal(record.state)) return this.forget(id, hint);
    const at = this.#position(id, hint);
    if (at === undefined) return;
    const code = STATE_CODES[record.state]!;
    if (this.#created[at] === record.createdAt && this.#codes[at] === code) return;
    this.#created[at] = record.createdAt;
    this.#codes[at] = code;
    this.#changed = true;
  }

  /** The folder's record cannot be read, has not ended or is gone: read it next time. */
  forget(id: string, hint?: number): void {
    const at = this.#position(id, hint);
    if (at === undefined || this.#codes[at] === NOT_ENDED) return;
    this.#codes[at] = NOT_ENDED;
    this.#changed = true;
  }

  /**
   * Writes the copy on disk when something changed since it was read or written. A failure
   * (a full disk, a read-only state dir) costs the next process the reads, nothing more.
   */
  async save(): Promise<void> {
    if (!this.#changed) return;
    this.#changed = false;
    // Three columns rather than an object per job: the file of 10,000 jobs parses in a few ms.
    const created = this.#codes.map((code, at) => code === NOT_ENDED ? 0 : this.#created[at]);
    const text = JSON.stringify({
      format: FORMAT,
      stamp: this.#stamp ?? null,
      ids: this.#ids.join(","),
      created,
      states: this.#codes.join(""),
    });
    await writeFileAtomic(this.#file, text).catch(() => {
      this.#changed = true;
    });
  }

  #entryAt(at: number): IndexEntry | undefined {
    const state = STATE_OF[this.#codes[at]!];
    const createdAt = this.#created[at];
    return state !== undefined && typeof createdAt === "number" && Number.isFinite(createdAt)
      ? { createdAt, state }
      : undefined;
  }

  /**
   * The position of folder `id` in the last listing, if it has one. `hint` is where a listing
   * (folders()) had it: taken when the listing is still the last, without a map of 10,000 ids.
   */
  #position(id: string, hint?: number): number | undefined {
    if (hint !== undefined && this.#ids[hint] === id) return hint;
    if (!this.#at) {
      this.#at = new Map();
      for (let at = 0; at < this.#ids.length; at++) this.#at.set(this.#ids[at]!, at);
    }
    return this.#at.get(id);
  }

  /** A new listing: what is known of the folders it still has is kept, in new columns. */
  #relisted(names: string[]): void {
    const ids: string[] = [];
    const created: number[] = [];
    const codes: string[] = [];
    const at = new Map<string, number>();
    let added = false;
    for (const id of names) {
      if (at.has(id)) continue;
      const old = this.#position(id);
      at.set(id, ids.length);
      ids.push(id);
      created.push(old === undefined ? 0 : this.#created[old]!);
      codes.push(old === undefined ? NOT_ENDED : this.#codes[old]!);
      added ||= old === undefined;
    }
    if (added || ids.length !== this.#ids.length) this.#changed = true;
    this.#ids = ids;
    this.#created = created;
    this.#codes = codes;
    this.#at = at;
  }

  /** Reads the copy on disk once per process; anything unreadable in it is left out. */
  async #load(): Promise<void> {
    if (this.#loaded) return;
    this.#loaded = true;
    let raw: {
      format?: unknown;
      stamp?: unknown;
      ids?: unknown;
      created?: unknown;
      states?: unknown;
    };
    try {
      raw = JSON.parse(await readFile(this.#file, "utf8"));
    } catch {
      return;
    }
    const { ids, created, states } = raw;
    if (raw.format !== FORMAT || typeof ids !== "string" || typeof states !== "string") return;
    if (!Array.isArray(created)) return;
    let names = ids === "" ? [] : ids.split(",");
    // Columns of different lengths were not written by save(): the index is rebuilt.
    if (names.length !== created.length || names.length !== states.length) return;
    let times: unknown[] = created;
    let codes = states.split("");
    if (!allIds(ids, names.length)) {
      // Not as save() writes it: each name is checked, and a bad one left out.
      const keep = names.map((id) => isValidId(id) && id === id.toLowerCase());
      names = names.filter((_, at) => keep[at]);
      times = times.filter((_, at) => keep[at]);
      codes = codes.filter((_, at) => keep[at]);
    }
    // A letter that names no state, or a creation time that is not a number, reads as a job
    // that had not ended (#entryAt): its folder is read.
    this.#ids = names;
    this.#created = times as number[];
    this.#codes = codes;
    this.#stamp = stampOf(raw.stamp);
  }
}

const NO_FOLDERS: FolderList = { ids: [], entry: () => undefined };

/**
 * Whether `ids` is `count` lower-case job ids joined by commas, as save() writes it: the same
 * answer as isValidId and a lower-case test of each name, in one pass over the text instead of
 * 10,000 tests in a new process.
 */
export function allIds(ids: string, count: number): boolean {
  if (ids.length !== count * (ID_LENGTH + 1) - 1 || /[^0-9a-f,-]/.test(ids)) return false;
  // Four dashes a name, each where a UUID has it; hex digits everywhere else.
  // Counted with indexOf: replaceAll("-", "") took 17-23 ms on the 370 KB of 10,000 ids.
  let dashes = 0;
  for (let at = ids.indexOf("-"); at !== -1; at = ids.indexOf("-", at + 1)) dashes++;
  if (dashes !== 4 * count) return false;
  for (let at = 0; at < ids.length; at += ID_LENGTH + 1) {
    if (
      ids.charCodeAt(at + 8) !== DASH || ids.charCodeAt(at + 13) !== DASH ||
      ids.charCodeAt(at + 18) !== DASH || ids.charCodeAt(at + 23) !== DASH ||
      (at + ID_LENGTH < ids.length && ids.charCodeAt(at + ID_LENGTH) !== COMMA)
    ) return false;
  }
  return true;
}

const DASH = 45;
const COMMA = 44;

function sameStamp(a: DirStamp, b: DirStamp): boolean {
  return a.ino === b.ino && a.mtimeMs === b.mtimeMs && a.ctimeMs === b.ctimeMs;
}

function stampOf(value: unknown): DirStamp | undefined {
  const v = value as Partial<DirStamp> | null;
  const ok = (n: unknown) => typeof n === "number" && Number.isFinite(n);
  return v && ok(v.ino) && ok(v.mtimeMs) && ok(v.ctimeMs)
    ? { ino: v.ino!, mtimeMs: v.mtimeMs!, ctimeMs: v.ctimeMs! }
    : undefined;
}
