/**
 * An endpoint's queue: `limit` places (its slots) shared by every server of the user, in the
 * files of `<stateDir>/.slots/<endpointFolder(url)>/`:
 *
 *   slot-<i>-<job id>.json  a held slot, i in 0..limit-1
 *   wait-<job id>.json      a ticket: a job waiting, with the time it queued
 *
 * Each holds `{ jobId, owner: {pid, startTime}, since, seq, leaseMs }` and is written whole
 * (files.ts), in a 0700 folder. Its mtime is its owner's last renewal of the lease (lease.ts).
 * A file whose owner process is gone is stale: a look passes over it and removes it. Names
 * are unique to their job, so removing a dead owner's file never removes a fresh one.
 *
 * Holding slot i is create-then-verify: write `slot-<i>-<me>`, list the folder again, and
 * keep it only if no other live claim on i is there; otherwise remove it. Of two servers
 * claiming i at once, the one that verifies later always sees the other's claim, so at most
 * one keeps it (both may lose, and look again). Tickets order the queue by the time they were
 * written, so it is first come first served across servers except for jobs queued within one
 * poll of each other.
 */
import { createHash } from "node:crypto";
import { unlinkSync } from "node:fs";
import { chmod, mkdir, readdir, readFile, rename, stat, utimes } from "node:fs/promises";
import { dirname, join } from "node:path";
import type { ProcessIdentity } from "../../platform/process_identity.ts";
import { ownerOf, TEMP_PREFIX, writeTemp } from "./files.ts";
import type { Queue, QueueView } from "./queue.ts";

const FILE = /^(?:slot-(\d{1,4})|wait)-([0-9a-f-]{36})\.json$/;
/** A temp file this old was left by a writer that died between write and rename. */
const TEMP_STALE_MS = 60_000;

/** A ticket, or a held slot, as its file says. */
export interface SlotTicket {
  /** The slot it holds; undefined while it waits. */
  index?: number;
  jobId: string;
  owner: ProcessIdentity;
  since: number;
  /** Order within its process, for jobs queued in the same millisecond. */
  seq: number;
  /** How long its owner vouches for it after a renewal; absent from servers without leases. */
  leaseMs?: number;
}

/** A slot this process holds: its file, index, and when it was written (its first lease). */
export interface Slot {
  file: string;
  index: number;
  writtenAt: number;
}

/** What a look makes of a file: counted, passed over (a lapsed lease), or removed (owner gone). */
export type Verdict = "live" | "stale" | "gone";

/** How this process judges a file of another, given its mtime (shared_endpoint_queues.ts). */
export type Judge = (entry: SlotTicket, file: string, mtimeMs: number) => Promise<Verdict>;

/** One endpoint's queue, as jobs of one backend (`name`) with one limit see it. */
export class SlotQueue implements Queue<SlotTicket, Slot> {
  /** What each file holds: its content never changes once in place, so it is read once. */
  #known = new Map<string, SlotTicket | null>();

  constructor(
    readonly name: string,
    readonly dir: string,
    readonly limit: number,
    readonly judge: Judge,
    /** The endpoint's URL when the backend is a pool: status lines name it. */
    readonly endpoint?: string,
  ) {}

