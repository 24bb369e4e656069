/**
 * One turn per session at a time, as this process sees it: taking a turn's ticket, waiting
 * for the earlier turns to end, and reading a session's turns in order. The session's queue
 * itself, shared by every server process, is in queue/turn_queue.ts.
 */
import { errorMessage } from "../errors.ts";
import { type ProcessIdentity, selfIdentity } from "../platform/process_identity.ts";
import type { LiveJob } from "./live_job.ts";
import { isTerminal, type JobRecord } from "./record.ts";
import { Wakeups } from "./queue/queue.ts";
import { takeTurn, type TurnJobState } from "./queue/turn_queue.ts";
import type { JobStore } from "./store.ts";
import { DelegateError } from "../errors.ts";

export interface SessionJobs {
  /** The record of a job this process holds, by id as given. */
  liveRecord(id: string): JobRecord | undefined;
  /** A record read from disk, marked interrupted when its server is gone. */
  reconcile(record: JobRecord): Promise<JobRecord>;
}

export class SessionOrder {
  /** Jobs whose turn ticket is taken but which are not held as live jobs yet. */
  readonly #claiming = new Set<string>();
  /** Waiters for an earlier turn, woken when a turn of this process ends. */
  readonly #turnEnded = new Wakeups();

  constructor(private readonly store: JobStore, private readonly jobs: SessionJobs) {}

  /**
   * Takes a ticket for the next free turn of the session, at least `from`, for job `jobId`.
   * The job counts as running for other turns until `claimed` says it is held.
   */
  async ticket(
    sessionId: string,
    from: number,
    jobId: string,
    owner: ProcessIdentity,
  ): Promise<number> {
    this.#claiming.add(jobId);
    try {
      return await this.store.turns.queue(sessionId).ticket(from, { jobId, owner });
    } catch (e) {
      this.#claiming.delete(jobId);
      throw new DelegateError(
        `Cannot start job: cannot take a turn of session ${sessionId} in ` +
          `${this.store.sessionsDir} (${errorMessage(e)})`,
        { cause: e },
      );
    }
  }

  /** The job of a taken turn is now held as a live job. */
  claimed(jobId: string): void {
    this.#claiming.delete(jobId);
  }

  /** Whether the job's ticket is taken but the job is not held yet. */
  isClaiming(jobId: string): boolean {
    return this.#claiming.has(jobId);
  }

  /** Takes a turn whose job could not be created out of the session's queue. */
  async leave(sessionId: string, turn: number, jobId: string): Promise<void> {
    try {
      await this.store.turns.queue(sessionId).leave({ turn, jobId });
    } catch {
      // The ticket stays: this process's turns pass over it (its job has no record), and
      // other processes' turns once this one is gone.
    }
    this.#turnEnded.wakeAll();
  }

  /** A turn of this process ended: turns waiting for it look again at once. */
  wakeAll(): void {
    this.#turnEnded.wakeAll();
  }

  /**
   * Waits until the job holds its session's turn: every earlier turn has ended. False when a
   * cancel or shutdown took the job out of the wait (that caller finishes it).
   */
  async take(live: LiveJob): Promise<boolean> {
    const { sessionId, turn, id } = live.record;
    live.sessionWait = new AbortController();
    try {
      const self = await selfIdentity();
      const queue = this.store.turns.queue(sessionId, {
        self,
        state: (jobId) => this.#turnState(jobId),
      });
      return await takeTurn(queue, { turn, jobId: id, owner: self }, {
        signal: live.sessionWait.signal,
        wakeups: this.#turnEnded,
        waiting: (t) => {
          live.activities.push({
            kind: "text",
            text: `Waiting for turn ${t.turn} of this session (job ${t.jobId || "?"}) to end`,
          });
          live.placed();
        },
      });
    } finally {
      delete live.sessionWait;
    }
  }

  async #turnState(jobId: string): Promise<TurnJobState> {
    const live = this.jobs.liveRecord(jobId);
    if (live) return isTerminal(live.state) ? "ended" : "running";
    if (this.#claiming.has(jobId)) return "running";
    const read = await this.store.read(jobId);
    // An unreadable record cannot say it runs; waiting on it would block the session forever.
    if (read.kind !== "ok") return read.kind === "missing" ? "missing" : "ended";
    return isTerminal((await this.jobs.reconcile(read.record)).state) ? "ended" : "running";
  }

  /** Every turn of a session, oldest first. */
  async records(sessionId: string): Promise<JobRecord[]> {
    let ids = await this.store.sessionJobs(sessionId);
    if (ids.length === 0) {
      // Folders written by claude-ollama-delegate-mcp have no session index: find their
      // turns by scanning.
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
      const live = this.jobs.liveRecord(id);
      if (live) {
        records.push(live);
        continue;
      }
      const read = await this.store.read(id);
      if (read.kind === "ok") records.push(await this.jobs.reconcile(read.record));
    }
    return records.sort((a, b) => a.turn - b.turn || a.createdAt - b.createdAt);
  }
}
