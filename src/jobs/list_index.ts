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
import { readdirSync } from "node:fs";
import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { writeFileAtomic } from "../platform/atomic_write.ts";
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

/** What the index knows of an ended job. */
export interface IndexEntry {
  createdAt: number;
  state: JobState;
}

/** The state dir as stat() saw it: which directory, and when its entries last changed. */
interface DirStamp {
  ino: number;
  mtimeMs: number;
  ctimeMs: number;
}

export class ListIndex {
  /** Every job folder as last listed; an entry for an ended job, null for the others. */
  readonly #folders = new Map<string, IndexEntry | null>();
  /** The state dir when the folders were listed, if that listing can be trusted later. */
  #stamp: DirStamp | undefined;
  readonly #file: string;
  #loaded = false;
  #changed = false;

  constructor(readonly stateDir: string) {
    this.#file = join(stateDir, LIST_INDEX_DIR, LIST_INDEX_FILE);
  }

  /**
   * The names of the job folders (valid ids): the last listing while the state dir has not
   * changed since, else a new one. None when the state dir cannot be read.
   */
  async ids(): Promise<string[]> {
    await this.#load();
    let now: DirStamp;
    let seenAt: number;
    try {
      const s = await stat(this.stateDir);
      seenAt = Date.now();
      now = { ino: s.ino, mtimeMs: s.mtimeMs, ctimeMs: s.ctimeMs };
    } catch {
      return [];
    }
    if (this.#stamp && sameStamp(this.#stamp, now)) return [...this.#folders.keys()];
    let names: string[];
    try {
      // Names only: a type for each of 10,000 entries costs more than the rare stray file,
      // which reads as a folder without a record. Synchronous: on Deno the asynchronous
      // readdir costs twice the CPU time (56 against 27 ms for 10,000 names), all of it on
      // this thread anyway.
      names = readdirSync(this.stateDir).filter(isValidId).map((n) => n.toLowerCase());
    } catch {
      return [];
    }
    const listed = new Set(names);
    for (const id of this.#folders.keys()) {
      if (listed.has(id)) continue;
      this.#folders.delete(id);
      this.#changed = true;
    }
    for (const id of names) {
      if (this.#folders.has(id)) continue;
      this.#folders.set(id, null);
      this.#changed = true;
    }
    // Stat before the listing: whatever changed since is in it, and changes the time again.
    if (seenAt - now.mtimeMs >= SETTLED_MS) {
      this.#stamp = now;
      this.#changed = true;
    } else if (this.#stamp) {
      this.#stamp = undefined;
      this.#changed = true;
    }
    return names;
  }

  /** The entry of the job in folder `id` (lower case), if it had ended when last read. */
  get(id: string): IndexEntry | undefined {
    return this.#folders.get(id) ?? undefined;
  }

  /**
   * Learns a record read from the job's folder: kept when it had ended, and otherwise read
   * again at the next listing.
   */
  learn(id: string, record: JobRecord): void {
    const known = this.#folders.get(id);
    if (!isTerminal(record.state)) return this.forget(id);
    if (known?.createdAt === record.createdAt && known.state === record.state) return;
    this.#folders.set(id, { createdAt: record.createdAt, state: record.state });
    this.#changed = true;
  }

  /** The folder's record cannot be read, has not ended or is gone: read it next time. */
  forget(id: string): void {
    if (this.#folders.get(id)) {
      this.#folders.set(id, null);
      this.#changed = true;
    }
  }

  /**
   * Writes the copy on disk when something changed since it was read or written. A failure
   * (a full disk, a read-only state dir) costs the next process the reads, nothing more.
   */
  async save(): Promise<void> {
    if (!this.#changed) return;
    this.#changed = false;
    // Three columns rather than an object per job: the file of 10,000 jobs parses in a few ms.
    const ids: string[] = [];
    const created: number[] = [];
    let states = "";
    for (const [id, e] of this.#folders) {
      ids.push(id);
      created.push(e?.createdAt ?? 0);
      states += (e && STATE_CODES[e.state]) ?? NOT_ENDED;
    }
    const text = JSON.stringify({
      format: FORMAT,
      stamp: this.#stamp ?? null,
      ids: ids.join(","),
      created,
      states,
    });
    await writeFileAtomic(this.#file, text).catch(() => {
      this.#changed = true;
    });
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
    const names = ids === "" ? [] : ids.split(",");
    // Columns of different lengths were not written by save(): the index is rebuilt.
    if (names.length !== created.length || names.length !== states.length) return;
    for (let i = 0; i < names.length; i++) {
      const id = names[i]!;
      if (!isValidId(id) || id !== id.toLowerCase()) continue;
      const state = STATE_OF[states[i]!];
      const createdAt = created[i] as unknown;
      const ok = state !== undefined && typeof createdAt === "number" && Number.isFinite(createdAt);
      this.#folders.set(id, ok ? { createdAt, state } : null);
    }
    this.#stamp = stampOf(raw.stamp);
  }
}

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
