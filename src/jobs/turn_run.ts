/**
 * Running one turn of a job: waiting for its session's earlier turns and for a slot,
 * starting it on its engine with the callbacks that write progress into the record, the
 * job timeout, and recording how it ended.
 */
import { errorMessage } from "../errors.ts";
import { type Engine, failedTurn, type TurnOutcome, type TurnSpec } from "../engines/types.ts";
import { KILL_GRACE_MS, type LiveJob, type ManagerConfig } from "./live_job.ts";
import { claimEvidence } from "./checks/claim_evidence.ts";
import { checkClaims } from "./checks/claims.ts";
import { appendLedger } from "./ledger/ledger.ts";
import { markUnread } from "./unread.ts";
import { applyOutcome, applyUnwrittenEnd } from "./outcome.ts";
import type { EndpointPlacer } from "./endpoints/endpoint_pool.ts";
import { type Seat, takeSeat } from "./endpoints/endpoint_turn.ts";
import type { JobQueues } from "./queue/job_queues.ts";
import { runRounds } from "./rounds.ts";
import type { SessionOrder } from "./session_order.ts";
import type { JobStore } from "./store.ts";
import { turnSink } from "./turn_sink.ts";
import { JobTrace, recordJobEnd } from "./job_trace.ts";
import { finishWorktree, prepareWorktree } from "./worktree/turn.ts";

/** The most of a final text read for claims. */
const CLAIMS_TEXT_CHARS = 200_000;

export interface TurnRunDeps {
  store: JobStore;
  /** The engine of a job; throws when it is not available. */
  engine(name: string): Engine;
  queues: JobQueues;
  /** Places turns on an endpoint of their backend's pool; absent = the backend's own URL. */
  placer?: EndpointPlacer;
  sessions: SessionOrder;
  config: ManagerConfig;
  /** Why the server is stopping, once it is. */
  shutdownReason(): string;
  /** A job's end is recorded: forget old finished jobs, wake waiting turns. */
  ended(): void;
}

/**
 * Runs a queued job to its end and records it. When a cancel or shutdown takes the job out
 * of a queue before it runs, that caller finishes it instead.
 */
