/**
 * One line per backend for every server of the user: each Claude Code session runs its own
 * server, and without this three sessions with maxConcurrent 4 would send twelve requests
 * to one local GPU. The line lives in the state dir, `<stateDir>/.slots/<backend>/`:
 *
 *   slot-<i>-<job id>.json  a held slot, i in 0..limit-1
 *   wait-<job id>.json      a ticket: a job waiting, with the time it queued
 *
 * Each holds `{ jobId, owner: {pid, startTime}, since, seq }` and is written whole (a temp
 * file renamed into place), mode 0600 in a 0700 folder. A file whose owner process is gone
 * is stale: it is ignored and removed, so a crashed server gives its slots back.
 *
 * Taking slot i is create-then-verify: write `slot-<i>-<me>`, list the folder again, and
 * keep it only if no other live claim on i is there; otherwise remove it. Of two servers
 * claiming i at once, the one that verifies later always sees the other's claim, so at most
 * one keeps it (both may lose, and retry after a random delay). A claim's name is unique to
 * its job, so removing a dead owner's claim never removes a fresh one.
 *
 * Fairness: a job tries for a slot only while fewer live tickets are ahead of its own (by
 * queue time, then order within its process) than slots are free. That is FIFO across
 * servers except for jobs queued within one poll (about 250 ms) of each other.
 */
import { createHash, randomUUID } from "node:crypto";
import { chmod, mkdir, readdir, readFile, rename, stat, writeFile } from "node:fs/promises";
import { unlinkSync } from "node:fs";
import { join } from "node:path";
import { isRunning, type ProcessIdentity, selfIdentity } from "../platform/process_identity.ts";
import type { BackendGate, QueueDetail } from "./queue.ts";
import { sleep } from "./wait.ts";

/** The default Ollama's name in status, as the native engine calls it. */
const DEFAULT_NAME = "ollama";
const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const FILE = /^(?:slot-(\d{1,4})|wait)-([0-9a-f-]{36})\.json$/;
/** A temp file this old was left by a writer that died between write and rename. */
const TEMP_STALE_MS = 60_000;
/** How long a process seen running is believed to run on (a dead one stays dead). */
const ALIVE_TTL_MS = 2000;

interface Lane {
  name: string;
  dir: string;
  limit: number;
}

interface Entry {
  file: string;
  /** The slot index; undefined for a ticket. */
  index?: number;
  jobId: string;
  owner: ProcessIdentity;
  since: number;
  seq: number;
}

interface Waiter {
  lane: Lane;
  ticket: string;
  aborted: boolean;
  wake: AbortController;
  detail?: QueueDetail;
}

/** Who may run how many jobs on each backend at once, across processes. */
export interface SharedLimits {
  /** The Ollama at baseUrl (claude engine, and native jobs without a backend). */
  defaultLimit: number;
  /** Named backends with a maxConcurrent; the others have no shared limit. */
  backendLimits: Record<string, number>;
}

/** The per-backend lines shared through `dir` (`<stateDir>/.slots`). */
export class Admission implements BackendGate {
  readonly #waiting = new Map<string, Waiter>();
  readonly #held = new Map<string, string>();
  /** Per lane folder, the entries of its files (null: not ours to read). */
  readonly #entries = new Map<string, Map<string, Entry | null>>();
  readonly #alive = new Map<string, { alive: boolean; at: number }>();
  #seq = 0;

  constructor(
    readonly dir: string,
    readonly limits: SharedLimits,
    readonly options: { pollMs?: number; log?: (line: string) => void } = {},
  ) {}

  async enter(id: string, backend: string | undefined, placed: () => void): Promise<boolean> {
    const lane = this.#lane(backend);
    if (!lane) return true;
    const waiter: Waiter = {
      lane,
      ticket: `wait-${id}.json`,
      aborted: false,
      wake: new AbortController(),
    };
    this.#waiting.set(id, waiter);
    let claim: string | undefined;
    let failed = false;
    try {
      claim = await this.#wait(lane, id, waiter, placed);
    } catch (e) {
      // A line that cannot be kept must not keep the job from running: the limit of this
      // process still holds.
      this.options.log?.(`job ${id}: cannot use the shared line in ${lane.dir} (${e})`);
      failed = true;
    } finally {
      this.#waiting.delete(id);
      removeFile(lane, waiter.ticket);
    }
    if (waiter.aborted || (claim === undefined && !failed)) {
      if (claim !== undefined) removeFile(lane, claim);
      return false;
    }
    if (claim !== undefined) this.#held.set(id, claim);
    return true;
  }

