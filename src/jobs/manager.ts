import { join } from "node:path";
import { DelegateError, errorMessage } from "../errors.ts";
import {
  type Activity,
  type Engine,
  failedTurn,
  type RunningTurn,
  type TurnOptions,
  type TurnOutcome,
} from "../engines/types.ts";
import type { EngineName } from "../settings/types.ts";
import { killTree } from "../platform/tree_kill.ts";
import { isValidId, newId } from "./ids.ts";
import { identityOf, isRunning, selfIdentity } from "../platform/process_identity.ts";
import { SlotQueue } from "./queue.ts";
import { isTerminal, type JobRecord } from "./record.ts";
import { awaitTurn, type TurnJobState, TurnWakeups } from "./session_turns.ts";
import { cancelElsewhere } from "./remote_cancel.ts";
import { type CancelSource, JobStore } from "./store.ts";

/** Activities kept in memory per live job; status shows at most 100. */
const ACTIVITY_KEEP = 100;
/** SIGTERM-to-SIGKILL grace for cancel and timeout (the seed's 3 s). */
export const KILL_GRACE_MS = 3000;
/** Finished jobs kept in memory for fast status; older ones are read back from disk. */
const FINISHED_KEEP = 200;
/** How often a live job's folder is checked for a cancel request from another process. */
const CANCEL_POLL_MS = 500;
/** Grace during shutdown, so that the whole exit stays within 5 s. */
const SHUTDOWN_GRACE_MS = 1500;

export interface ManagerConfig {
  jobTimeoutMs: number;
  maxConcurrent: number;
  /** Per-backend limits on top of maxConcurrent (native engine). */
  backendLimits?: Record<string, number>;
  /** Called when a turn ends, for side effects such as remembering retired models. */
  onFinished?: (record: JobRecord, outcome: TurnOutcome) => Promise<void> | void;
  log?: (line: string) => void;
}

export interface NewTurn {
  prompt: string;
  engine: EngineName;
  /** Native engine backend name; undefined = the Ollama at baseUrl. */
  backend?: string;
  model: string;
  cwd: string;
  options: TurnOptions;
}

/** A job as the server renders it. */
export interface JobView {
  record: JobRecord;
  activities: Activity[];
  /** 1-based place in the queue, 0 when not queued here. */
  queuePosition: number;
}

interface LiveJob {
  record: JobRecord;
  activities: Activity[];
  turn?: RunningTurn;
  stopReason?: "cancel" | "timeout" | "shutdown";
  /** Who cancelled it, when not this server's own client. */
  cancelledFrom?: CancelSource;
  /** Set while the job waits for an earlier turn of its session to end. */
  sessionWait?: AbortController;
  /** Called once the job knows where it stands: waiting (for a turn or a slot) or running. */
  placed: () => void;
  finished: Promise<void>;
  resolveFinished: () => void;
  cancelWatch?: ReturnType<typeof setInterval>;
}

/**
 * Owns every job's lifecycle: records on disk, the concurrency queue, one turn per
 * session, timeouts, cancellation and recovery of jobs whose server died.
 */
export class JobManager {
  readonly #live = new Map<string, LiveJob>();
  readonly #queue: SlotQueue;
  readonly #backendQueues = new Map<string, SlotQueue>();
  /** Jobs whose turn ticket is taken but which are not in #live yet. */
  readonly #claiming = new Set<string>();
  /** Waiters for an earlier turn, woken when a turn of this process ends. */
  readonly #turnEnded = new TurnWakeups();
  #closing = false;
  #shutdownReason = "the server shut down";

  constructor(
    readonly store: JobStore,
    private readonly engines: Partial<Record<EngineName, Engine>>,
    private readonly config: ManagerConfig,
  ) {
    this.#queue = new SlotQueue(config.maxConcurrent);
    for (const [name, limit] of Object.entries(config.backendLimits ?? {})) {
      this.#backendQueues.set(name, new SlotQueue(limit));
    }
  }

