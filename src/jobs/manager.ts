/**
 * The job manager: what the server and the `jobs` commands ask of jobs. It holds the jobs
 * this process runs (the live map) and hands each concern to its own module: turn_run.ts
 * runs a turn and records its end, queue/ the queues jobs wait in, session_order.ts one turn
 * per session, orphan_recovery.ts jobs whose server died, remote_cancel.ts cancels across
 * processes, job_reads.ts reads the jobs it does not hold from disk.
 */
import { currentRequestTrace } from "../telemetry/telemetry.ts";
import { DelegateError, errorMessage } from "../errors.ts";
import type { Engine, TurnOptions } from "../engines/types.ts";
import { selfIdentity } from "../platform/process_identity.ts";
import { settleWithin } from "../platform/sleep.ts";
import { JobError } from "./errors.ts";
import { isValidId, newId } from "./ids.ts";
import { resolveJobRef } from "./job_ref.ts";
import {
  hasEnded,
  type JobView,
  KILL_GRACE_MS,
  type LiveJob,
  liveJob,
  type ManagerConfig,
  newRecord,
  type NewTurn,
  shownRecord,
} from "./live_job.ts";
import { uncheckedBudget } from "./spend/budget.ts";
import { checkDailyBudget } from "./spend/daily_budget.ts";
import { LocalEndpointQueues } from "./queue/endpoint_queues.ts";
import { JobQueues } from "./queue/job_queues.ts";
import { SharedEndpointQueues } from "./queue/shared_endpoint_queues.ts";
import { EndpointPlacer } from "./endpoints/endpoint_pool.ts";
import { queueOfRecord } from "./endpoints/endpoint_turn.ts";
import { listRecords, viewFromDisk } from "./job_reads.ts";
import { type ListPage, listPage } from "./list_page.ts";
import { isTerminal, type JobChecks, type JobRecord, type JobState } from "./record.ts";
import { reconcile, recoverOrphans, type RecoveryDeps } from "./orphan_recovery.ts";
import { cancelElsewhere, watchForCancel } from "./remote_cancel.ts";
import { SessionOrder } from "./session_order.ts";
import type { JobStore } from "./store.ts";
import { finishJob, runJob, type TurnRunDeps } from "./turn_run.ts";
import { waitForEnd, type WaitOptions } from "./wait.ts";
import { carriedWorktree, plannedWorktree } from "./worktree/turn.ts";

export type { JobView, ManagerConfig, NewTurn };

/** Finished jobs kept in memory for fast status; older ones are read back from disk. */
const FINISHED_KEEP = 200;
/** Grace during shutdown, so that the whole exit stays within 5 s. */
const SHUTDOWN_GRACE_MS = 1500;

/**
 * Owns every job's lifecycle: records on disk, the concurrency queue, one turn per
 * session, timeouts, cancellation and recovery of jobs whose server died.
 */
export class JobManager {
  readonly #live = new Map<string, LiveJob>();
  readonly #queues: JobQueues;
  readonly #placer: EndpointPlacer | undefined;
  readonly #sessions: SessionOrder;
  readonly #recovery: RecoveryDeps;
  readonly #turns: TurnRunDeps;
  #closing = false;
  #shutdownReason = "the server shut down";

