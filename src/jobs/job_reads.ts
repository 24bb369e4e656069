/**
 * Jobs as their records on disk say, for those this process does not hold in memory (run by
 * another server process, or ended and since forgotten). Each record is reconciled with its
 * owner first, so that a job whose server died reads as interrupted, never as running.
 */
import { DelegateError } from "../errors.ts";
import { JobError } from "./errors.ts";
import { ACTIVITY_KEEP, type JobView } from "./live_job.ts";
import type { EndpointQueue, EndpointQueues } from "./queue/endpoint_queues.ts";
import type { JobRecord } from "./record.ts";
import { reconcile, type RecoveryDeps } from "./orphan_recovery.ts";

/** The view of job `id` (a valid id) from its folder; throws when it is missing or unreadable. */
export async function viewFromDisk(
  id: string,
  recovery: RecoveryDeps,
  endpoints: EndpointQueues,
  queueOf: (record: JobRecord) => EndpointQueue | undefined = () => undefined,
): Promise<JobView> {
  const key = id.toLowerCase();
  const store = recovery.store;
  const read = await store.read(key);
  if (read.kind === "missing") throw new JobError({ kind: "unknown-job", id });
  if (read.kind === "corrupt") {
    throw new DelegateError(
      `Cannot read job ${id}: ${read.reason}. Its folder is ${store.dirOf(key)}`,
    );
  }
  const record = await reconcile(read.record, recovery);
  const engine = recovery.engines[record.engine];
  const activities = engine
    ? await engine.recentActivity(store.dirOf(key), ACTIVITY_KEEP).catch(() => [])
    : [];
  // A job another server queued: where it stands in its endpoint's shared queue.
  const queue = record.state === "queued"
    ? await endpoints.describe(record.id, queueOf(record))
    : undefined;
  return { record, activities, queuePosition: queue?.position ?? 0, ...(queue ? { queue } : {}) };
}

/** Every record on disk, newest first, a live job's from memory; unreadable ones in `corrupt`. */
export async function listRecords(
  recovery: RecoveryDeps,
): Promise<{ records: JobRecord[]; corrupt: Array<{ id: string; reason: string }> }> {
  const store = recovery.store;
  const records: JobRecord[] = [];
  const corrupt: Array<{ id: string; reason: string }> = [];
  for (const id of await store.ids()) {
    const live = recovery.liveRecord(id);
    if (live) {
      records.push(live);
      continue;
    }
    const read = await store.read(id).catch((e) => ({
      kind: "corrupt" as const,
      reason: String(e),
    }));
    if (read.kind === "ok") records.push(await reconcile(read.record, recovery));
    else if (read.kind === "corrupt") corrupt.push({ id, reason: read.reason });
  }
  records.sort((a, b) => b.createdAt - a.createdAt);
  return { records, corrupt };
}