  /** Creates the folder; folders made earlier by another umask are narrowed to their owner. */
  async prepare(): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    await chmod(dirname(this.dir), 0o700).catch(() => {});
    await chmod(this.dir, 0o700).catch(() => {});
  }

  /** Puts `mine` in the queue. */
  async ticket(mine: SlotTicket): Promise<void> {
    await this.#write(ticketFile(mine.jobId), mine);
  }

  async look(mine: SlotTicket): Promise<QueueView<SlotTicket>> {
    const { slots, tickets } = await this.scan();
    const ahead = tickets.filter((t) => t.jobId !== mine.jobId && before(t, mine));
    return { holders: slots, ahead };
  }

  /** Claims a free slot: create, then keep it only if nobody else claims the same one. */
  async hold(mine: SlotTicket, view: QueueView<SlotTicket>): Promise<Slot | undefined> {
    const taken = new Set(view.holders.map((s) => s.index));
    const free = [...Array(this.limit).keys()].filter((i) => !taken.has(i));
    // Two servers that start from the same free slot collide less when each starts elsewhere.
    const offset = Math.floor(Math.random() * free.length);
    for (const index of [...free.slice(offset), ...free.slice(0, offset)]) {
      const file = slotFile(index, mine.jobId);
      try {
        const writtenAt = Date.now();
        await this.#write(file, { ...mine, index, since: writtenAt });
        if (!(await this.claimedByAnother(index, mine.jobId))) return { file, index, writtenAt };
      } catch (e) {
        this.remove(file);
        throw e;
      }
      this.remove(file);
    }
    return undefined;
  }

  /** Whether another live claim on slot `index` than job `jobId`'s is in the queue. */
  async claimedByAnother(index: number, jobId: string): Promise<boolean> {
    return (await this.scan()).slots.some((s) => s.index === index && s.jobId !== jobId);
  }

  /** Takes job `jobId`'s ticket out of the queue. */
  leave(jobId: string): void {
    this.remove(ticketFile(jobId));
  }

  giveBack(slot: Slot): void {
    this.remove(slot.file);
  }

  /**
   * The live slots (by index) and tickets (in queue order), as the judge rules on each file
   * with its mtime; files it calls gone are removed.
   */
  async scan(): Promise<{ slots: SlotTicket[]; tickets: SlotTicket[] }> {
    const slots: SlotTicket[] = [];
    const tickets: SlotTicket[] = [];
    const seen = new Map<string, SlotTicket | null>();
    for (const file of await readdir(this.dir)) {
      if (file.startsWith(TEMP_PREFIX)) {
        const age = await stat(join(this.dir, file)).then((s) => Date.now() - s.mtimeMs, () => 0);
        if (age > TEMP_STALE_MS) this.remove(file);
        continue;
      }
      const match = FILE.exec(file);
      if (!match) continue;
      const mtimeMs = await stat(join(this.dir, file)).then((s) => s.mtimeMs, () => undefined);
      if (mtimeMs === undefined) continue;
      let entry = this.#known.get(file);
      if (entry === undefined) {
        const text = await readFile(join(this.dir, file), "utf8").catch(() => undefined);
        if (text === undefined) continue;
        entry = parseEntry(text, match);
      }
      if (!entry) {
        seen.set(file, null);
        continue;
      }
      const verdict = await this.judge(entry, file, mtimeMs);
      if (verdict === "gone") {
        this.remove(file);
        continue;
      }
      seen.set(file, entry);
      if (verdict === "live") (entry.index === undefined ? tickets : slots).push(entry);
    }
    this.#known = seen;
    tickets.sort((a, b) => (before(a, b) ? -1 : 1));
    slots.sort((a, b) => (a.index ?? 0) - (b.index ?? 0));
    return { slots, tickets };
  }

  /** Renews a file's lease (its mtime); false when the file is not there. */
  async touch(file: string): Promise<boolean> {
    const now = new Date();
    try {
      await utimes(join(this.dir, file), now, now);
      return true;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ENOENT") return false;
      throw e;
    }
  }

  /** Synchronous, so that a cancel or a turn's end gives the slot back before anything else. */
  remove(file: string): void {
    try {
      unlinkSync(join(this.dir, file));
    } catch {
      // Gone already: a stale file another server removed first, or a cancelled ticket.
    }
  }

  async #write(file: string, content: SlotTicket): Promise<void> {
    await rename(await writeTemp(this.dir, JSON.stringify(content)), join(this.dir, file));
  }
}

export const slotFile = (index: number, jobId: string) => `slot-${index}-${jobId}.json`;
export const ticketFile = (jobId: string) => `wait-${jobId}.json`;

/**
 * The folder of an endpoint's queue: its host and port, readable, and a hash of the whole URL
 * (normalised by the settings), so that URLs that differ only in their path or scheme get
 * queues of their own and no URL ever becomes a path of its own making.
 */
export function endpointFolder(url: string): string {
  const readable = url.replace(/^[a-z]+:\/\//i, "").replace(/[^A-Za-z0-9.-]+/g, "_").slice(0, 48);
  return `endpoint-${readable}-${createHash("sha256").update(url).digest("hex").slice(0, 12)}`;
}

/** Queue order: queue time, then order within one process, then pid and job id. */
export function before(a: SlotTicket, b: SlotTicket): boolean {
  if (a.since !== b.since) return a.since < b.since;
  if (a.owner.pid === b.owner.pid && a.seq !== b.seq) return a.seq < b.seq;
  if (a.owner.pid !== b.owner.pid) return a.owner.pid < b.owner.pid;
  return a.jobId < b.jobId;
}

function parseEntry(text: string, match: RegExpExecArray): SlotTicket | null {
  try {
    const v = JSON.parse(text) as Partial<SlotTicket>;
    const owner = ownerOf(v.owner);
    if (
      typeof v.jobId !== "string" || v.jobId !== match[2] || owner === undefined ||
      typeof v.since !== "number" || typeof v.seq !== "number"
    ) return null;
    return {
      ...(match[1] !== undefined ? { index: Number(match[1]) } : {}),
      jobId: v.jobId,
      owner,
      since: v.since,
      seq: v.seq,
      ...(typeof v.leaseMs === "number" && Number.isFinite(v.leaseMs)
        ? { leaseMs: v.leaseMs }
        : {}),
    };
  } catch {
    return null;
  }
}
