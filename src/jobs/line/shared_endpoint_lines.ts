/**
 * One line per endpoint for every server of the user: each Claude Code session runs its own
 * server, and without this three sessions with maxConcurrent 4 would send twelve requests
 * to one local GPU. A line belongs to an endpoint's URL, not to a backend's name: two backends
 * (or the default Ollama and a backend) that name one server share its line, and each endpoint
 * of a pool has its own. A job holds to the limit its own backend sets for the endpoint. The
 * line is a folder in the state dir (admission_folder.ts).
 *
 * Taking slot i is create-then-verify: write `slot-<i>-<me>`, list the folder again, and
 * keep it only if no other live claim on i is there; otherwise remove it. Of two servers
 * claiming i at once, the one that verifies later always sees the other's claim, so at most
 * one keeps it (both may lose, and retry after a random delay). A server that dies holding
 * a slot gives it back: its file is stale once its process is gone. One that stops running
 * without dying (Ctrl-Z) stops renewing its lease, and its slot stops counting
 * (admission_lease.ts); when it runs again, it finds out before its job goes on.
 *
 * Fairness: a job tries for a slot only while fewer live tickets are ahead of its own (by
 * queue time, then order within its process) than slots are free. That is FIFO across
 * servers except for jobs queued within one poll (about 250 ms) of each other.
 */
import { join } from "node:path";
import { isRunning, type ProcessIdentity, selfIdentity } from "../../platform/process_identity.ts";
import {
  before,
  endpointFolder,
  type Entry,
  LineFolder,
  sameProcess,
  slotFile,
  ticketFile,
  type Verdict,
} from "./slot_line.ts";
import { DEFAULT_LEASE_MS, LeaseKeeper, StaleWatch } from "./lease.ts";
import type { BackendGate, Lane, QueueDetail } from "./endpoint_lines.ts";
import { sleep } from "../wait.ts";

export { endpointFolder };

/** How long a process seen running is believed to run on (a dead one stays dead). */
const ALIVE_TTL_MS = 2000;

interface Waiter {
  line: LineFolder;
  aborted: boolean;
  /** Aborted to end the waiter's sleep early: it left, or a slot here was given back. */
  wake: AbortController;
  detail?: QueueDetail;
}

/** The per-endpoint lines shared through `dir` (`<stateDir>/.slots`). */
export class Admission implements BackendGate {
  readonly #lines = new Map<string, LineFolder>();
  readonly #waiting = new Map<string, Waiter>();
  /** The line and slot file of each job of this process that holds one. */
  readonly #held = new Map<string, { line: LineFolder; file: string }>();
  readonly #alive = new Map<string, { alive: boolean; at: number }>();
  readonly #stale = new StaleWatch();
  readonly #leases: LeaseKeeper;
  #seq = 0;

  constructor(
    readonly dir: string,
    readonly options: {
      pollMs?: number;
      /** How long this process vouches for its files after each renewal (admission_lease.ts). */
      leaseMs?: number;
      log?: (line: string) => void;
    } = {},
  ) {
    this.#leases = new LeaseKeeper(
      options.leaseMs ?? DEFAULT_LEASE_MS,
      async (line, index, id) =>
        (await line.scan(this.#judge)).slots.some((s) => s.index === index && s.jobId !== id),
      options.log,
    );
  }

  async enter(
    id: string,
    lane: Lane | undefined,
    placed: () => void,
    lost?: (reason: string) => void,
  ): Promise<boolean> {
    const line = this.#line(lane);
    if (!line) return true;
    const waiter: Waiter = { line, aborted: false, wake: new AbortController() };
    this.#waiting.set(id, waiter);
    let claim: Claim | undefined;
    let failed = false;
    try {
      claim = await this.#wait(line, id, waiter, placed);
    } catch (e) {
      // A line that cannot be kept must not keep the job from running: the limit of this
      // process still holds.
      this.options.log?.(`job ${id}: cannot use the shared line in ${line.dir} (${e})`);
      failed = true;
    } finally {
      this.#waiting.delete(id);
      this.#leases.drop(id, "ticket");
      line.remove(ticketFile(id));
    }
    if (waiter.aborted || (claim === undefined && !failed)) {
      if (claim !== undefined) line.remove(claim.file);
      return false;
    }
    if (claim !== undefined) {
      this.#held.set(id, { line, file: claim.file });
      this.#leases.slot(id, { line, ...claim }, lost);
    }
    return true;
  }

  stillHolds(id: string): Promise<boolean> {
    return this.#leases.stillHolds(id);
  }

  exit(id: string): void {
    const held = this.#held.get(id);
    this.#held.delete(id);
    this.#leases.drop(id, "slot");
    if (held === undefined) return;
    held.line.remove(held.file);
    // Jobs of this process waiting for the same endpoint look again now, not at their next
    // poll (whatever limit their own backend sets there).
    for (const w of this.#waiting.values()) if (w.line.dir === held.line.dir) w.wake.abort();
  }

  leave(id: string): boolean {
    const waiter = this.#waiting.get(id);
    if (!waiter || waiter.aborted) return false;
    waiter.aborted = true;
    waiter.line.remove(ticketFile(id));
    waiter.wake.abort();
    return true;
  }

  position(id: string): number {
    return this.detail(id)?.position ?? 0;
  }

  detail(id: string): QueueDetail | undefined {
    const waiter = this.#waiting.get(id);
    return waiter && !waiter.aborted ? waiter.detail : undefined;
  }

  async describe(id: string, lane: Lane | undefined): Promise<QueueDetail | undefined> {
    const line = this.#line(lane);
    if (!line) return undefined;
    const { slots, tickets } = await line.scan(this.#judge).catch(() => ({
      slots: [],
      tickets: [],
    }));
    const mine = tickets.find((t) => t.jobId === id);
    if (!mine) return undefined;
    const ahead = tickets.filter((t) => t !== mine && before(t, mine)).length;
    return detailOf(line, ahead + 1, slots, await selfIdentity());
  }