  constructor(
    readonly store: JobStore,
    engines: Record<string, Engine>,
    config: ManagerConfig,
  ) {
    this.#queues = new JobQueues(
      config.maxConcurrent,
      config.slotsDir
        ? new SharedEndpointQueues(config.slotsDir, { log: (line) => config.log?.(line) })
        : new LocalEndpointQueues(),
    );
    this.#placer = config.pools
      ? new EndpointPlacer(config.pools, this.#queues.endpoints, config.health)
      : undefined;
    const liveRecord = (id: string) => this.#live.get(id)?.record;
    this.#recovery = { store, engines, liveRecord };
    this.#sessions = new SessionOrder(store, {
      liveRecord,
      reconcile: (record) => reconcile(record, this.#recovery),
    });
    this.#turns = {
      store,
      engine: (name) => {
        const engine = engines[name];
        if (!engine) throw new DelegateError(`Cannot run job: the ${name} engine is not available`);
        return engine;
      },
      queues: this.#queues,
      ...(this.#placer ? { placer: this.#placer } : {}),
      sessions: this.#sessions,
      config,
      shutdownReason: () => this.#shutdownReason,
      ended: () => {
        this.#sessions.wakeAll();
        this.#forgetOldFinished();
      },
    };
  }

  get runningCount(): number {
    let n = 0;
    for (const job of this.#live.values()) if (job.record.state === "running") n++;
    return n;
  }

  /** Starts turn 1 of a new session. */
  async start(turn: NewTurn): Promise<JobView> {
    const sessionId = newId();
    const { isolation, ...rest } = turn;
    const worktree = isolation && plannedWorktree(
      this.store.stateDir,
      sessionId,
      isolation.repo,
      isolation.includeUncommitted,
      isolation.allowSecretFiles,
    );
    return await this.#launch(worktree ? { ...rest, worktree } : rest, { sessionId, from: 1 });
  }

  /**
   * Finds the turn a follow-up continues: the newest turn of the session named by a job id
   * or a session id. Throws when neither names a known job.
   */
  async latestTurn(ref: { jobId?: string; sessionId?: string }): Promise<JobRecord> {
    let sessionId = ref.sessionId;
    if (ref.jobId !== undefined) {
      sessionId = (await this.get(ref.jobId)).record.sessionId;
    }
    if (sessionId === undefined) throw new TypeError("latestTurn needs a job id or session id");
    if (!isValidId(sessionId)) throw new JobError({ kind: "unknown-session", id: sessionId });
    const latest = (await this.#sessions.records(sessionId)).at(-1);
    if (!latest) throw new JobError({ kind: "unknown-session", id: sessionId });
    return latest;
  }

  /**
   * Adds the next turn to `previous`'s session, inheriting its restrictions. It runs once
   * every earlier turn has ended (queued meanwhile), so follow-ups sent at once run in turn.
   * `carry` replaces the fallback models it inherits (the policy may have left some out since)
   * and gives the turn its first warnings.
   */
  async followup(
    previous: JobRecord,
    prompt: string,
    overrides: Partial<TurnOptions>,
    checkOverrides: JobChecks = {},
    /** `project`: the project of the session that asks for it (unread.ts); none from a terminal. */
    carry: { fallback?: string[]; warnings?: string[]; project?: string } = {},
  ): Promise<JobView> {
    const { files: _inlinedBefore, ...inherited } = previous.options;
    // Files of a one-shot are already in the conversation; a follow-up does not send them again.
    const options: TurnOptions = { ...inherited, ...definedOnly(overrides) };
    // The session's checks and budgets hold for its next turns unless the call sets its own.
    const checks: JobChecks = { ...previous.checks, ...definedOnly(checkOverrides) };
    const fallback = carry.fallback ?? previous.fallback;
    return await this.#launch(
      {
        prompt,
        engine: previous.engine,
        ...(previous.backend !== undefined ? { backend: previous.backend } : {}),
        model: previous.model,
        cwd: previous.cwd,
        options,
        ...(previous.worktree ? { worktree: carriedWorktree(previous.worktree) } : {}),
        // The agent's system prompt is in the inherited options: the turn still runs as it.
        ...(previous.agent !== undefined ? { agent: previous.agent } : {}),
        checks,
        ...(previous.repo !== undefined ? { repo: previous.repo } : {}),
        ...(carry.project !== undefined ? { project: carry.project } : {}),
        ...(fallback?.length ? { fallback } : {}),
        ...(previous.cloudModels?.length ? { cloudModels: previous.cloudModels } : {}),
        ...(carry.warnings?.length ? { warnings: carry.warnings } : {}),
      },
      { sessionId: previous.sessionId, from: previous.turn + 1, parentJobId: previous.id },
    );
  }

  async #launch(
    turn: NewTurn,
    session: { sessionId: string; from: number; parentJobId?: string },
  ): Promise<JobView> {
    if (this.#closing) throw new DelegateError("Cannot start job: the server is shutting down");
    const budgets = this.#turns.config.dailyBudgets;
    if (budgets) await checkDailyBudget(this.store.stateDir, budgets, turn.backend);
    const self = await selfIdentity();
    const id = newId();
    const number = await this.#sessions.ticket(session.sessionId, session.from, id, self);
    const unchecked = uncheckedBudget(turn.checks, turn.model, this.#turns.config.pricing ?? {});
    const warned = unchecked ? { ...turn, warnings: [...(turn.warnings ?? []), unchecked] } : turn;
    const live = liveJob(newRecord(warned, { ...session, turn: number }, id, self));
    const traceParent = currentRequestTrace();
    if (traceParent) live.traceParent = traceParent;
    this.#live.set(id, live);
    this.#sessions.claimed(id);
    try {
      await this.store.create(live.record, turn.prompt);
      await this.store.addSessionJob(session.sessionId, id);
    } catch (e) {
      this.#live.delete(id);
      await this.#sessions.leave(session.sessionId, number, id);
      throw new DelegateError(
        `Cannot start job: cannot write its record in ${this.store.stateDir} (${errorMessage(e)})`,
        { cause: e },
      );
    }
    live.stopWatch = watchForCancel(this.store, live, (jobId) => this.cancel(jobId), this.#log);
    runJob(live, this.#turns).catch((e) => this.#log?.(`job ${id}: ${e}`)).finally(live.placed);
    // The reply then says whether the job runs, or what it waits for.
    await settleWithin(live.isPlaced, 1000, undefined);
    return this.#view(live);
  }

  get #log(): ((line: string) => void) | undefined {
    return this.#turns.config.log;
  }

  #forgetOldFinished(): void {
    let finished = 0;
    for (const job of this.#live.values()) if (hasEnded(job)) finished++;
    // Map iteration follows insertion order, so the oldest jobs go first.
    for (const [id, job] of this.#live) {
      if (finished <= FINISHED_KEEP) break;
      if (!hasEnded(job)) continue;
      this.#live.delete(id);
      finished--;
    }
  }

  /**
   * The current view of a job, from memory when this process runs it, else from disk. `ref`
   * is its id or a unique prefix of one (job_ref.ts).
   */
  async get(ref: string): Promise<JobView> {
    const id = isValidId(ref) ? ref : await resolveJobRef(this.store, ref, this.#live.keys());
    const live = this.#live.get(id.toLowerCase());
    if (live) {
      if (live.stateUntilRecorded !== undefined && (await this.#endWritten(live.record))) {
        // job.json already holds this end (another process may have answered so), and this
        // process has not yet heard that the rename returned: the end is the truth here too.
        return { ...this.#view(live), record: live.record };
      }
      return this.#view(live);
    }
    return await viewFromDisk(
      id,
      this.#recovery,
      this.#queues.endpoints,
      (record) => queueOfRecord(this.#placer, record),
    );
  }

  /** Whether job.json holds `record`'s end: the final write, which follows the answer's. */
  async #endWritten(record: JobRecord): Promise<boolean> {
    const read = await this.store.read(record.id).catch(() => undefined);
    return read?.kind === "ok" && isTerminal(read.record.state) &&
      read.record.state === record.state && read.record.endedAt === record.endedAt;
  }

  #view(live: LiveJob): JobView {
    const { id } = live.record;
    const queue = this.#queues.endpoints.detail(id);
    return {
      record: shownRecord(live),
      activities: live.activities,
      queuePosition: this.#queues.position(id),
      ...(queue ? { queue } : {}),
    };
  }

  /** Waits until the job ends or `seconds` pass; `tick` runs every `tickMs` meanwhile. */
  wait(id: string, seconds: number, options: WaitOptions = {}): Promise<JobView> {
    return waitForEnd(id, seconds, options, {
      get: (jobId) => this.get(jobId),
      finished: (jobId) => this.#live.get(jobId)?.finished,
    });
  }

  /**
   * Stops a job and its whole process tree, and waits until the exit is recorded.
   * Returns the view and whether it was still running.
   */
  async cancel(id: string): Promise<{ view: JobView; wasRunning: boolean }> {
    const view = await this.get(id);
    if (isTerminal(view.record.state)) return { view, wasRunning: false };
    const live = this.#live.get(view.record.id);
    if (!live) return await cancelElsewhere(this.store, (jobId) => this.get(jobId), view);
    if (live.stateUntilRecorded !== undefined) {
      // Its end is being written: nothing is left to stop.
      await live.finished;
      return { view: this.#view(live), wasRunning: false };
    }
    live.stopReason ??= "cancel";
    if (this.#leaveQueues(live)) {
      await finishJob(live, undefined, this.#turns);
    } else if (live.turn) {
      // A running turn may be waiting for a slot on another endpoint (a move): out of that
      // queue too, so that its wait ends with the turn.
      this.#queues.leave(live.record.id);
      await live.turn.stop(KILL_GRACE_MS);
    }
    await live.finished;
    return { view: this.#view(live), wasRunning: true };
  }

  /**
   * Takes a job that has not started out of whichever queue it waits in; true when it was
   * waiting there (a running turn waiting to move is the turn's to end).
   */
  #leaveQueues(live: LiveJob): boolean {
    if (live.sessionWait && !live.sessionWait.signal.aborted) {
      live.sessionWait.abort();
      return true;
    }
    return live.record.state === "queued" && this.#queues.leave(live.record.id);
  }

  /** What this process knows of the endpoints of a backend (pools only); undefined: Ollama's. */
  endpointStates(backend: string | undefined) {
    const resolved = this.#placer?.backendNamed(backend);
    return resolved && this.#placer ? this.#placer.states(resolved) : [];
  }

  /** Every record on disk, newest first; unreadable ones are reported in `corrupt`. */
  list(): Promise<{ records: JobRecord[]; corrupt: Array<{ id: string; reason: string }> }> {
    return listRecords(this.#recovery);
  }

  /**
   * The newest `limit` jobs (in `state`), how many match, and the unreadable records: what a
   * listing shows, without reading every folder (list_page.ts).
   */
  page(options: { state?: JobState; limit: number }): Promise<ListPage> {
    return listPage(this.#recovery, options);
  }

  /**
   * Marks every job whose server process is gone as interrupted and stops the delegate tree
   * it recorded: orphans must not wait until someone reads their job. Returns their ids.
   */
  recoverOrphans(): Promise<string[]> {
    return recoverOrphans(
      this.#recovery,
      (id) => this.#live.has(id) || this.#sessions.isClaiming(id),
    );
  }

  /**
   * Stops every delegate, records each as interrupted with `reason`, and resolves when all
   * are written.
   */
  async shutdown(reason = "the server shut down"): Promise<void> {
    this.#closing = true;
    this.#shutdownReason = reason;
    const pending: Promise<void>[] = [];
    for (const live of this.#live.values()) {
      if (live.stateUntilRecorded !== undefined) pending.push(live.finished);
      if (isTerminal(live.record.state)) continue;
      live.stopReason ??= "shutdown";
      if (this.#leaveQueues(live)) pending.push(finishJob(live, undefined, this.#turns));
      else if (live.turn) {
        this.#queues.leave(live.record.id);
        pending.push(live.turn.stop(SHUTDOWN_GRACE_MS));
      }
      pending.push(live.finished);
    }
    await Promise.allSettled(pending);
    // A last chance for ends that a full disk kept from being written.
    await this.store.flushUnwritten();
    // What the ended jobs left to export goes out before the process does.
    await this.#turns.config.telemetry?.shutdown();
  }
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
