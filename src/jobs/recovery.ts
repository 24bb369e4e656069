/**
 * Crash recovery: a record that says queued or running while the server process that owns
 * it is gone is marked interrupted (never "running" forever), and any delegate it left
 * behind is stopped.
 */
import type { Engine } from "../engines/types.ts";
import { isRunning, selfIdentity } from "../platform/process_identity.ts";
import type { EngineName } from "../settings/types.ts";
import { KILL_GRACE_MS } from "./live_job.ts";
import { isTerminal, type JobRecord } from "./record.ts";
import type { JobStore } from "./store.ts";

export interface RecoveryDeps {
  store: JobStore;
  /** The engines, whose job folders hold the facts of a turn nobody watched end. */
  engines: Partial<Record<EngineName, Engine>>;
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
