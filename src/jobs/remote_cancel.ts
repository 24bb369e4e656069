/**
 * Cancelling across server processes that share a state dir: a job is stopped only by the
 * process that runs it, so another one (`jobs cancel` in a terminal, or a second Claude Code
 * session's server) writes a request into the job's folder, which the owner watches for.
 */
import { setTimeout as delay } from "node:timers/promises";
import { selfIdentity } from "../platform/process_identity.ts";
import { JobError } from "./errors.ts";
import type { JobView, LiveJob } from "./live_job.ts";
import { isTerminal } from "./record.ts";
import type { JobStore } from "./store.ts";

/**
 * How long a cancel waits for the server process that owns a job to act on the request:
 * that process checks every 0.5 s and gives a delegate 3 s to stop.
 */
const REMOTE_CANCEL_WAIT_MS = 10_000;
const POLL_MS = 250;
/** How often a live job's folder is checked for a cancel request from another process. */
const CANCEL_POLL_MS = 500;

/**
 * Watches a live job's folder for a cancel request and calls `cancel` when one comes, with
 * `live.cancelledFrom` set to who asked. Returns what stops the watch.
 */
export function watchForCancel(
  store: JobStore,
  live: LiveJob,
  cancel: (id: string) => Promise<unknown>,
  log?: (line: string) => void,
): () => void {
  let checking = false;
  const timer = setInterval(() => {
    if (checking || isTerminal(live.record.state)) return;
    checking = true;
    store.cancelRequested(live.record.id).then((from) => {
      if (from && !isTerminal(live.record.state)) {
        log?.(`job ${live.record.id}: cancel requested from another process`);
        live.cancelledFrom ??= from;
        return cancel(live.record.id).then(() => {});
      }
    }).catch(() => {}).finally(() => (checking = false));
  }, CANCEL_POLL_MS);
  // Never keeps the process alive on its own.
  (timer as { unref?: () => void }).unref?.();
  return () => clearInterval(timer);
}

/**
 * Cancels a job that another server process runs: asks it through the job's folder, as
 * `jobs cancel` does, and waits a bounded time for that process to record the end.
 * `wasRunning` is true only when the job ended cancelled; still running after the wait is
 * a JobError ("cancel-pending"): the request stays in place.
 */
export async function cancelElsewhere(
  store: JobStore,
  get: (id: string) => Promise<JobView>,
  view: JobView,
  waitMs = REMOTE_CANCEL_WAIT_MS,
): Promise<{ view: JobView; wasRunning: boolean }> {
  const id = view.record.id;
  await store.requestCancel(id, await selfIdentity(), "session");
  const deadline = Date.now() + waitMs;
  while (!isTerminal(view.record.state) && Date.now() < deadline) {
    await delay(POLL_MS);
    view = await get(id);
  }
  if (isTerminal(view.record.state)) return { view, wasRunning: view.record.state === "cancelled" };
  throw new JobError({
    kind: "cancel-pending",
    id,
    ownerPid: view.record.owner?.pid,
    state: view.record.state,
    waitedMs: waitMs,
  });
}