  /** Queues a ticket, then polls until a slot is won (its file) or the job leaves the line. */
  async #wait(
    lane: Lane,
    id: string,
    waiter: Waiter,
    placed: () => void,
  ): Promise<string | undefined> {
    await this.#prepare(lane);
    const self = await selfIdentity();
    const mine = { jobId: id, owner: self, since: Date.now(), seq: ++this.#seq };
    await this.#write(lane, waiter.ticket, mine);
    for (let first = true; !waiter.aborted; first = false) {
      const { slots, tickets } = await this.#scan(lane);
      const ahead = tickets.filter((t) => t.jobId !== id && before(t, mine)).length;
      waiter.detail = this.#detail(lane, ahead + 1, slots, self);
      if (ahead < lane.limit - slots.length) {
        const claim = await this.#claim(lane, mine, slots);
        if (claim !== undefined) return claim;
      }
      if (first) placed();
      await sleep(this.#pollMs(), waiter.wake.signal);
      if (waiter.wake.signal.aborted) waiter.wake = new AbortController();
    }
    return undefined;
  }

  exit(id: string, backend: string | undefined): void {
    const lane = this.#lane(backend);
    const claim = this.#held.get(id);
    this.#held.delete(id);
    if (!lane || claim === undefined) return;
    removeFile(lane, claim);
    // Jobs of this process waiting for the same backend look again now, not at their next poll.
    for (const w of this.#waiting.values()) if (w.lane.dir === lane.dir) w.wake.abort();
  }

  leave(id: string): boolean {
    const waiter = this.#waiting.get(id);
    if (!waiter || waiter.aborted) return false;
    waiter.aborted = true;
    removeFile(waiter.lane, waiter.ticket);
    waiter.wake.abort();
    return true;
  }

  position(id: string): number {
    const waiter = this.#waiting.get(id);
    return waiter && !waiter.aborted ? (waiter.detail?.position ?? 0) : 0;
  }

  detail(id: string): QueueDetail | undefined {
    const waiter = this.#waiting.get(id);
    return waiter && !waiter.aborted ? waiter.detail : undefined;
  }

  async describe(id: string, backend: string | undefined): Promise<QueueDetail | undefined> {
    const lane = this.#lane(backend);
    if (!lane) return undefined;
    const { slots, tickets } = await this.#scan(lane).catch(() => ({ slots: [], tickets: [] }));
    const mine = tickets.find((t) => t.jobId === id);
    if (!mine) return undefined;
    const ahead = tickets.filter((t) => t !== mine && before(t, mine)).length;
    return this.#detail(lane, ahead + 1, slots, await selfIdentity());
  }

  /** Claims a free slot: create, then keep it only if nobody else claims the same one. */
  async #claim(
    lane: Lane,
    mine: Omit<Entry, "file">,
    slots: Entry[],
  ): Promise<string | undefined> {
    const taken = new Set(slots.map((s) => s.index));
    const free = [...Array(lane.limit).keys()].filter((i) => !taken.has(i));
    // Two servers that start from the same free slot collide less when each starts elsewhere.
    const offset = Math.floor(Math.random() * free.length);
    for (const index of [...free.slice(offset), ...free.slice(0, offset)]) {
      const file = `slot-${index}-${mine.jobId}.json`;
      try {
        await this.#write(lane, file, { ...mine, since: Date.now() });
        const again = await this.#scan(lane);
        if (!again.slots.some((s) => s.index === index && s.jobId !== mine.jobId)) return file;
      } catch (e) {
        removeFile(lane, file);
        throw e;
      }
      removeFile(lane, file);
    }
    return undefined;
  }

  #detail(lane: Lane, position: number, slots: Entry[], self: ProcessIdentity): QueueDetail {
    return {
      backend: lane.name,
      position,
      limit: lane.limit,
      holders: slots.map((s) => ({ jobId: s.jobId, pid: s.owner.pid, here: same(s.owner, self) })),
    };
  }

  /** The live slots and tickets of a lane (tickets in line order); stale files are removed. */
  async #scan(lane: Lane): Promise<{ slots: Entry[]; tickets: Entry[] }> {
    const slots: Entry[] = [];
    const tickets: Entry[] = [];
    const known = this.#entries.get(lane.dir) ?? new Map<string, Entry | null>();
    const seen = new Map<string, Entry | null>();
    for (const file of await readdir(lane.dir)) {
      if (file.startsWith(".tmp-")) {
        const age = await stat(join(lane.dir, file)).then((s) => Date.now() - s.mtimeMs, () => 0);
        if (age > TEMP_STALE_MS) removeFile(lane, file);
        continue;
      }
      const match = FILE.exec(file);
      if (!match) continue;
      // A file's content never changes once renamed into place, so it is read once.
      let entry = known.get(file);
      if (entry === undefined) {
        const text = await readFile(join(lane.dir, file), "utf8").catch(() => undefined);
        if (text === undefined) continue;
        entry = parseEntry(text, file, match);
      }
      if (!entry) {
        seen.set(file, null);
      } else if (await this.#isAlive(entry.owner)) {
        seen.set(file, entry);
        (entry.index === undefined ? tickets : slots).push(entry);
      } else {
        removeFile(lane, file);
      }
    }
    this.#entries.set(lane.dir, seen);
    tickets.sort((a, b) => (before(a, b) ? -1 : 1));
    slots.sort((a, b) => (a.index ?? 0) - (b.index ?? 0));
    return { slots, tickets };
  }

  async #isAlive(owner: ProcessIdentity): Promise<boolean> {
    if (same(owner, await selfIdentity())) return true;
    const key = `${owner.pid}:${owner.startTime}`;
    const known = this.#alive.get(key);
    if (known && (!known.alive || Date.now() - known.at < ALIVE_TTL_MS)) return known.alive;
    const alive = await isRunning(owner);
    this.#alive.set(key, { alive, at: Date.now() });
    return alive;
  }

  async #write(lane: Lane, file: string, content: object): Promise<void> {
    const temp = join(lane.dir, `.tmp-${randomUUID()}`);
    await writeFile(temp, JSON.stringify(content), { flag: "wx", mode: 0o600 });
    await rename(temp, join(lane.dir, file));
  }

  async #prepare(lane: Lane): Promise<void> {
    await mkdir(lane.dir, { recursive: true, mode: 0o700 });
    // Folders made earlier by another umask, or by hand, are narrowed to their owner.
    await chmod(this.dir, 0o700).catch(() => {});
    await chmod(lane.dir, 0o700).catch(() => {});
  }

  #lane(backend: string | undefined): Lane | undefined {
    if (backend === undefined) {
      return {
        name: DEFAULT_NAME,
        dir: join(this.dir, DEFAULT_NAME),
        limit: this.limits.defaultLimit,
      };
    }
    const limit = Object.hasOwn(this.limits.backendLimits, backend)
      ? this.limits.backendLimits[backend]
      : undefined;
    if (limit === undefined) return undefined;
    return { name: backend, dir: join(this.dir, backendFolder(backend)), limit };
  }

  #pollMs(): number {
    const base = this.options.pollMs ?? 250;
    return base * (0.75 + Math.random() * 0.5);
  }
}

