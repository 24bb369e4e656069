/**
 * Leases on the files of an endpoint's queue (slot_queue.ts). A process that exists is not always one
 * that runs: a server suspended with Ctrl-Z (SIGSTOP) keeps its pid, and its slot would hold
 * every other session's jobs in the queue for as long as it stays stopped. So each file says
 * how long its owner vouches for it (`leaseMs`), and the owner renews it by a timer, touching
 * the file's mtime every quarter of that; the content never changes.
 *
 * Readers: a live owner's slot whose mtime is older than its lease, and seen so for another
 * 3/8 of it on this process's monotonic clock, does not count; a stale ticket does not count
 * at once. Neither file is removed: only its owner does that (or a reader once the owner's
 * process is gone), so a reader can never delete a file that was renewed after it looked.
 * The extra 3/8 lets a holder that woke with everyone else (a laptop's sleep stops the
 * monotonic clock, not the wall clock) renew first.
 *
 * The holder: once its own last renewal is older than 3/4 of the lease (before any reader may
 * pass it by), it renews and then looks again for another live claim on its slot index, the
 * create-then-verify of slot_queue.ts seen from the other side. A claim there means the slot
 * went to another job while this process was not running: the holder removes its file and
 * reports the slot lost. Of a resumed holder and a taker, each verifies after its own write,
 * so at least one of them sees the other and gives way; both may, never neither.
 */
import type { SlotQueue } from "./slot_queue.ts";

/** How long a holder vouches for its slot when the caller does not say. */
export const DEFAULT_LEASE_MS = 8000;
/** Bounds a file's own `leaseMs` is held to, so that a file cannot make itself immortal. */
export const MIN_LEASE_MS = 400;
export const MAX_LEASE_MS = 10 * 60_000;

/** A renewal older than this fraction of the lease makes a holder check before it goes on. */
const SUSPECT = 3 / 4;
/** A reader passes a stale slot only after seeing it stale for this fraction of its lease. */
const CONFIRM = 3 / 8;
/** Stale slots a reader keeps the first sighting of. */
const MAX_WATCHED = 1024;

/** Judges other processes' files by their leases; remembers when each one first looked stale. */
export class StaleWatch {
  readonly #since = new Map<string, number>();

  /** Whether a file of a live owner still counts, given its mtime and its lease. */
  counts(file: string, ticket: boolean, leaseMs: number | undefined, mtimeMs: number): boolean {
    // A file without a lease comes from a server that does not renew one: its pid decides.
    if (leaseMs === undefined) return true;
    const lease = Math.min(MAX_LEASE_MS, Math.max(MIN_LEASE_MS, leaseMs));
    if (Date.now() - mtimeMs <= lease) {
      this.#since.delete(file);
      return true;
    }
    if (ticket) return false;
    const now = performance.now();
    const since = this.#since.get(file);
    if (since === undefined) {
      // Names are unique per job, so only files of stopped servers gather here; the oldest
      // go first, and a file forgotten is merely judged again from now.
      if (this.#since.size >= MAX_WATCHED) this.#since.delete(this.#since.keys().next().value!);
      this.#since.set(file, now);
      return true;
    }
    return now - since < lease * CONFIRM;
  }
}

/** A file this process renews. */
interface Kept {
  queue: SlotQueue;
  file: string;
  /** The slot index; undefined for a ticket. */
  index?: number;
  /** Date.now() before the last renewal that worked (the file's mtime is no earlier). */
  renewedAt: number;
  lost?: (reason: string) => void;
  checking?: Promise<void>;
  isLost?: boolean;
}

/** Renews this process's files, and finds out when one of its slots went to another job. */
export class LeaseKeeper {
  readonly #kept = new Map<string, Kept>();
  #timer: ReturnType<typeof setInterval> | undefined;

  constructor(readonly leaseMs: number, readonly log?: (line: string) => void) {}

  /** Renews job `id`'s ticket while it waits. */
  ticket(id: string, queue: SlotQueue, file: string, writtenAt: number): void {
    this.#keep(`t:${id}`, { queue, file, renewedAt: writtenAt });
  }

  /** Renews job `id`'s slot while it holds it; `lost` is called if it goes to another job. */
  slot(
    id: string,
    claim: { queue: SlotQueue; file: string; index: number; writtenAt: number },
    lost?: (reason: string) => void,
  ): void {
    const { queue, file, index, writtenAt } = claim;
    this.#keep(`s:${id}`, { queue, file, index, renewedAt: writtenAt, ...(lost ? { lost } : {}) });
  }

  /** Stops renewing job `id`'s ticket or slot. */
  drop(id: string, kind: "ticket" | "slot"): void {
    this.#kept.delete(`${kind === "ticket" ? "t" : "s"}:${id}`);
    if (this.#kept.size === 0 && this.#timer !== undefined) {
      clearInterval(this.#timer);
      this.#timer = undefined;
    }
  }

  /**
   * Whether job `id` may go on with its slot: at once when the lease was renewed in time,
   * else after renewing and looking for a rival. False once the slot was lost.
   */
  async stillHolds(id: string): Promise<boolean> {
    const kept = this.#kept.get(`s:${id}`);
    if (!kept) return true;
    if (!kept.isLost && Date.now() - kept.renewedAt > this.leaseMs * SUSPECT) {
      await this.#renew(kept, id);
    }
    return !kept.isLost;
  }

  #keep(key: string, kept: Kept): void {
    this.#kept.set(key, kept);
    if (this.#timer !== undefined) return;
    this.#timer = setInterval(() => this.#tick(), this.leaseMs / 4);
    // Renewing is for the jobs that keep the server running, never a reason to stay up.
    (this.#timer as { unref?: () => void }).unref?.();
  }

  #tick(): void {
    for (const [key, kept] of this.#kept) void this.#renew(kept, key.slice(2));
  }

  #renew(kept: Kept, id: string): Promise<void> {
    kept.checking ??= this.#renewNow(kept, id).finally(() => delete kept.checking);
    return kept.checking;
  }

  async #renewNow(kept: Kept, id: string): Promise<void> {
    if (kept.isLost) return;
    const started = Date.now();
    const lapsed = started - kept.renewedAt > this.leaseMs * SUSPECT;
    try {
      const there = await kept.queue.touch(kept.file);
      if (kept.index === undefined) {
        // A ticket removed by hand is written again by nobody: its job still waits its turn.
        if (there) kept.renewedAt = started;
        return;
      }
      const taken = !there || (lapsed && await kept.queue.claimedByAnother(kept.index, id));
      if (!taken) {
        kept.renewedAt = started;
        return;
      }
    } catch (e) {
      // A renewal that cannot be written is tried again at the next tick; the lease may lapse.
      this.log?.(`job ${id}: cannot renew its hold in ${kept.queue.dir} (${e})`);
      return;
    }
    kept.isLost = true;
    kept.queue.remove(kept.file);
    const silent = Math.round((started - kept.renewedAt) / 1000);
    kept.lost?.(
      `this server did not renew its hold on backend "${kept.queue.name}"'s shared slot for ` +
        `${silent} s (it was suspended, e.g. by Ctrl-Z, or stalled), and another session's job ` +
        `took the slot; the job was stopped so that the limit of ${kept.queue.limit} is kept`,
    );
  }
}
