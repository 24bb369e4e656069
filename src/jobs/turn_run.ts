/**
 * Running one turn of a job: waiting for its session's earlier turns and for a slot,
 * starting it on its engine with the callbacks that write progress into the record, the
 * job timeout, and recording how it ended.
 */
import { errorMessage } from "../errors.ts";
import { type Engine, failedTurn, type TurnOutcome } from "../engines/types.ts";
import { identityOf } from "../platform/process_identity.ts";
import type { EngineName } from "../settings/types.ts";
import {
  ACTIVITY_KEEP,
  keptActivity,
  KILL_GRACE_MS,
  type LiveJob,
  type ManagerConfig,
} from "./live_job.ts";
import { applyOutcome, applyUnwrittenEnd } from "./outcome.ts";
import type { QueueLanes } from "./queue.ts";
import { isTerminal } from "./record.ts";
import type { SessionOrder } from "./session_order.ts";
import type { JobStore } from "./store.ts";
import { finishWorktree, prepareWorktree } from "./worktree_turn.ts";

/** Changed files a record names; past it they are counted (`changedFilesMore`). */
export const MAX_CHANGED_KEPT = 1000;

export interface TurnRunDeps {
  store: JobStore;
  /** The engine of a job; throws when it is not available. */
  engine(name: EngineName): Engine;
  lanes: QueueLanes;
  sessions: SessionOrder;
  config: ManagerConfig;
  /** Why the server is stopping, once it is. */
  shutdownReason(): string;
  /** A job's end is recorded: forget old finished jobs, wake waiting turns. */
  ended(): void;
}

/**
 * Runs a queued job to its end and records it. When a cancel or shutdown takes the job out
 * of a line before it runs, that caller finishes it instead.
 */
export async function runJob(live: LiveJob, deps: TurnRunDeps): Promise<void> {
  const record = live.record;
  // The session's earlier turns come first, so a follow-up waiting for them holds no slot.
  try {
    if (!(await deps.sessions.awaitTurn(live))) return;
  } catch (e) {
    return await finishJob(
      live,
      failedTurn(
        `Cannot run job: cannot read the turns of session ${record.sessionId} (${errorMessage(e)})`,
      ),
      deps,
    );
  }
  const lost = (reason: string) => {
    live.slotLost ??= reason;
    live.stopReason ??= "slot-lost";
    void live.turn?.stop(KILL_GRACE_MS);
  };
  if (!(await deps.lanes.enter(record.id, record.backend, live.placed, lost))) return;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let outcome: TurnOutcome | undefined;
  try {
    if (!live.stopReason) outcome = await startTurn(live, deps, (t) => (timer = t));
  } catch (e) {
    outcome = failedTurn(`Cannot run job: ${(e as Error).message}`);
  } finally {
    clearTimeout(timer);
    deps.lanes.exit(record.backend, record.id);
  }
  await finishJob(live, outcome, deps);
}

