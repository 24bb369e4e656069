/**
 * One line per endpoint for every server of the user: each Claude Code session runs its own
 * server, and without this three sessions with maxConcurrent 4 would send twelve requests
 * to one local GPU. A line belongs to an endpoint's URL, not to a backend's name: two backends
 * (or the default Ollama and a backend) that name one server share its line, and each endpoint
 * of a pool has its own. A job holds to the limit its own backend sets for the endpoint. The
 * line is a folder in the state dir (slot_line.ts).
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
import type { EndpointLine, EndpointLines, QueueDetail } from "./endpoint_lines.ts";
import { DEFAULT_LEASE_MS, LeaseKeeper, StaleWatch } from "./lease.ts";
import { Owners, take, Wakeups } from "./line.ts";
import {
  before,
  endpointFolder,
  type Slot,
  SlotLine,
  type SlotTicket,
  ticketFile,
  type Verdict,
} from "./slot_line.ts";

/** How long a process seen running is believed to run on (a dead one stays dead). */
const ALIVE_TTL_MS = 2000;

interface Waiter {
  line: SlotLine;
  /** Aborted when the job leaves the line. */
  left: AbortController;
  detail?: QueueDetail;
}

/** The endpoints' lines shared through `dir` (`<stateDir>/.slots`). */
export class SharedEndpointLines implements EndpointLines {
  readonly #lines = new Map<string, SlotLine>();
  /** Wakes the jobs of this process waiting in one endpoint's folder. */
  readonly #wakeups = new Map<string, Wakeups>();
  readonly #waiting = new Map<string, Waiter>();
  /** The line and slot of each job of this process that holds one. */
  readonly #held = new Map<string, { line: SlotLine; slot: Slot }>();
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
    endpoint: EndpointLine | undefined,
    placed: () => void,
    lost?: (reason: string) => void,
  ): Promise<boolean> {
    const line = this.#line(endpoint);
    if (!line) return true;
    const waiter: Waiter = { line, left: new AbortController() };
    this.#waiting.set(id, waiter);
    let slot: Slot | undefined;
    let failed = false;
    try {
      slot = await this.#wait(line, id, waiter, placed);
    } catch (e) {
      // A line that cannot be kept must not keep the job from running: the limit of this
      // process still holds.
      this.options.log?.(`job ${id}: cannot use the shared line in ${line.dir} (${e})`);
      failed = true;
    } finally {
      this.#waiting.delete(id);
      this.#leases.drop(id, "ticket");
      line.leave(id);
    }
    if (waiter.left.signal.aborted || (slot === undefined && !failed)) {
      if (slot !== undefined) line.giveBack(slot);
      return false;
    }
    if (slot !== undefined) {
      this.#held.set(id, { line, slot });
      this.#leases.slot(id, { line, ...slot }, lost);
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
    held.line.giveBack(held.slot);
    // Jobs of this process waiting for the same endpoint look again now, not at their next
    // poll (whatever limit their own backend sets there).
    this.#wakeups.get(held.line.dir)?.wakeAll();
  }

  leave(id: string): boolean {
    const waiter = this.#waiting.get(id);
    if (!waiter || waiter.left.signal.aborted) return false;
    waiter.line.leave(id);
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

  async describe(id: string, endpoint: EndpointLine | undefined): Promise<QueueDetail | undefined> {
    const line = this.#line(endpoint);
    if (!line) return undefined;
    const { slots, tickets } = await line.scan().catch(() => ({ slots: [], tickets: [] }));
    const mine = tickets.find((t) => t.jobId === id);
    if (!mine) return undefined;
    const ahead = tickets.filter((t) => t !== mine && before(t, mine)).length;
    return detailOf(line, ahead + 1, slots, await selfIdentity());
  }

  async others(endpoint: EndpointLine): Promise<number> {
    const line = this.#line(endpoint);
    if (!line) return 0;
    const self = await selfIdentity();
    const { slots, tickets } = await line.scan().catch(() => ({ slots: [], tickets: [] }));
    return [...slots, ...tickets].filter((e) => !sameProcess(e.owner, self)).length;
  }

  /** Puts a ticket in the line, then waits until it holds a slot (undefined: it left). */
  async #wait(
    line: SlotLine,
    id: string,
    waiter: Waiter,
    placed: () => void,
  ): Promise<Slot | undefined> {
    await line.prepare();
    const self = await selfIdentity();
    const mine: SlotTicket = {
      jobId: id,
      owner: self,
      since: Date.now(),
      seq: ++this.#seq,
      leaseMs: this.#leases.leaseMs,
    };
    await line.ticket(mine);
    this.#leases.ticket(id, line, ticketFile(id), mine.since);
    return await take(line, mine, {
      signal: waiter.left.signal,
      wakeups: this.#wakeupsOf(line),
      pollMs: () => (this.options.pollMs ?? 250) * (0.75 + Math.random() * 0.5),
      looked: (view) => (waiter.detail = detailOf(line, view.ahead.length + 1, view.holders, self)),
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
   * The line of an endpoint with a shared limit; one object per endpoint, backend and limit
   * (for its cache), all on the endpoint's one folder.
   */
  #line(endpoint: EndpointLine | undefined): SlotLine | undefined {
    if (endpoint?.limit === undefined) return undefined;
    const { url, backend, limit, pooled } = endpoint;
    const key = JSON.stringify([url, backend, limit, pooled === true]);
    let line = this.#lines.get(key);
    if (line) return line;
    const folder = join(this.dir, endpointFolder(url));
    line = new SlotLine(backend, folder, limit, this.#judge, pooled ? url : undefined);
    this.#lines.set(key, line);
    return line;
  }

  #wakeupsOf(line: SlotLine): Wakeups {
    let wakeups = this.#wakeups.get(line.dir);
    if (!wakeups) this.#wakeups.set(line.dir, wakeups = new Wakeups());
    return wakeups;
  }
}

function detailOf(
  line: SlotLine,
  position: number,
  slots: SlotTicket[],
  self: ProcessIdentity,
): QueueDetail {
  return {
    backend: line.name,
    ...(line.endpoint !== undefined ? { endpoint: line.endpoint } : {}),
    position,
    limit: line.limit,
    holders: slots.map((s) => ({
      jobId: s.jobId,
      pid: s.owner.pid,
      here: sameProcess(s.owner, self),
    })),
  };
}
