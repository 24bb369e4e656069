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

/** The newest `limit` jobs (Infinity: all) in state `state` (undefined: any). */
export async function listPage(
  recovery: RecoveryDeps,
  options: { state?: JobState; limit: number },
): Promise<ListPage> {
  const { store } = recovery;
  const index = store.listIndex;
  const ids = await index.ids();
  const corrupt: ListPage["corrupt"] = [];
  const candidates: Candidate[] = [];
  for (const id of ids) {
    const live = recovery.liveRecord(id);
    if (live) {
      candidates.push({ id, createdAt: live.createdAt, state: live.state, record: live });
      continue;
    }
    const known = index.get(id);
    if (known) {
      candidates.push({ id, ...known });
      continue;
    }
    const record = await readRecord(recovery, id, corrupt);
    if (record) candidates.push({ id, createdAt: record.createdAt, state: record.state, record });
  }
  candidates.sort((a, b) => b.createdAt - a.createdAt);
  const matching = candidates.filter((c) =>
    options.state === undefined || c.state === options.state
  );
  let total = matching.length;
  const records: JobRecord[] = [];
  for (const c of matching) {
    if (records.length >= options.limit) break;
    // A row from the index is read now: its folder may have gone, or changed by hand.
    const record = c.record ?? (await readRecord(recovery, c.id, corrupt));
    if (record && (options.state === undefined || record.state === options.state)) {
      records.push(record);
    } else {
      total--;
    }
  }
  await index.save();
  // An entry replaced above may have moved; the rows stay newest first.
  records.sort((a, b) => b.createdAt - a.createdAt);
  return { records, total, corrupt };
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
