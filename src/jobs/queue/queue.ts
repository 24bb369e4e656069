/**
 * A queue: jobs wait in it, first come first served, for something at most `limit` of them may
 * use at once, also across the server processes of one user (each Claude Code session runs a
 * server of its own, and they share one state dir).
 *
 *   ticket     a job's place in the queue: a file that names the job and its owner
 *   owner      the server process that wrote a file, by pid and start time, so that a reused
 *              pid is not taken for it; a file whose owner is gone no longer counts
 *   holders    the jobs that hold one of the queue's `limit` places now
 *   take       wait until the job holds a place (take() below)
 *   leave      take a waiting job out of the queue
 *   give back  a holder is done with its place
 *   lease      how long an owner vouches for its files between renewals; one that stops
 *              running without dying (Ctrl-Z) lets it lapse, and its place stops counting
 *              (lease.ts)
 *
 * The queues a server keeps:
 *   SlotQueue  (slot_queue.ts)  one per endpoint URL in `<stateDir>/.slots`: `limit` places
 *                               (its slots), held under leases
 *   TurnQueue  (turn_queue.ts)  one per session in `<stateDir>/.sessions`: one place (the
 *                               turn), taken in strict turn order
 *   LocalQueue (local_queue.ts) within this process only: the global maxConcurrent
 *
 * A job of a session goes through them in that order, turn then slot then global place, so
 * that a job waiting in one queue holds no place in the next.
 */
import type { ProcessIdentity } from "../../platform/process_identity.ts";
import { isRunning, sameProcess, selfIdentity } from "../../platform/process_identity.ts";

/** What every ticket says. */
export interface Ticket {
  jobId: string;
  owner: ProcessIdentity;
}

/** What one look at a queue finds, as the ticket `mine` sees it. */
export interface QueueView<T extends Ticket> {
  /** The tickets that hold a place. */
  holders: T[];
  /**
   * Live tickets before `mine` that hold no place; a queue may stop counting them once it
   * knows that `mine` must wait.
   */
  ahead: T[];
}

/** What take() asks of a queue; each kind keeps its tickets and places in files its own way. */
export interface Queue<T extends Ticket, H> {
  readonly limit: number;
  look(mine: T): Promise<QueueView<T>>;
  /**
   * Holds a place for `mine`, which `view` found free: what the holder keeps (to give it back),
   * or undefined when another ticket got the place first, and the queue is looked at again.
   */
  hold(mine: T, view: QueueView<T>): Promise<H | undefined>;
}

export interface TakeOptions<T extends Ticket> {
  /** Aborted when the job leaves the queue: take() then resolves undefined. */
  signal: AbortSignal;
  /** Woken when a holder of this process gives its place back: no other one can say so. */
  wakeups: Wakeups;
  /** How long to wait for the next look when nothing wakes the wait. */
  pollMs: () => number;
  /** Each look, before a try for a place. */
  looked?: (view: QueueView<T>) => void;
  /** Each time the job has to wait; `first` on the first. */
  waiting?: (view: QueueView<T>, first: boolean) => void;
}

/**
 * Waits until `mine` holds a place in `queue`: looks, and while fewer live tickets are ahead
 * than places are free, tries for one; otherwise waits for the next look. Resolves with what
 * the queue gave, or undefined when the job left the queue first. A place held as the job left
 * is the caller's to give back.
 */
export async function take<T extends Ticket, H>(
  queue: Queue<T, H>,
  mine: T,
  options: TakeOptions<T>,
): Promise<H | undefined> {
  const { signal } = options;
  for (let first = true; !signal.aborted; first = false) {
    const view = await queue.look(mine);
    if (signal.aborted) break;
    options.looked?.(view);
    if (view.ahead.length < queue.limit - view.holders.length) {
      const held = await queue.hold(mine, view);
      if (held !== undefined) return held;
    }
    options.waiting?.(view, first);
    await nap(options.pollMs(), options.wakeups, signal);
  }
  return undefined;
}

/** Lets the waits of this process hear at once that one of its holders gave a place back. */
export class Wakeups {
  readonly #waiters = new Set<() => void>();

  subscribe = (wake: () => void): () => void => {
    this.#waiters.add(wake);
    return () => this.#waiters.delete(wake);
  };

  wakeAll(): void {
    for (const wake of [...this.#waiters]) wake();
  }
}

/**
 * Whether the owners of files run. An answer is believed for `ttlMs` (a queue looked at every
 * poll would otherwise read the process table for each file each time); a dead owner stays
 * dead, and this process is always alive.
 */
export class Owners {
  readonly #seen = new Map<string, { alive: boolean; at: number }>();

  constructor(readonly ttlMs: number) {}

  async alive(owner: ProcessIdentity): Promise<boolean> {
    if (sameProcess(owner, await selfIdentity())) return true;
    if (this.ttlMs <= 0) return await isRunning(owner);
    const key = `${owner.pid}:${owner.startTime}`;
    const known = this.#seen.get(key);
    if (known && (!known.alive || Date.now() - known.at < this.ttlMs)) return known.alive;
    const alive = await isRunning(owner);
    this.#seen.set(key, { alive, at: Date.now() });
    return alive;
  }
}

/** Resolves after `ms`, when `wakeups` wake, or when `signal` aborts, whichever is first. */
function nap(ms: number, wakeups: Wakeups, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      unsubscribe();
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, Math.max(0, ms));
    const unsubscribe = wakeups.subscribe(done);
    signal.addEventListener("abort", done, { once: true });
  });
}
