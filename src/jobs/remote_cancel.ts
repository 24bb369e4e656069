import { DelegateError } from "../errors.ts";
import type { JobView } from "./manager.ts";
import { selfIdentity } from "../platform/process_identity.ts";
import { isTerminal } from "./record.ts";
import type { JobStore } from "./store.ts";

/**
 * How long a cancel waits for the server process that owns a job to act on the request:
 * that process checks every 0.5 s and gives a delegate 3 s to stop.
 */
const REMOTE_CANCEL_WAIT_MS = 10_000;
const POLL_MS = 250;

/**
 * Cancels a job that another server process runs: asks it through the job's folder, as
 * `jobs cancel` does, and waits a bounded time for that process to record the end.
 * `wasRunning` is true only when the job ended cancelled; still running after the wait is
 * an error that says the request stays in place.
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
    await new Promise((r) => setTimeout(r, POLL_MS));
    view = await get(id);
  }
  if (isTerminal(view.record.state)) return { view, wasRunning: view.record.state === "cancelled" };
  throw new DelegateError(
    `Asked the server process that runs job ${id} (pid ${view.record.owner?.pid ?? "?"}) to ` +
      `cancel it, but it is still ${view.record.state} after ${Math.round(waitMs / 1000)}s. ` +
      `The request stays in place and that process acts on it when it can; check with ` +
      `delegate_status({ job_id: "${id}" })`,
  );
}