/**
 * The folder of a named backend. Names come from the user's settings and are already
 * letters, digits, '.', '_' and '-'; anything else still never becomes a path.
 */
export function backendFolder(name: string): string {
  if (NAME.test(name)) return `backend-${name}`;
  return `backend-x${createHash("sha256").update(name).digest("hex").slice(0, 16)}`;
}

/** Line order: queue time, then order within one process, then pid and job id. */
function before(a: Entry | Omit<Entry, "file">, b: Entry | Omit<Entry, "file">): boolean {
  if (a.since !== b.since) return a.since < b.since;
  if (a.owner.pid === b.owner.pid && a.seq !== b.seq) return a.seq < b.seq;
  if (a.owner.pid !== b.owner.pid) return a.owner.pid < b.owner.pid;
  return a.jobId < b.jobId;
}

function same(a: ProcessIdentity, b: ProcessIdentity): boolean {
  return a.pid === b.pid && a.startTime === b.startTime;
}

function parseEntry(text: string, file: string, match: RegExpExecArray): Entry | null {
  try {
    const v = JSON.parse(text) as Partial<Entry>;
    const owner = v.owner as Partial<ProcessIdentity> | undefined;
    if (
      typeof v.jobId !== "string" || v.jobId !== match[2] || typeof owner?.pid !== "number" ||
      typeof owner.startTime !== "string" || typeof v.since !== "number" ||
      typeof v.seq !== "number"
    ) return null;
    return {
      file,
      ...(match[1] !== undefined ? { index: Number(match[1]) } : {}),
      jobId: v.jobId,
      owner: { pid: owner.pid, startTime: owner.startTime },
      since: v.since,
      seq: v.seq,
    };
  } catch {
    return null;
  }
}

function removeFile(lane: Lane, file: string): void {
  try {
    unlinkSync(join(lane.dir, file));
  } catch {
    // Gone already: a stale file another server removed first, or a cancelled ticket.
  }
}
