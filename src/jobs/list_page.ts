/**
 * One page of jobs for a listing (`delegate_list`, `ollama-delegate jobs`): the newest `limit`
 * jobs, optionally of one state, and how many match in all. Ended jobs are ordered by the
 * list index (list_index.ts), so only the folders of the rows shown, of jobs that had not
 * ended, and of jobs the index has not seen yet are read (issue 34, item 4). Every row shown is
 * read from its folder at this call: a listing never shows what the folders do not say.
 */
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
  const ids = await index.ids();
  const corrupt: ListPage["corrupt"] = [];
  // What the index cannot answer for is read now: jobs held here, not ended, or new to it.
  const fresh = new Map<string, JobRecord>();
  for (const id of ids) {
    const live = recovery.liveRecord(id);
    if (live) fresh.set(id, live);
    else if (!index.get(id)) {
      const record = await readRecord(recovery, id, corrupt);
      if (record) fresh.set(id, record);
    }
  }
  let page = await readNewest(recovery, ids, fresh, options, options.limit + SPARE, corrupt);
  if (page.short) {
    // More rows than the spare ones were gone: choose again among all (rare).
    page = await readNewest(recovery, ids, fresh, options, Infinity, corrupt);
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
  ids: readonly string[],
  fresh: ReadonlyMap<string, JobRecord>,
  options: { state?: JobState; limit: number },
  want: number,
  corrupt: ListPage["corrupt"],
): Promise<{ records: JobRecord[]; total: number; short: boolean }> {
  const index = recovery.store.listIndex;
  let total = 0;
  // Newest first, at most `want`: a page of 20 in one pass over 10,000 jobs, without sorting
  // them all; every job (--all) is sorted once.
  const all = want >= ids.length;
  const chosen: Candidate[] = [];
  for (const id of ids) {
    const record = fresh.get(id);
    const known = record ?? index.get(id);
    if (!known || (options.state !== undefined && known.state !== options.state)) continue;
    total++;
    const last = chosen.at(-1);
    if (!all && chosen.length >= want && last && last.createdAt >= known.createdAt) continue;
    const c: Candidate = { id, createdAt: known.createdAt, state: known.state };
    if (record) c.record = record;
    if (all) {
      chosen.push(c);
      continue;
    }
    let at = chosen.length;
    while (at > 0 && chosen[at - 1]!.createdAt < known.createdAt) at--;
    chosen.splice(at, 0, c);
    if (chosen.length > want) chosen.pop();
  }
  if (all) chosen.sort((a, b) => b.createdAt - a.createdAt);
  const records: JobRecord[] = [];
  let dropped = 0;
  for (const c of chosen) {
    if (records.length >= options.limit) break;
    // A row from the index is read now: its folder may have gone, or changed by hand.
    const record = c.record ?? (await readRecord(recovery, c.id, corrupt));
    if (record && (options.state === undefined || record.state === options.state)) {
      records.push(record);
    } else {
      dropped++;
    }
  }
  // An entry replaced above may have moved; the rows stay newest first.
  records.sort((a, b) => b.createdAt - a.createdAt);
  const short = records.length < options.limit && chosen.length < total;
  return { records, total: total - dropped, short };
}

/**
 * The record in folder `id`, reconciled with its owner, and what the index learns of it;
 * undefined when the folder has no readable record (an unreadable one goes to `corrupt`).
 */
async function readRecord(
  recovery: RecoveryDeps,
  id: string,
  corrupt: ListPage["corrupt"],
): Promise<JobRecord | undefined> {
  const { store } = recovery;
  const read = await store.read(id).catch((e) => ({
    kind: "corrupt" as const,
    reason: String(e),
  }));
  if (read.kind !== "ok") {
    store.listIndex.forget(id);
    if (read.kind === "corrupt") corrupt.push({ id, reason: read.reason });
    return undefined;
  }
  // Only an end read from the folder is indexed: one this process could not write yet
  // (store.ts writeFinal) is not on disk, and a job reconciled here ends on disk after.
  if (isTerminal(read.record.state) && !store.isUnwritten(id)) {
    store.listIndex.learn(id, read.record);
  } else {
    store.listIndex.forget(id);
  }
  return await reconcile(read.record, recovery);
}