export async function runJob(live: LiveJob, deps: TurnRunDeps): Promise<void> {
  const record = live.record;
  // The session's earlier turns come first, so a follow-up waiting for them holds no slot.
  try {
    if (!(await deps.sessions.take(live))) return;
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
  const seat = await takeSeat(live, deps, lost);
  if (seat === "left") return;
  if (seat === "stopped") return await finishJob(live, undefined, deps);
  if ("refused" in seat) return await finishJob(live, failedTurn(seat.refused), deps);
  let timer: ReturnType<typeof setTimeout> | undefined;
  let outcome: TurnOutcome | undefined;
  try {
    if (!live.stopReason) outcome = await startTurn(live, deps, seat, (t) => (timer = t));
  } catch (e) {
    outcome = failedTurn(`Cannot run job: ${(e as Error).message}`);
  } finally {
    clearTimeout(timer);
    seat.giveBack();
  }
  await finishJob(live, outcome, deps);
}

async function startTurn(
  live: LiveJob,
  deps: TurnRunDeps,
  seat: Seat,
  setTimer: (t: ReturnType<typeof setTimeout>) => void,
): Promise<TurnOutcome> {
  const { store } = deps;
  const record = live.record;
  record.state = "running";
  record.startedAt = Date.now();
  live.placed();
  // Decided now, not when the follow-up was sent: the turns before it have ended, and the
  // newest one that got its engine session going is the one this turn continues.
  const earlier = (await deps.sessions.records(record.sessionId))
    .filter((r) => r.turn < record.turn);
  const continues = earlier.filter((r) => r.sessionCreated).at(-1);
  const resume = continues !== undefined;
  if (continues) record.parentJobId = continues.id;
  else delete record.parentJobId;
  await store.write(record);
  const dir = store.dirOf(record.id);
  const cwd = record.worktree ? await prepareWorktree(record, store) : record.cwd;
  const { path, gitDir } = record.worktree ?? {};
  // Before the engine starts: this process may have been stopped since the slot was won.
  await deps.queues.endpoints.stillHolds(record.id);
  if (live.stopReason) return failedTurn("Stopped before the turn started");
  const endpoint = seat.endpoint();
  const backend = seat.backend;
  const spec: TurnSpec = {
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
    ...(backend ? { backend } : {}),
    ...(endpoint ? { endpoint } : {}),
    ...(record.parentJobId ? { previousDir: store.dirOf(record.parentJobId) } : {}),
  };
  // The job's time limit covers all its rounds: whichever runs when it passes is stopped.
  setTimer(setTimeout(() => {
    live.stopReason ??= "timeout";
    void live.turn?.stop(KILL_GRACE_MS);
  }, deps.config.jobTimeoutMs));
  const telemetry = deps.config.telemetry;
  if (telemetry?.enabled) {
    const known = backend && !("unknown" in backend) ? backend : undefined;
    live.trace = new JobTrace(telemetry, record, live.traceParent, {
      ...(endpoint?.url ?? known?.url ? { url: endpoint?.url ?? known?.url } : {}),
      ...(known ? { kind: known.kind } : {}),
    });
  }
  const sink = turnSink(live, store, deps.config.asker);
  return await runRounds(live, deps.engine(record.engine), spec, live.trace?.sink(sink) ?? sink, {
    store,
    config: deps.config,
    earlier,
  });
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
  live.stateUntilRecorded ??= record.state;
  try {
    live.stopWatch?.();
    // Finished jobs stay in memory for a while; the turn holds its outcome, whose answer (on disk
    // from here) can be millions of characters.
    delete live.turn;
    applyOutcome(record, outcome, live.stopReason, {
      jobTimeoutMs: deps.config.jobTimeoutMs,
      shutdownReason: deps.shutdownReason(),
      ...(live.cancelledFrom ? { cancelledFrom: live.cancelledFrom } : {}),
      ...(live.slotLost ? { slotLost: live.slotLost } : {}),
      ...(live.budgetExhausted ? { budgetExhausted: live.budgetExhausted } : {}),
    });
    // Only a turn that ran: a follow-up cancelled in the queue must not commit its
    // predecessor's work in progress.
    if (outcome && record.startedAt !== undefined) await finishWorktree(record, deps.store);
    if (outcome?.resultText) {
      // The model's words against the server's evidence; a long answer is read in its first part.
      const text = outcome.resultText.slice(0, CLAIMS_TEXT_CHARS);
      const evidence = await claimEvidence(record, deps.store.dirOf(record.id)).catch(() =>
        undefined
      );
      const claims = evidence ? checkClaims(text, evidence) : [];
      if (claims.length > 0) record.claims = claims.slice(0, 10);
    }
    try {
      await deps.store.writeFinal(record, outcome?.resultText ?? "");
    } catch (e) {
      // What is not on disk did not happen for a follow-up or another process: say so, and
      // never report such a job as completed. The store keeps trying to write it.
      applyUnwrittenEnd(record, deps.store.dirOf(record.id), errorMessage(e));
      deps.config.log?.(`job ${record.id}: ${record.errorText}`);
    }
    // Unread until its result reaches the orchestrator, which may never come to look; marked
    // before any reader can see the end, so that a reply that carries it comes after.
    if (record.project !== undefined) {
      await markUnread(deps.store.stateDir, record.project, record.id).catch((e) =>
        deps.config.log?.(`job ${record.id}: cannot mark it unread: ${errorMessage(e)}`)
      );
    }
    // Its end is on disk (or kept as the truth in memory): from here it reads as ended, here
    // as in another process that reads job.json. What follows is bookkeeping that can be slow.
    delete live.stateUntilRecorded;
    // The quality ledger learns from every job that ran; one that never started used no model.
    if (record.startedAt !== undefined) {
      await appendLedger(deps.store.stateDir, record, deps.config.pricing ?? {}).catch((e) =>
        deps.config.log?.(`job ${record.id}: cannot append to the ledger: ${errorMessage(e)}`)
      );
    }
  } finally {
    // Even when a step above failed: a job shown running forever could never be read.
    delete live.stateUntilRecorded;
  }
  live.trace?.end(record);
  delete live.trace;
  if (deps.config.telemetry) recordJobEnd(deps.config.telemetry, record);
  if (outcome) await Promise.resolve(deps.config.onFinished?.(record, outcome)).catch(() => {});
  live.resolveFinished();
  deps.ended();
}
