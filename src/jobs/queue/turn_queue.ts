/**
 * A session's queue: its turns run one at a time, in order, also across server processes that
 * share a state dir. Its one place is the turn, and the earliest turn whose job has not ended
 * holds it.
 *
 * Every turn of a session takes a numbered ticket, `.sessions/<session>.turns/<n>.json`, that
 * names its job and its owner process. A ticket appears whole and only under a free number:
 * it is written to a temp file first and then hard-linked into place, and link() fails when
 * the name exists. So two turns never share a number, and no reader sees an empty or
 * half-written ticket. A turn runs once every lower-numbered turn has ended.
 *
 * Tickets stay when their turn ends (they list the session's turns), and only their owner
 * removes one (when its job could not be created), so no staleness decision can delete a live
 * one. A ticket whose job has no record counts as ended only when its owner (pid and start
 * time, written with the ticket) is gone.
 */
import { readFileSync } from "node:fs";
import { link, mkdir, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { ProcessIdentity } from "../../platform/process_identity.ts";
import { sameProcess } from "../../platform/process_identity.ts";
import { isValidId } from "../ids.ts";
import { namesIn, ownerOf, writeTemp } from "./files.ts";
import { Owners, type Queue, type QueueView, take, type Ticket, type Wakeups } from "./queue.ts";

export interface TurnTicket extends Ticket {
  turn: number;
}

/** What the job of an earlier turn is doing, as far as the caller can tell. */
export type TurnJobState = "running" | "ended" | "missing";

/** What a look needs to judge the turns before a ticket. */
export interface TurnJudge {
  self: ProcessIdentity;
  /** What a job is doing (reading its record marks one whose server died as interrupted). */
  state: (jobId: string) => Promise<TurnJobState>;
}

/** Ticket file names: the turn number and `.json`. */
const TICKET = /^(\d{1,9})\.json$/;
/** A ticket that cannot be read is being written (only without hard links) for this long. */
const UNREADABLE_GRACE_MS = 10_000;
/** Link errors of file systems without hard links, where exclusive create is the fallback. */
const NO_LINKS = new Set(["EPERM", "ENOTSUP", "EOPNOTSUPP", "ENOSYS", "EXDEV"]);
const POLL_MS = 250;

/** Sessions whose ended jobs a process remembers (the most recently used ones). */
const ENDED_SESSIONS_KEPT = 256;

/** Every session's turn queue, in `<stateDir>/.sessions`. */
export class TurnQueues {
  /**
   * The jobs found ended, by session folder, over every look of this process: an end is
   * final and job ids are never reused, so a follow-up's look does not ask again about each
   * earlier turn of a long session (issue 34: a queue made afresh for each turn did).
   */
  readonly #ended = new Map<string, Set<string>>();

  constructor(readonly sessionsDir: string) {}

  dirOf(sessionId: string): string {
    if (!isValidId(sessionId)) throw new TypeError(`Invalid session id "${sessionId}"`);
    return join(this.sessionsDir, `${sessionId.toLowerCase()}.turns`);
  }

  /** The queue of `sessionId`; a look at it (take) needs `judge`. */
  queue(sessionId: string, judge?: TurnJudge): TurnQueue {
    const dir = this.dirOf(sessionId);
    const ended = this.#ended.get(dir) ?? new Set<string>();
    // Map order is insertion order: the session moves to the end, the least recent goes first.
    this.#ended.delete(dir);
    this.#ended.set(dir, ended);
    if (this.#ended.size > ENDED_SESSIONS_KEPT) {
      this.#ended.delete(this.#ended.keys().next().value!);
    }
    return new TurnQueue(dir, judge, ended);
  }
}

export class TurnQueue implements Queue<TurnTicket, TurnTicket> {
  readonly limit = 1;
  /** A missing record's owner is asked each look: a creator that died is seen at once. */
  readonly #owners = new Owners(0);

  constructor(
    readonly dir: string,
    readonly judge?: TurnJudge,
    /**
     * Jobs of this session found ended (shared by the session's queues, TurnQueues): an end is
     * final, so a long session's old turns are not read again on every look.
     */
    readonly ended: Set<string> = new Set(),
  ) {}

  /**
   * Takes the lowest free turn number that is at least `from` and above every ticket, for
   * `ticket.jobId`. Resolves with that number.
   */
  async ticket(from: number, ticket: Ticket): Promise<number> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    let turn = Math.max(from, (await this.#highest()) + 1);
    const data = JSON.stringify({ jobId: ticket.jobId, owner: ticket.owner, at: Date.now() });
    const temp = await writeTemp(this.dir, data);
    try {
      for (const last = turn + 10_000; turn < last; turn++) {
        const path = join(this.dir, `${turn}.json`);
        try {
          await link(temp, path);
          return turn;
        } catch (e) {
          const code = (e as NodeJS.ErrnoException).code ?? "";
          if (code === "EEXIST") continue;
          if (!NO_LINKS.has(code)) throw e;
        }
        try {
          // Without hard links, exclusive create still hands out each number once; a reader
          // may then meet the file before its bytes, which UNREADABLE_GRACE_MS covers.
          await writeFile(path, data, { flag: "wx", mode: 0o600 });
          return turn;
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
        }
      }
      throw new Error(`no free turn number between ${from} and ${turn} in ${this.dir}`);
    } finally {
      await rm(temp, { force: true }).catch(() => {});
    }
  }

  /** Every ticket of the session, by turn; an unreadable one has an empty job id. */
  async tickets(): Promise<TurnTicket[]> {
    const out: TurnTicket[] = [];
    for (const name of await namesIn(this.dir)) {
      const match = TICKET.exec(name);
      if (!match) continue;
      out.push({ turn: Number(match[1]), ...readTicket(join(this.dir, name)) });
    }
    return out.sort((a, b) => a.turn - b.turn);
  }

  /** Removes the ticket of `turn` if `jobId` holds it: the owner gives back a turn it never ran. */
  async leave(mine: { turn: number; jobId: string }): Promise<void> {
    const path = join(this.dir, `${mine.turn}.json`);
    if (readTicket(path).jobId === mine.jobId) await rm(path, { force: true });
  }

  /** The earliest turn before `mine` that has not ended holds the session's turn. */
  async look(mine: TurnTicket): Promise<QueueView<TurnTicket>> {
    const holder = await this.#earliestRunning(mine.turn);
    return { holders: holder ? [holder] : [], ahead: [] };
  }

  /** Numbers are handed out once: with no earlier turn running, the turn is this ticket's. */
  hold(mine: TurnTicket): Promise<TurnTicket> {
    return Promise.resolve(mine);
  }

  async #earliestRunning(turn: number): Promise<TurnTicket | undefined> {
    const judge = this.judge;
    if (!judge) throw new TypeError("A look at a turn line needs a judge");
    for (const ticket of await this.tickets()) {
      if (ticket.turn >= turn) break;
      if (this.ended.has(ticket.jobId)) continue;
      if (ticket.jobId === "") {
        if (await youngerThan(join(this.dir, `${ticket.turn}.json`))) return ticket;
        continue;
      }
      const now = await judge.state(ticket.jobId);
      if (now === "running") return ticket;
      if (now === "missing") {
        // No record yet: its owner is creating it, or gave up. This process knows its own
        // jobs, so `state` said "running" for any it is still setting up.
        const mine = sameProcess(ticket.owner, judge.self);
        if (!mine && ticket.owner.pid > 0 && (await this.#owners.alive(ticket.owner))) {
          return ticket;
        }
      }
      // Ended, or never to be created: its owner is gone (a dead process creates nothing).
      this.ended.add(ticket.jobId);
    }
    return undefined;
  }

  async #highest(): Promise<number> {
    let highest = 0;
    for (const name of await namesIn(this.dir)) {
      const match = TICKET.exec(name);
      if (match) highest = Math.max(highest, Number(match[1]));
    }
    return highest;
  }
}

/**
 * Waits until `mine` holds its session's turn: true then, false when `signal` aborts first
 * (also when it aborts as the wait ends). `waiting` hears of each turn waited for, once;
 * turns of this process that end wake the wait through `wakeups` (others are polled).
 */
export async function takeTurn(
  queue: Queue<TurnTicket, unknown>,
  mine: TurnTicket,
  options: {
    signal: AbortSignal;
    wakeups: Wakeups;
    waiting?: (holder: TurnTicket) => void;
    pollMs?: number;
  },
): Promise<boolean> {
  let announced = "";
  const held = await take(queue, mine, {
    signal: options.signal,
    wakeups: options.wakeups,
    pollMs: () => options.pollMs ?? POLL_MS,
    waiting: ({ holders: [holder] }) => {
      if (!holder) return;
      const key = `${holder.turn}:${holder.jobId}`;
      if (key === announced) return;
      announced = key;
      options.waiting?.(holder);
    },
  });
  return held !== undefined && !options.signal.aborted;
}

/**
 * A ticket, read synchronously: a look reads every ticket of the session, and on Deno a small
 * file read through the asynchronous API costs three to four times the CPU time (200 tickets:
 * 12-18 ms against 3-5 ms), which made a follow-up's start grow with its session (issue 34).
 * A ticket is under 200 bytes in the state dir.
 */
function readTicket(path: string): Ticket {
  try {
    const raw = JSON.parse(readFileSync(path, "utf8")) as Partial<TurnTicket>;
    const owner = ownerOf(raw.owner);
    if (typeof raw.jobId === "string" && isValidId(raw.jobId) && owner) {
      return { jobId: raw.jobId.toLowerCase(), owner };
    }
  } catch {
    // Unreadable: see UNREADABLE_GRACE_MS.
  }
  return { jobId: "", owner: { pid: 0, startTime: "" } };
}

async function youngerThan(path: string, ms = UNREADABLE_GRACE_MS): Promise<boolean> {
  try {
    return Date.now() - (await stat(path)).mtimeMs < ms;
  } catch {
    return false;
  }
}
