/**
 * One queue per endpoint for every server of the user: each Claude Code session runs its own
 * server, and without this three sessions with maxConcurrent 4 would send twelve requests
 * to one local GPU. A queue belongs to an endpoint's URL, not to a backend's name: two backends
 * (or the default Ollama and a backend) that name one server share its queue, and each endpoint
 * of a pool has its own. A job holds to the limit its own backend sets for the endpoint. The
 * queue is a folder in the state dir (slot_queue.ts).
 *
 * A server that dies holding a slot gives it back: its file is stale once its process is
 * gone. One that stops running without dying (Ctrl-Z) stops renewing its lease, and its slot
 * stops counting (lease.ts); when it runs again, it finds out before its job goes on.
 */
import { join } from "node:path";
import {
  type ProcessIdentity,
  sameProcess,
  selfIdentity,
} from "../../platform/process_identity.ts";
import type { EndpointQueue, EndpointQueues, QueueDetail } from "./endpoint_queues.ts";
import { DEFAULT_LEASE_MS, LeaseKeeper, StaleWatch } from "./lease.ts";
import { Owners, take, Wakeups } from "./queue.ts";
import {
  before,
  endpointFolder,
  type Slot,
  SlotQueue,
  type SlotTicket,
  ticketFile,
  type Verdict,
} from "./slot_queue.ts";

/** How long a process seen running is believed to run on (a dead one stays dead). */
const ALIVE_TTL_MS = 2000;

interface Waiter {
  queue: SlotQueue;
  /** Aborted when the job leaves the queue. */
  left: AbortController;
  detail?: QueueDetail;
}

/** The endpoints' queues shared through `dir` (`<stateDir>/.slots`). */
export class SharedEndpointQueues implements EndpointQueues {
  readonly #queues = new Map<string, SlotQueue>();
  /** Wakes the jobs of this process waiting in one endpoint's folder. */
  readonly #wakeups = new Map<string, Wakeups>();
  readonly #waiting = new Map<string, Waiter>();
  /** The queue and slot of each job of this process that holds one. */
  readonly #held = new Map<string, { queue: SlotQueue; slot: Slot }>();
  readonly #owners = new Owners(ALIVE_TTL_MS);
  readonly #stale = new StaleWatch();
  readonly #leases: LeaseKeeper;
  #seq = 0;

  constructor(
    readonly dir: string,
    readonly options: {
      pollMs?: number;
      /** How long this process vouches for its files after each renewal (lease.ts). */
      leaseMs?: number;
      log?: (line: string) => void;
    } = {},
  ) {
    this.#leases = new LeaseKeeper(options.leaseMs ?? DEFAULT_LEASE_MS, options.log);
  }

  async take(
    id: string,
    endpoint: EndpointQueue | undefined,
    placed: () => void,
    lost?: (reason: string) => void,
  ): Promise<boolean> {
    const queue = this.#queue(endpoint);
    if (!queue) return true;
    const waiter: Waiter = { queue, left: new AbortController() };
    this.#waiting.set(id, waiter);
    let slot: Slot | undefined;
    let failed = false;
    try {
      slot = await this.#wait(queue, id, waiter, placed);
    } catch (e) {
      // A queue that cannot be kept must not keep the job from running: the limit of this
      // process still holds.
      this.options.log?.(`job ${id}: cannot use the shared line in ${queue.dir} (${e})`);
      failed = true;
    } finally {
      this.#waiting.delete(id);
      this.#leases.drop(id, "ticket");
      queue.leave(id);
    }
    if (waiter.left.signal.aborted || (slot === undefined && !failed)) {
      if (slot !== undefined) queue.giveBack(slot);
      return false;
    }
    if (slot !== undefined) {
      this.#held.set(id, { queue, slot });
      this.#leases.slot(id, { queue, ...slot }, lost);
    }
    return true;
  }

  stillHolds(id: string): Promise<boolean> {
    return this.#leases.stillHolds(id);
  }

  giveBack(id: string): void {
    const held = this.#held.get(id);
    this.#held.delete(id);
    this.#leases.drop(id, "slot");
    if (held === undefined) return;
    held.queue.giveBack(held.slot);
    // Jobs of this process waiting for the same endpoint look again now, not at their next
    // poll (whatever limit their own backend sets there).
    this.#wakeups.get(held.queue.dir)?.wakeAll();
  }