async function startTurn(
  live: LiveJob,
  deps: TurnRunDeps,
  setTimer: (t: ReturnType<typeof setTimeout>) => void,
): Promise<TurnOutcome> {
  const { store } = deps;
  const record = live.record;
  record.state = "running";
  record.startedAt = Date.now();
  live.placed();
  // Decided now, not when the follow-up was sent: the turns before it have ended, and the
  // newest one that got its engine session going is the one this turn continues.
  const continues = (await deps.sessions.records(record.sessionId))
    .filter((r) => r.turn < record.turn && r.sessionCreated).at(-1);
  const resume = continues !== undefined;
  if (continues) record.parentJobId = continues.id;
  else delete record.parentJobId;
  await store.write(record);
  const dir = store.dirOf(record.id);
  const cwd = record.worktree ? await prepareWorktree(record, store) : record.cwd;
  const { path, gitDir } = record.worktree ?? {};
  // Before the engine starts: this process may have been stopped since the slot was won.
  await deps.lanes.gate.stillHolds(record.id);
  if (live.stopReason) return failedTurn("Stopped before the turn started");
  const changed = new Set(record.changedFiles ?? []);
  const turn = await deps.engine(record.engine).start(
    {
      jobId: record.id,
      sessionId: record.sessionId,
      turn: record.turn,
      resume,
      model: record.model,
      cwd,
      ...(path && gitDir ? { worktree: { path, gitDir } } : {}),
      options: record.options,
      dir,
      promptPath: store.promptPath(record.id),
      ...(record.backend !== undefined ? { backend: record.backend } : {}),
      ...(record.parentJobId ? { previousDir: store.dirOf(record.parentJobId) } : {}),
    },
    {
      activity: (a) => {
        live.activities.push(keptActivity(a));
        if (live.activities.length > ACTIVITY_KEEP) live.activities.shift();
      },
      toolCall: (info) => {
        record.toolCalls++;
        if (info?.recovered) record.toolCallsRecovered = (record.toolCallsRecovered ?? 0) + 1;
      },
      warning: (text) => {
        const warnings = (record.warnings ??= []);
        if (!warnings.includes(text)) warnings.push(text);
      },
      contextElided: (count) => {
        record.contextElisions = (record.contextElisions ?? 0) + count;
      },
      sessionStarted: (info) => {
        record.sessionCreated = true;
        if (info.permissionMode) record.effectivePermissionMode = info.permissionMode;
        store.write(record).catch(() => {});
      },
      commandRun: (run) => {
        (record.commands ??= []).push(run);
      },
      fileChanged: (path) => {
        if (changed.has(path)) return;
        changed.add(path);
        // A command can change a hundred thousand files (an install): the record keeps the
        // first ones and counts the rest.
        const files = (record.changedFiles ??= []);
        if (files.length < MAX_CHANGED_KEPT) files.push(path);
        else record.changedFilesMore = (record.changedFilesMore ?? 0) + 1;
      },
      changesPartial: (why) => {
        record.changedFilesPartial = why;
      },
      childStarted: (pid) => {
        identityOf(pid).then((child) => {
          if (child && !isTerminal(record.state)) {
            record.child = child;
            return store.write(record);
          }
        }).catch(() => {});
      },
    },
  );
  live.turn = turn;
  if (live.stopReason) void turn.stop(KILL_GRACE_MS);
  setTimer(setTimeout(() => {
    live.stopReason ??= "timeout";
    void turn.stop(KILL_GRACE_MS);
  }, deps.config.jobTimeoutMs));
  return await turn.done;
}

/**
 * Records a job's end: its state from the outcome (none when it never ran) and the reason
 * it was stopped, written through to disk. Resolves `live.finished`.
 */
export async function finishJob(
  live: LiveJob,
  outcome: TurnOutcome | undefined,
  deps: TurnRunDeps,
): Promise<void> {
  const record = live.record;
  live.stopWatch?.();
  // Finished jobs stay in memory for a while; the turn holds its outcome, whose answer (on disk
  // from here) can be millions of characters.
  delete live.turn;
  applyOutcome(record, outcome, live.stopReason, {
    jobTimeoutMs: deps.config.jobTimeoutMs,
    shutdownReason: deps.shutdownReason(),
    ...(live.cancelledFrom ? { cancelledFrom: live.cancelledFrom } : {}),
    ...(live.slotLost ? { slotLost: live.slotLost } : {}),
  });
  // Only a turn that ran: a follow-up cancelled in the queue must not commit its
  // predecessor's work in progress.
  if (outcome && record.startedAt !== undefined) await finishWorktree(record, deps.store);
  try {
    await deps.store.writeFinal(record, outcome?.resultText ?? "");
  } catch (e) {
    // What is not on disk did not happen for a follow-up or another process: say so, and
    // never report such a job as completed. The store keeps trying to write it.
    applyUnwrittenEnd(record, deps.store.dirOf(record.id), errorMessage(e));
    deps.config.log?.(`job ${record.id}: ${record.errorText}`);
  }
  if (outcome) await Promise.resolve(deps.config.onFinished?.(record, outcome)).catch(() => {});
  live.resolveFinished();
  deps.ended();
}
