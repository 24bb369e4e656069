/**
 * One page of jobs for a listing (`delegate_list`, `ollama-delegate jobs`): the newest `limit`
 * jobs, optionally of one state, and how many match in all. Ended jobs are ordered by the
 * list index (list_index.ts), so only the folders of the rows shown, of jobs that had not
 * ended, and of jobs the index has not seen yet are read (issue 34, item 4). Every row shown is
 * read from its folder at this call: a listing never shows what the folders do not say.
 */
import type { FolderList } from "./list_index.ts";
import { isTerminal, type JobRecord, type JobState } from "./record.ts";
import { reconcile, type RecoveryDeps } from "./orphan_recovery.ts";

export interface ListPage {
  /** The jobs shown, newest first. */
  records: JobRecord[];
  /** How many jobs match, shown or not. */
  total: number;
  /** Folders whose record cannot be read: every one, shown or not. */
  corrupt: Array<{ id: string; reason: string }>;
}

interface Candidate {
  id: string;
  /** Its position in the listing (FolderList). */
  at: number;
  createdAt: number;
  state: JobState;
  /** Read at this call already (not from the index). */
  record?: JobRecord;
}

/** Rows chosen beyond `limit`, for rows whose folder turns out gone or changed when read. */
const SPARE = 8;

/** The newest `limit` jobs (Infinity: all) in state `state` (undefined: any). */
export async function listPage(
  recovery: RecoveryDeps,
  options: { state?: JobState; limit: number },
): Promise<ListPage> {
  const { store } = recovery;
  const index = store.listIndex;
  const folders = await index.folders();
  const { ids } = folders;
  const corrupt: ListPage["corrupt"] = [];
  // What the index cannot answer for is read now: jobs held here, not ended, or new to it.
  const fresh = new Map<string, JobRecord>();
  const unknown: Array<{ id: string; at: number }> = [];
  for (let at = 0; at < ids.length; at++) {
    const id = ids[at]!;
    const live = recovery.liveRecord(id);
    if (live) fresh.set(id, live);
    else if (!folders.entry(at)) unknown.push({ id, at });
  }
  const read = await readRecords(recovery, unknown, corrupt);
  unknown.forEach(({ id }, i) => {
    if (read[i]) fresh.set(id, read[i]);
  });
  let page = await readNewest(recovery, folders, fresh, options, options.limit + SPARE, corrupt);
  if (page.short) {
    // More rows than the spare ones were gone: choose again among all (rare).
    page = await readNewest(recovery, folders, fresh, options, Infinity, corrupt);
  }
  await index.save();
  const seen = new Set<string>();
  const unreadable = corrupt.filter((c) => !seen.has(c.id) && seen.add(c.id));
  return { records: page.records, total: page.total, corrupt: unreadable };
}

/**
 * Chooses the newest `want` matching jobs by what is known of them (read now or indexed), then
 * reads those from the index and keeps the first `limit` that still match. `short` when fewer
 * than `limit` were kept while more matched.
 */
async function readNewest(
  recovery: RecoveryDeps,
  folders: FolderList,
  fresh: ReadonlyMap<string, JobRecord>,
  options: { state?: JobState; limit: number },
  want: number,
  corrupt: ListPage["corrupt"],
): Promise<{ records: JobRecord[]; total: number; short: boolean }> {
  const { ids } = folders;
  let total = 0;
  // Newest first, at most `want`: a page of 20 in one pass over 10,000 jobs, without sorting
  // them all; every job (--all) is sorted once.
  const all = want >= ids.length;
  const chosen: Candidate[] = [];
  for (let at = 0; at < ids.length; at++) {
    const id = ids[at]!;
    const record = fresh.get(id);
    const known = record ?? folders.entry(at);
    if (!known || (options.state !== undefined && known.state !== options.state)) continue;
    total++;
    const last = chosen.at(-1);
    if (!all && chosen.length >= want && last && last.createdAt >= known.createdAt) continue;
    const c: Candidate = { id, at, createdAt: known.createdAt, state: known.state };
    if (record) c.record = record;
    if (all) {
      chosen.push(c);
      continue;
    }
    let place = chosen.length;
    while (place > 0 && chosen[place - 1]!.createdAt < known.createdAt) place--;
    chosen.splice(place, 0, c);
    if (chosen.length > want) chosen.pop();
  }
  if (all) chosen.sort((a, b) => b.createdAt - a.createdAt);
  const records: JobRecord[] = [];
  let dropped = 0;
  // A row from the index is read now: its folder may have gone, or changed by hand. As many
  // as are still missing are read at once, so a row that fails is replaced by the next.
  for (let next = 0; records.length < options.limit && next < chosen.length;) {
    const batch = chosen.slice(next, next + (options.limit - records.length));
    next += batch.length;
    const read = await readRecords(recovery, batch, corrupt);
    for (const record of read) {
      if (record && (options.state === undefined || record.state === options.state)) {
        records.push(record);
      } else {
        dropped++;
      }
    }
  }
  // An entry replaced above may have moved; the rows stay newest first.
  records.sort((a, b) => b.createdAt - a.createdAt);
  const short = records.length < options.limit && chosen.length < total;
  return { records, total: total - dropped, short };
}

/** Folders read at once: a page's rows, or every job of a first listing, without a wait each. */
const READ_WIDTH = 16;

/**
 * The records of `folders` (those given `record` already read), READ_WIDTH at a time, in the
 * order given; unreadable ones go to `corrupt` in that order too.
 */
async function readRecords(
  recovery: RecoveryDeps,
  folders: ReadonlyArray<{ id: string; at: number; record?: JobRecord }>,
  corrupt: ListPage["corrupt"],
): Promise<Array<JobRecord | undefined>> {
  const out: Array<JobRecord | undefined> = new Array(folders.length);
  const bad: ListPage["corrupt"][] = folders.map(() => []);
  let next = 0;
  const reader = async () => {
    for (let i = next++; i < folders.length; i = next++) {
      const f = folders[i]!;
      out[i] = f.record ?? await readRecord(recovery, f.id, bad[i]!, f.at);
    }
  };
  await Promise.all(Array.from({ length: Math.min(READ_WIDTH, folders.length) }, reader));
  for (const b of bad) corrupt.push(...b);
  return out;
}

/**
 * The record in folder `id`, reconciled with its owner, and what the index learns of it;
 * undefined when the folder has no readable record (an unreadable one goes to `corrupt`).
 * `at`: the folder's position in the listing.
 */
async function readRecord(
  recovery: RecoveryDeps,
  id: string,
  corrupt: ListPage["corrupt"],
  at: number,
): Promise<JobRecord | undefined> {
  const { store } = recovery;
  const read = await store.read(id).catch((e) => ({
    kind: "corrupt" as const,
    reason: String(e),
  }));
  if (read.kind !== "ok") {
    store.listIndex.forget(id, at);
    if (read.kind === "corrupt") corrupt.push({ id, reason: read.reason });
    return undefined;
  }
  // Only an end read from the folder is indexed: one this process could not write yet
  // (store.ts writeFinal) is not on disk, and a job reconciled here ends on disk after.
  if (isTerminal(read.record.state) && !store.isUnwritten(id)) {
    store.listIndex.learn(id, read.record, at);
  } else {
    store.listIndex.forget(id, at);
  }
  return await reconcile(read.record, recovery);
}
