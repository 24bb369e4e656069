/**
 * Crash recovery: a record that says queued or running while the server process that owns
 * it is gone is marked interrupted (never "running" forever), and any delegate it left
 * behind is stopped: when someone reads the job, and for every such job once a server has
 * started (startBackgroundSweep).
 */
import type { Engine } from "../engines/types.ts";
import { isRunning, selfIdentity } from "../platform/process_identity.ts";
import { KILL_GRACE_MS } from "./live_job.ts";
import { isTerminal, type JobRecord } from "./record.ts";
import type { JobStore } from "./store.ts";
import { markUnread } from "./unread.ts";

export interface RecoveryDeps {
  store: JobStore;
  /** The engines, whose job folders hold the facts of a turn nobody watched end. */
  engines: Record<string, Engine>;
  /** The record of a job this process holds, by id as given. */
  liveRecord(id: string): JobRecord | undefined;
}

/** The record as it stands: itself while its owner runs, else marked interrupted. */
export async function reconcile(record: JobRecord, deps: RecoveryDeps): Promise<JobRecord> {
  if (isTerminal(record.state)) return record;
  const self = await selfIdentity();
  const ownedHere = record.owner?.pid === self.pid && record.owner.startTime === self.startTime;
  if (record.owner && !ownedHere && (await isRunning(record.owner))) return record;
  // A job of this process that is being set up or still runs is not an orphan.
  const live = ownedHere ? deps.liveRecord(record.id.toLowerCase()) : undefined;
  if (live) return live;
  if (record.child && (await isRunning(record.child))) {
    const { killTree } = await import("../platform/tree_kill.ts");
    await killTree(record.child.pid, { graceMs: KILL_GRACE_MS }).catch(() => {});
  }
  const dir = deps.store.dirOf(record.id);
  const facts = await deps.engines[record.engine]?.turnFacts(dir).catch(() => undefined);
  if (facts) {
    record.toolCalls = Math.max(record.toolCalls, facts.toolCalls);
    record.sessionCreated ||= facts.sessionCreated;
    if (facts.permissionMode) record.effectivePermissionMode ??= facts.permissionMode;
  }
  record.state = "interrupted";
  record.endedAt = Date.now();
  record.errorText = `The server running this job (pid ${record.owner?.pid ?? "?"}) stopped ` +
    `before it finished; follow up to continue the session`;
  delete record.child;
  await deps.store.write(record).catch(() => {});
  // Its session's server is gone: nobody will collect it unless told (unread.ts).
  if (record.project !== undefined) {
    await markUnread(deps.store.stateDir, record.project, record.id).catch(() => {});
  }
  return record;
}

/**
 * Marks every job whose server process is gone as interrupted and stops the delegate tree
 * it recorded: orphans must not wait until someone reads their job. `isOurs` names the jobs
 * this process holds or is setting up. Returns the ids recovered.
 */
export async function recoverOrphans(
  deps: RecoveryDeps,
  isOurs: (id: string) => boolean,
): Promise<string[]> {
  const recovered: string[] = [];
  for (const id of await deps.store.ids()) {
    if (isOurs(id)) continue;
    const read = await deps.store.read(id).catch(() => undefined);
    if (read?.kind !== "ok" || isTerminal(read.record.state)) continue;
    if (isTerminal((await reconcile(read.record, deps)).state)) recovered.push(id);
  }
  return recovered;
}

/** A moment after start-up, so that `initialize` never waits for the sweep. */
const SWEEP_DELAY_MS = 500;

/**
 * Recovers, in the background, the jobs of server processes that died (a crash, a SIGKILL):
 * each becomes interrupted and the delegate tree it recorded is stopped, without waiting
 * for someone to read the job. The timer never keeps the process alive. Resolves with the
 * ids recovered.
 */
export function startBackgroundSweep(
  recover: () => Promise<string[]>,
  log: (line: string) => void,
  delayMs = SWEEP_DELAY_MS,
): Promise<string[]> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      recover().then((ids) => {
        if (ids.length > 0) {
          log(
            `recovered ${ids.length} job(s) whose server had stopped (now interrupted, their ` +
              `delegates stopped): ${ids.slice(0, 5).join(", ")}${ids.length > 5 ? ", ..." : ""}`,
          );
        }
        resolve(ids);
      }, (e) => {
        log(`cannot recover the jobs of stopped servers: ${(e as Error).message}`);
        resolve([]);
      });
    }, delayMs);
    (timer as { unref?: () => void }).unref?.();
  });
}