  #engine(name: EngineName): Engine {
    const engine = this.engines[name];
    if (!engine) throw new DelegateError(`Cannot run job: the ${name} engine is not available`);
    return engine;
  }

  get runningCount(): number {
    let n = 0;
    for (const job of this.#live.values()) if (job.record.state === "running") n++;
    return n;
  }

  /** Starts turn 1 of a new session. */
  async start(turn: NewTurn): Promise<JobView> {
    const sessionId = newId();
    return await this.#launch(turn, { sessionId, from: 1 });
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
    if (!isValidId(sessionId)) throw unknownSession(sessionId);
    const records = await this.#sessionRecords(sessionId);
    const latest = records.at(-1);
    if (!latest) throw unknownSession(sessionId);
    return latest;
  }

  /**
   * Adds the next turn to `previous`'s session, inheriting its restrictions. It runs once
   * every earlier turn has ended (queued meanwhile), so follow-ups sent at once run in turn.
   */
  async followup(
    previous: JobRecord,
    prompt: string,
    overrides: Partial<TurnOptions>,
  ): Promise<JobView> {
    const { files: _inlinedBefore, ...inherited } = previous.options;
    // Files of a one-shot are already in the conversation; a follow-up does not send them again.
    const options: TurnOptions = { ...inherited, ...definedOnly(overrides) };
    return await this.#launch(
      {
        prompt,
        engine: previous.engine,
        ...(previous.backend !== undefined ? { backend: previous.backend } : {}),
        model: previous.model,
        cwd: previous.cwd,
        options,
      },
      { sessionId: previous.sessionId, from: previous.turn + 1, parentJobId: previous.id },
    );
  }

  async #launch(
    turn: NewTurn,
    session: { sessionId: string; from: number; parentJobId?: string },
  ): Promise<JobView> {
    if (this.#closing) throw new DelegateError("Cannot start job: the server is shutting down");
    const self = await selfIdentity();
    const id = newId();
    let number: number;
    this.#claiming.add(id);
    try {
      number = await this.store.turns.take(session.sessionId, session.from, {
        jobId: id,
        owner: self,
      });
    } catch (e) {
      this.#claiming.delete(id);
      throw new DelegateError(
        `Cannot start job: cannot take a turn of session ${session.sessionId} in ` +
          `${this.store.sessionsDir} (${errorMessage(e)})`,
        { cause: e },
      );
    }
    const record: JobRecord = {
      format: 1,
      id,
      sessionId: session.sessionId,
      turn: number,
      engine: turn.engine,
      ...(turn.backend !== undefined ? { backend: turn.backend } : {}),
      model: turn.model,
      cwd: turn.cwd,
      state: "queued",
      createdAt: Date.now(),
      ...(session.parentJobId ? { parentJobId: session.parentJobId } : {}),
      promptPreview: turn.prompt.slice(0, 200),
      options: turn.options,
      sessionCreated: false,
      owner: self,
      toolCalls: 0,
      permissionDenials: [],
    };
    let resolveFinished!: () => void;
    const finished = new Promise<void>((r) => (resolveFinished = r));
    let placed!: () => void;
    const isPlaced = new Promise<void>((r) => (placed = r));
    const live: LiveJob = { record, activities: [], finished, resolveFinished, placed };
    this.#live.set(id, live);
    this.#claiming.delete(id);
    try {
      await this.store.create(record, turn.prompt);
      await this.store.addSessionJob(session.sessionId, id);
    } catch (e) {
      this.#live.delete(id);
      await this.store.turns.release(session.sessionId, number, id).catch(() => {});
      this.#turnEnded.wakeAll();
      throw new DelegateError(
        `Cannot start job: cannot write its record in ${this.store.stateDir} (${errorMessage(e)})`,
        { cause: e },
      );
    }
    this.#watchForCancel(live);
    this.#run(live).catch((e) => this.config.log?.(`job ${id}: ${e}`)).finally(placed);
    // The reply then says whether the job runs, or what it waits for.
    await Promise.race([isPlaced, sleep(1000)]);
    return this.#view(live);
  }

  /** `jobs cancel` in a terminal asks through a file; the owning process acts on it. */
  #watchForCancel(live: LiveJob): void {
    let checking = false;
    live.cancelWatch = setInterval(() => {
      if (checking || isTerminal(live.record.state)) return;
      checking = true;
      this.store.cancelRequested(live.record.id).then((from) => {
        if (from && !isTerminal(live.record.state)) {
          this.config.log?.(`job ${live.record.id}: cancel requested from another process`);
          live.cancelledFrom ??= from;
          return this.cancel(live.record.id).then(() => {});
        }
      }).catch(() => {}).finally(() => (checking = false));
    }, CANCEL_POLL_MS);
    // Never keeps the process alive on its own.
    (live.cancelWatch as { unref?: () => void }).unref?.();
  }

  /**
   * Waits until every earlier turn of the job's session has ended. False when a cancel or
   * shutdown took the job out of the wait (that caller finishes it).
   */
  async #awaitSessionTurn(live: LiveJob): Promise<boolean> {
    const { sessionId, turn } = live.record;
    live.sessionWait = new AbortController();
    return await awaitTurn({
      turns: this.store.turns,
      sessionId,
      turn,
      self: await selfIdentity(),
      state: (jobId) => this.#turnState(jobId),
      signal: live.sessionWait.signal,
      waiting: (t) => {
        live.activities.push({
          kind: "text",
          text: `Waiting for turn ${t.turn} of this session (job ${t.jobId || "?"}) to end`,
        });
        live.placed();
      },
      wakeups: this.#turnEnded,
    }).finally(() => delete live.sessionWait);
  }

  async #turnState(jobId: string): Promise<TurnJobState> {
    const live = this.#live.get(jobId);
    if (live) return isTerminal(live.record.state) ? "ended" : "running";
    if (this.#claiming.has(jobId)) return "running";
    const read = await this.store.read(jobId);
    // An unreadable record cannot say it runs; waiting on it would block the session forever.
    if (read.kind !== "ok") return read.kind === "missing" ? "missing" : "ended";
    return isTerminal((await this.#reconcile(read.record)).state) ? "ended" : "running";
  }

  async #run(live: LiveJob): Promise<void> {
    const record = live.record;
    // False when a cancel or shutdown took the job out of the line; that caller finishes it.
    // The session's earlier turns come first, so a follow-up waiting for them holds no slot.
    try {
      if (!(await this.#awaitSessionTurn(live))) return;
    } catch (e) {
      return await this.#finish(
        live,
        failedTurn(
          `Cannot run job: cannot read the turns of session ${record.sessionId} (${
            errorMessage(e)
          })`,
        ),
      );
    }
    // A backend's own slot comes first, so a job waiting for its backend holds no global slot.
    const backendQueue = record.backend ? this.#backendQueues.get(record.backend) : undefined;
    if (backendQueue && !(await this.#acquire(backendQueue, live))) return;
    if (!(await this.#acquire(this.#queue, live))) {
      backendQueue?.release();
      return;
    }
    let timer: ReturnType<typeof setTimeout> | undefined;
    let outcome: TurnOutcome | undefined;
    try {
      if (!live.stopReason) outcome = await this.#startTurn(live, (t) => (timer = t));
    } catch (e) {
      outcome = failedTurn(`Cannot run job: ${(e as Error).message}`);
    } finally {
      clearTimeout(timer);
      this.#queue.release();
      backendQueue?.release();
    }
    await this.#finish(live, outcome);
  }

  /** Takes a slot of `queue`; the job is placed once it has to wait for one. */
  #acquire(queue: SlotQueue, live: LiveJob): Promise<boolean> {
    const granted = queue.acquire(live.record.id);
    if (queue.position(live.record.id) > 0) live.placed();
    return granted;
  }

  async #startTurn(
    live: LiveJob,
    setTimer: (t: ReturnType<typeof setTimeout>) => void,
  ): Promise<TurnOutcome> {
    const record = live.record;
    record.state = "running";
    record.startedAt = Date.now();
    live.placed();
    // Decided now, not when the follow-up was sent: the turns before it have ended, and the
    // newest one that got its engine session going is the one this turn continues.
    const continues = (await this.#sessionRecords(record.sessionId))
      .filter((r) => r.turn < record.turn && r.sessionCreated).at(-1);
    const resume = continues !== undefined;
    if (continues) record.parentJobId = continues.id;
    else delete record.parentJobId;
    await this.store.write(record);
    const dir = this.store.dirOf(record.id);
    const turn = await this.#engine(record.engine).start(
      {
        jobId: record.id,
        sessionId: record.sessionId,
        turn: record.turn,
        resume,
        model: record.model,
        cwd: record.cwd,
        options: record.options,
        dir,
        promptPath: join(dir, "prompt.txt"),
        ...(record.backend !== undefined ? { backend: record.backend } : {}),
        ...(record.parentJobId ? { previousDir: this.store.dirOf(record.parentJobId) } : {}),
      },
      {
        activity: (a) => {
          live.activities.push(a);
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
          this.store.write(record).catch(() => {});
        },
        commandRun: (run) => {
          (record.commands ??= []).push(run);
        },
        fileChanged: (path) => {
          const files = (record.changedFiles ??= []);
          if (!files.includes(path)) files.push(path);
        },
        childStarted: (pid) => {
          identityOf(pid).then((child) => {
            if (child && !isTerminal(record.state)) {
              record.child = child;
              return this.store.write(record);
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
    }, this.config.jobTimeoutMs));
    return await turn.done;
  }

  async #finish(live: LiveJob, outcome: TurnOutcome | undefined): Promise<void> {
    const record = live.record;
    clearInterval(live.cancelWatch);
    record.endedAt = Date.now();
    if (outcome) {
      record.exitCode = outcome.exitCode;
      record.signal = outcome.signal;
      if (outcome.usage) record.usage = outcome.usage;
      record.permissionDenials = outcome.permissionDenials;
    }
    switch (live.stopReason) {
      case "cancel":
        record.state = "cancelled";
        record.errorText = live.cancelledFrom === "terminal"
          ? "Cancelled from a terminal (ollama-delegate jobs cancel)"
          : live.cancelledFrom === "session"
          ? "Cancelled from another Claude Code session (delegate_cancel)"
          : "Cancelled by caller";
        break;
      case "timeout":
        record.state = "failed";
        record.errorText = `Timed out after ${Math.round(this.config.jobTimeoutMs / 1000)}s`;
        break;
      case "shutdown":
        record.state = "interrupted";
        record.errorText =
          `Stopped because ${this.#shutdownReason} before the job finished; follow up to continue`;
        break;
      default:
        record.state = outcome?.ok ? "completed" : "failed";
        if (!outcome?.ok) record.errorText = outcome?.errorText ?? "The job failed";
    }
    delete record.child;
    try {
      await this.store.writeFinal(record, outcome?.resultText ?? "");
    } catch (e) {
      // What is not on disk did not happen for a follow-up or another process: say so, and
      // never report such a job as completed. The store keeps trying to write it.
      const was = record.errorText ? ` (${record.errorText})` : "";
      if (record.state === "completed") record.state = "failed";
      record.errorText = `Cannot record the end of the job in ${this.store.dirOf(record.id)}: ` +
        `${errorMessage(e)}${was}. Its output is kept in memory while this server runs and ` +
        `written when that works again; free disk space there, then follow up to continue`;
      this.config.log?.(`job ${record.id}: ${record.errorText}`);
    }
    if (outcome) await Promise.resolve(this.config.onFinished?.(record, outcome)).catch(() => {});
    live.resolveFinished();
    this.#turnEnded.wakeAll();
    this.#forgetOldFinished();
  }

  #forgetOldFinished(): void {
    let finished = 0;
    for (const job of this.#live.values()) if (isTerminal(job.record.state)) finished++;
    // Map iteration follows insertion order, so the oldest jobs go first.
    for (const [id, job] of this.#live) {
      if (finished <= FINISHED_KEEP) break;
      if (!isTerminal(job.record.state)) continue;
      this.#live.delete(id);
      finished--;
    }
  }

  /** The current view of a job, from memory when this process runs it, else from disk. */
  async get(id: string): Promise<JobView> {
    const key = id.toLowerCase();
    const live = isValidId(id) ? this.#live.get(key) : undefined;
    if (live) return this.#view(live);
    if (!isValidId(id)) throw unknownJob(id);
    const read = await this.store.read(key);
    if (read.kind === "missing") throw unknownJob(id);
    if (read.kind === "corrupt") {
      throw new DelegateError(
        `Cannot read job ${id}: ${read.reason}. Its folder is ${this.store.dirOf(key)}`,
      );
    }
    const record = await this.#reconcile(read.record);
    const engine = this.engines[record.engine];
    const activities = engine
      ? await engine.recentActivity(this.store.dirOf(key), ACTIVITY_KEEP).catch(() => [])
      : [];
    return { record, activities, queuePosition: 0 };
  }

  #view(live: LiveJob): JobView {
    return {
      record: live.record,
      activities: live.activities,
      queuePosition:
        (live.record.backend
          ? this.#backendQueues.get(live.record.backend)?.position(live.record.id)
          : 0) || this.#queue.position(live.record.id),
    };
  }

  /**
   * A record that says queued or running but whose server process is gone is marked
   * interrupted (never "running" forever), and any delegate it left behind is stopped.
   */
  async #reconcile(record: JobRecord): Promise<JobRecord> {
    if (isTerminal(record.state)) return record;
    const self = await selfIdentity();
    const ownedHere = record.owner?.pid === self.pid && record.owner.startTime === self.startTime;
    if (record.owner && !ownedHere && (await isRunning(record.owner))) return record;
    // A job of this process that is being set up or still runs is not an orphan.
    const live = ownedHere ? this.#live.get(record.id.toLowerCase()) : undefined;
    if (live) return live.record;
    if (record.child && (await isRunning(record.child))) {
      await killTree(record.child.pid, { graceMs: KILL_GRACE_MS }).catch(() => {});
    }
    const dir = this.store.dirOf(record.id);
    const facts = await this.engines[record.engine]?.facts(dir).catch(() => undefined);
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
    await this.store.write(record).catch(() => {});
    return record;
  }

  /** Waits until the job ends or `seconds` pass; `tick` runs every `tickMs` meanwhile. */
  async wait(
    id: string,
    seconds: number,
    options: {
      signal?: AbortSignal;
      tick?: (view: JobView, elapsedMs: number) => void;
      tickMs?: number;
    } = {},
  ): Promise<JobView> {
    const started = Date.now();
    const deadline = started + Math.min(seconds, 600) * 1000;
    const tickMs = options.tickMs ?? 5000;
    let view = await this.get(id);
    let lastTick = started;
    while (!isTerminal(view.record.state) && Date.now() < deadline && !options.signal?.aborted) {
      const live = this.#live.get(view.record.id);
      const step = Math.min(deadline - Date.now(), live ? tickMs : 500, tickMs);
      await Promise.race([live?.finished ?? new Promise(() => {}), sleep(step, options.signal)]);
      view = await this.get(id);
      if (options.tick && Date.now() - lastTick >= tickMs - 5 && !isTerminal(view.record.state)) {
        lastTick = Date.now();
        options.tick(view, lastTick - started);
      }
    }
    return view;
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
    live.stopReason ??= "cancel";
    if (this.#leaveQueues(live)) {
      await this.#finish(live, undefined);
    } else if (live.turn) {
      await live.turn.stop(KILL_GRACE_MS);
    }
    await live.finished;
    return { view: this.#view(live), wasRunning: true };
  }

  /** Takes a job out of whichever line it waits in; true when it was waiting. */
  #leaveQueues(live: LiveJob): boolean {
    if (live.sessionWait && !live.sessionWait.signal.aborted) {
      live.sessionWait.abort();
      return true;
    }
    const record = live.record;
    const backendQueue = record.backend ? this.#backendQueues.get(record.backend) : undefined;
    return (backendQueue?.leave(record.id) ?? false) || this.#queue.leave(record.id);
  }

  /** Every record on disk, newest first; unreadable ones are reported in `corrupt`. */
  async list(): Promise<{ records: JobRecord[]; corrupt: Array<{ id: string; reason: string }> }> {
    const records: JobRecord[] = [];
    const corrupt: Array<{ id: string; reason: string }> = [];
    for (const id of await this.store.ids()) {
      const live = this.#live.get(id);
      if (live) {
        records.push(live.record);
        continue;
      }
      const read = await this.store.read(id).catch((e) => ({
        kind: "corrupt" as const,
        reason: String(e),
      }));
      if (read.kind === "ok") records.push(await this.#reconcile(read.record));
      else if (read.kind === "corrupt") corrupt.push({ id, reason: read.reason });
    }
    records.sort((a, b) => b.createdAt - a.createdAt);
    return { records, corrupt };
  }

  /**
   * Marks every job whose server process is gone as interrupted and stops the delegate tree
   * it recorded: orphans must not wait until someone reads their job. Returns their ids.
   */
  async recoverOrphans(): Promise<string[]> {
    const recovered: string[] = [];
    for (const id of await this.store.ids()) {
      if (this.#live.has(id) || this.#claiming.has(id)) continue;
      const read = await this.store.read(id).catch(() => undefined);
      if (read?.kind !== "ok" || isTerminal(read.record.state)) continue;
      if (isTerminal((await this.#reconcile(read.record)).state)) recovered.push(id);
    }
    return recovered;
  }

  async #sessionRecords(sessionId: string): Promise<JobRecord[]> {
    let ids = await this.store.sessionJobs(sessionId);
    if (ids.length === 0) {
      // Sessions of seed-002 folders have no index: find their turns by scanning.
      ids = [];
      for (const id of await this.store.ids()) {
        const read = await this.store.read(id);
        if (read.kind === "ok" && read.record.sessionId.toLowerCase() === sessionId.toLowerCase()) {
          ids.push(id);
        }
      }
    }
    const records: JobRecord[] = [];
    for (const id of ids) {
      const live = this.#live.get(id);
      if (live) {
        records.push(live.record);
        continue;
      }
      const read = await this.store.read(id);
      if (read.kind === "ok") records.push(await this.#reconcile(read.record));
    }
    return records.sort((a, b) => a.turn - b.turn || a.createdAt - b.createdAt);
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
      if (isTerminal(live.record.state)) continue;
      live.stopReason ??= "shutdown";
      if (this.#leaveQueues(live)) pending.push(this.#finish(live, undefined));
      else if (live.turn) pending.push(live.turn.stop(SHUTDOWN_GRACE_MS));
      pending.push(live.finished);
    }
    await Promise.allSettled(pending);
    // A last chance for ends that a full disk kept from being written.
    await this.store.flushUnwritten();
  }
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, Math.max(0, ms));
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}

function unknownJob(id: string): DelegateError {
  return new DelegateError(
    `Unknown job id "${
      id.slice(0, 80)
    }". Job ids are UUIDs; delegate_list shows the jobs there are`,
  );
}

function unknownSession(id: string): DelegateError {
  return new DelegateError(
    `Unknown session id "${id.slice(0, 80)}". delegate_list shows sessions and their jobs`,
  );
}
