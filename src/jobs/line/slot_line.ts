/**
 * The files of one endpoint's shared line, `<stateDir>/.slots/<endpointFolder(url)>/`:
 *
 *   slot-<i>-<job id>.json  a held slot, i in 0..limit-1
 *   wait-<job id>.json      a ticket: a job waiting, with the time it queued
 *
 * Each holds `{ jobId, owner: {pid, startTime}, since, seq, leaseMs }` and is written whole
 * (a temp file renamed into place), mode 0600 in a 0700 folder, so a reader never sees half a
 * file. Its mtime is its owner's last renewal of the lease (admission_lease.ts). A file whose
 * owner process is gone is stale: a scan ignores and removes it. Names are unique to their
 * job, so removing a dead owner's file never removes a fresh one.
 */
import { createHash, randomUUID } from "node:crypto";
import { unlinkSync } from "node:fs";
import { chmod, mkdir, readdir, readFile, rename, stat, utimes, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import type { ProcessIdentity } from "../../platform/process_identity.ts";

const FILE = /^(?:slot-(\d{1,4})|wait)-([0-9a-f-]{36})\.json$/;
/** A temp file this old was left by a writer that died between write and rename. */
const TEMP_STALE_MS = 60_000;

/** A slot or a ticket, as its file says. */
export interface Entry {
  /** The slot index; undefined for a ticket. */
  index?: number;
  jobId: string;
  owner: ProcessIdentity;
  since: number;
  /** Order within its process, for jobs queued in the same millisecond. */
  seq: number;
  /** How long its owner vouches for it after a renewal; absent from servers without leases. */
  leaseMs?: number;
}

/** What a scan makes of a file: counted, passed over (a lapsed lease), or removed (owner gone). */
export type Verdict = "live" | "stale" | "gone";

/** One endpoint's line on disk, as jobs of one backend (`name`) with one limit see it. */
export class LineFolder {
  /** What each file holds: its content never changes once in place, so it is read once. */
  #known = new Map<string, Entry | null>();

  constructor(
    readonly name: string,
    readonly dir: string,
    readonly limit: number,
    /** The endpoint's URL when the backend is a pool: status lines name it. */
    readonly endpoint?: string,
  ) {}

  /** Creates the folder; folders made earlier by another umask are narrowed to their owner. */
  async prepare(): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    await chmod(dirname(this.dir), 0o700).catch(() => {});
    await chmod(this.dir, 0o700).catch(() => {});
  }

  /**
   * The live slots (by index) and tickets (in line order), as `judge` rules on each file with
   * its mtime; files it calls gone are removed.
   */
  async scan(judge: (entry: Entry, file: string, mtimeMs: number) => Promise<Verdict>): Promise<{
    slots: Entry[];
    tickets: Entry[];
  }> {
    const slots: Entry[] = [];
    const tickets: Entry[] = [];
    const seen = new Map<string, Entry | null>();
    for (const file of await readdir(this.dir)) {
      if (file.startsWith(".tmp-")) {
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
      const verdict = await judge(entry, file, mtimeMs);
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

  async write(file: string, content: Entry): Promise<void> {
    const temp = join(this.dir, `.tmp-${randomUUID()}`);
    await writeFile(temp, JSON.stringify(content), { flag: "wx", mode: 0o600 });
    await rename(temp, join(this.dir, file));
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
}

export const slotFile = (index: number, jobId: string) => `slot-${index}-${jobId}.json`;
export const ticketFile = (jobId: string) => `wait-${jobId}.json`;

/**
 * The folder of an endpoint's line: its host and port, readable, and a hash of the whole URL
 * (normalised by the settings), so that URLs that differ only in their path or scheme get
 * lines of their own and no URL ever becomes a path of its own making.
 */
export function endpointFolder(url: string): string {
  const readable = url.replace(/^[a-z]+:\/\//i, "").replace(/[^A-Za-z0-9.-]+/g, "_").slice(0, 48);
  return `endpoint-${readable}-${createHash("sha256").update(url).digest("hex").slice(0, 12)}`;
}

/** Line order: queue time, then order within one process, then pid and job id. */
export function before(a: Entry, b: Entry): boolean {
  if (a.since !== b.since) return a.since < b.since;
  if (a.owner.pid === b.owner.pid && a.seq !== b.seq) return a.seq < b.seq;
  if (a.owner.pid !== b.owner.pid) return a.owner.pid < b.owner.pid;
  return a.jobId < b.jobId;
}

export function sameProcess(a: ProcessIdentity, b: ProcessIdentity): boolean {
  return a.pid === b.pid && a.startTime === b.startTime;
}

function parseEntry(text: string, match: RegExpExecArray): Entry | null {
  try {
    const v = JSON.parse(text) as Partial<Entry>;
    const owner = v.owner as Partial<ProcessIdentity> | undefined;
    if (
      typeof v.jobId !== "string" || v.jobId !== match[2] || typeof owner?.pid !== "number" ||
      typeof owner.startTime !== "string" || typeof v.since !== "number" ||
      typeof v.seq !== "number"
    ) return null;
    return {
      ...(match[1] !== undefined ? { index: Number(match[1]) } : {}),
      jobId: v.jobId,
      owner: { pid: owner.pid, startTime: owner.startTime },
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