  async others(lane: Lane): Promise<number> {
    const line = this.#line(lane);
    if (!line) return 0;
    const self = await selfIdentity();
    const { slots, tickets } = await line.scan(this.#judge).catch(() => ({
      slots: [],
      tickets: [],
    }));
    return [...slots, ...tickets].filter((e) => !sameProcess(e.owner, self)).length;
  }

  /** Queues a ticket, then polls until a slot is won (its file) or the job leaves the line. */
  async #wait(
    line: LineFolder,
    id: string,
    waiter: Waiter,
    placed: () => void,
  ): Promise<Claim | undefined> {
    await line.prepare();
    const self = await selfIdentity();
    const mine: Entry = {
      jobId: id,
      owner: self,
      since: Date.now(),
      seq: ++this.#seq,
      leaseMs: this.#leases.leaseMs,
    };
    await line.write(ticketFile(id), mine);
    this.#leases.ticket(id, line, ticketFile(id), mine.since);
    for (let first = true; !waiter.aborted; first = false) {
      const { slots, tickets } = await line.scan(this.#judge);
      const ahead = tickets.filter((t) => t.jobId !== id && before(t, mine)).length;
      waiter.detail = detailOf(line, ahead + 1, slots, self);
      if (ahead < line.limit - slots.length) {
        const claim = await this.#claim(line, mine, slots);
        if (claim !== undefined) return claim;
      }
      if (first) placed();
      await sleep(this.#pollMs(), waiter.wake.signal);
      if (waiter.wake.signal.aborted) waiter.wake = new AbortController();
    }
    return undefined;
  }

  /** Claims a free slot: create, then keep it only if nobody else claims the same one. */
  async #claim(line: LineFolder, mine: Entry, slots: Entry[]): Promise<Claim | undefined> {
    const taken = new Set(slots.map((s) => s.index));
    const free = [...Array(line.limit).keys()].filter((i) => !taken.has(i));
    // Two servers that start from the same free slot collide less when each starts elsewhere.
    const offset = Math.floor(Math.random() * free.length);
    for (const index of [...free.slice(offset), ...free.slice(0, offset)]) {
      const file = slotFile(index, mine.jobId);
      try {
        const writtenAt = Date.now();
        await line.write(file, { ...mine, index, since: writtenAt });
        const again = await line.scan(this.#judge);
        if (!again.slots.some((s) => s.index === index && s.jobId !== mine.jobId)) {
          return { file, index, writtenAt };
        }
      } catch (e) {
        line.remove(file);
        throw e;
      }
      line.remove(file);
    }
    return undefined;
  }

  /**
   * What a scan makes of a file: this process's own count; a dead owner's go; a live owner's
   * count while their lease holds.
   */
  readonly #judge = async (entry: Entry, file: string, mtimeMs: number): Promise<Verdict> => {
    if (!(await this.#isAlive(entry.owner))) return "gone";
    if (sameProcess(entry.owner, await selfIdentity())) return "live";
    const ticket = entry.index === undefined;
    return this.#stale.counts(file, ticket, entry.leaseMs, mtimeMs) ? "live" : "stale";
  };

  async #isAlive(owner: ProcessIdentity): Promise<boolean> {
    if (sameProcess(owner, await selfIdentity())) return true;
    const key = `${owner.pid}:${owner.startTime}`;
    const known = this.#alive.get(key);
    if (known && (!known.alive || Date.now() - known.at < ALIVE_TTL_MS)) return known.alive;
    const alive = await isRunning(owner);
    this.#alive.set(key, { alive, at: Date.now() });
    return alive;
  }

  /**
   * The line of an endpoint with a shared limit; one object per endpoint, backend and limit
   * (for its cache), all on the endpoint's one folder.
   */
  #line(lane: Lane | undefined): LineFolder | undefined {
    if (lane?.limit === undefined) return undefined;
    const key = JSON.stringify([lane.url, lane.backend, lane.limit, lane.pooled === true]);
    let line = this.#lines.get(key);
    if (line) return line;
    line = new LineFolder(
      lane.backend,
      join(this.dir, endpointFolder(lane.url)),
      lane.limit,
      lane.pooled ? lane.url : undefined,
    );
    this.#lines.set(key, line);
    return line;
  }

  #pollMs(): number {
    return (this.options.pollMs ?? 250) * (0.75 + Math.random() * 0.5);
  }
}

/** A slot this process won: its file, index, and when it was written (its first lease). */
interface Claim {
  file: string;
  index: number;
  writtenAt: number;
}

function detailOf(
  line: LineFolder,
  position: number,
  slots: Entry[],
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