  leave(id: string): boolean {
    const waiter = this.#waiting.get(id);
    if (!waiter || waiter.left.signal.aborted) return false;
    waiter.queue.leave(id);
    waiter.left.abort();
    return true;
  }

  position(id: string): number {
    return this.detail(id)?.position ?? 0;
  }

  detail(id: string): QueueDetail | undefined {
    const waiter = this.#waiting.get(id);
    return waiter && !waiter.left.signal.aborted ? waiter.detail : undefined;
  }

  async describe(
    id: string,
    endpoint: EndpointQueue | undefined,
  ): Promise<QueueDetail | undefined> {
    const queue = this.#queue(endpoint);
    if (!queue) return undefined;
    const { slots, tickets } = await queue.scan().catch(() => ({ slots: [], tickets: [] }));
    const mine = tickets.find((t) => t.jobId === id);
    if (!mine) return undefined;
    const ahead = tickets.filter((t) => t !== mine && before(t, mine)).length;
    return detailOf(queue, ahead + 1, slots, await selfIdentity());
  }

  async others(endpoint: EndpointQueue): Promise<number> {
    const queue = this.#queue(endpoint);
    if (!queue) return 0;
    const self = await selfIdentity();
    const { slots, tickets } = await queue.scan().catch(() => ({ slots: [], tickets: [] }));
    return [...slots, ...tickets].filter((e) => !sameProcess(e.owner, self)).length;
  }

  /** Puts a ticket in the queue, then waits until it holds a slot (undefined: it left). */
  async #wait(
    queue: SlotQueue,
    id: string,
    waiter: Waiter,
    placed: () => void,
  ): Promise<Slot | undefined> {
    await queue.prepare();
    const self = await selfIdentity();
    const mine: SlotTicket = {
      jobId: id,
      owner: self,
      since: Date.now(),
      seq: ++this.#seq,
      leaseMs: this.#leases.leaseMs,
    };
    await queue.ticket(mine);
    this.#leases.ticket(id, queue, ticketFile(id), mine.since);
    return await take(queue, mine, {
      signal: waiter.left.signal,
      wakeups: this.#wakeupsOf(queue),
      pollMs: () => (this.options.pollMs ?? 250) * (0.75 + Math.random() * 0.5),
      looked: (
        view,
      ) => (waiter.detail = detailOf(queue, view.ahead.length + 1, view.holders, self)),
      waiting: (_view, first) => {
        if (first) placed();
      },
    });
  }

  /**
   * What a look makes of a file: this process's own count; a dead owner's go; a live owner's
   * count while their lease holds.
   */
  readonly #judge = async (entry: SlotTicket, file: string, mtimeMs: number): Promise<Verdict> => {
    if (!(await this.#owners.alive(entry.owner))) return "gone";
    if (sameProcess(entry.owner, await selfIdentity())) return "live";
    const ticket = entry.index === undefined;
    return this.#stale.counts(file, ticket, entry.leaseMs, mtimeMs) ? "live" : "stale";
  };

  /**
   * The queue of an endpoint with a shared limit; one object per endpoint, backend and limit
   * (for its cache), all on the endpoint's one folder.
   */
  #queue(endpoint: EndpointQueue | undefined): SlotQueue | undefined {
    if (endpoint?.limit === undefined) return undefined;
    const { url, backend, limit, pooled } = endpoint;
    const key = JSON.stringify([url, backend, limit, pooled === true]);
    let queue = this.#queues.get(key);
    if (queue) return queue;
    const folder = join(this.dir, endpointFolder(url));
    queue = new SlotQueue(backend, folder, limit, this.#judge, pooled ? url : undefined);
    this.#queues.set(key, queue);
    return queue;
  }

  #wakeupsOf(queue: SlotQueue): Wakeups {
    let wakeups = this.#wakeups.get(queue.dir);
    if (!wakeups) this.#wakeups.set(queue.dir, wakeups = new Wakeups());
    return wakeups;
  }
}

function detailOf(
  queue: SlotQueue,
  position: number,
  slots: SlotTicket[],
  self: ProcessIdentity,
): QueueDetail {
  return {
    backend: queue.name,
    ...(queue.endpoint !== undefined ? { endpoint: queue.endpoint } : {}),
    position,
    limit: queue.limit,
    holders: slots.map((s) => ({
      jobId: s.jobId,
      pid: s.owner.pid,
      here: sameProcess(s.owner, self),
    })),
  };
}
