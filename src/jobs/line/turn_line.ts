/**
 * One turn per session at a time, also across server processes that share a state dir.
 *
 * Every turn of a session takes a numbered ticket, `.sessions/<session>.turns/<n>.json`, that
 * names its job and its owner process. A ticket appears whole and only under a free number:
 * it is written to a temporary file first and then hard-linked into place, and link() fails
 * when the name exists. So two turns never share a number, and no reader sees an empty or
 * half-written ticket. A turn runs once every lower-numbered turn has ended.
 *
 * Tickets are never taken over, and only their owner removes one (when its job could not be
 * created), so no staleness decision can delete a live one. A ticket whose job has no record
 * counts as ended only when its owner (pid and start time, written with the ticket) is gone.
 */
import { link, mkdir, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import process from "node:process";
import { isValidId } from "../ids.ts";
import { isRunning, type ProcessIdentity } from "../../platform/process_identity.ts";

export interface TurnTicket {
  turn: number;
  jobId: string;
  owner: ProcessIdentity;
}

/** What the job of an earlier turn is doing, as far as the caller can tell. */
export type TurnJobState = "running" | "ended" | "missing";

/** Ticket file names: the turn number and `.json`. */
const TICKET = /^(\d{1,9})\.json$/;
/** A ticket that cannot be read is being written (only without hard links) for this long. */
const UNREADABLE_GRACE_MS = 10_000;
/** Link errors of file systems without hard links, where exclusive create is the fallback. */
const NO_LINKS = new Set(["EPERM", "ENOTSUP", "EOPNOTSUPP", "ENOSYS", "EXDEV"]);
const POLL_MS = 250;

export class SessionTurns {
  constructor(readonly sessionsDir: string) {}

  dirOf(sessionId: string): string {
    if (!isValidId(sessionId)) throw new TypeError(`Invalid session id "${sessionId}"`);
    return join(this.sessionsDir, `${sessionId.toLowerCase()}.turns`);
  }

  /**
   * Takes the lowest free turn number that is at least `from` and above every ticket, for
   * `jobId`. Resolves with that number.
   */
  async take(
    sessionId: string,
    from: number,
    ticket: { jobId: string; owner: ProcessIdentity },
  ): Promise<number> {
    const dir = this.dirOf(sessionId);
    await mkdir(dir, { recursive: true, mode: 0o700 });
    let turn = Math.max(from, (await this.#highest(dir)) + 1);
    const data = JSON.stringify({ jobId: ticket.jobId, owner: ticket.owner, at: Date.now() });
    const temp = join(dir, `.${process.pid}.${ticket.jobId}.tmp`);
    await writeFile(temp, data, { mode: 0o600 });
    try {
      for (const last = turn + 10_000; turn < last; turn++) {
        const path = join(dir, `${turn}.json`);
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
      throw new Error(`no free turn number between ${from} and ${turn} in ${dir}`);
    } finally {
      await rm(temp, { force: true }).catch(() => {});
    }
  }

  /** Every ticket of the session, by turn; an unreadable one has an empty job id. */
  async list(sessionId: string): Promise<TurnTicket[]> {
    const dir = this.dirOf(sessionId);
    const out: TurnTicket[] = [];
    for (const name of await namesIn(dir)) {
      const match = TICKET.exec(name);
      if (!match) continue;
      const turn = Number(match[1]);
      out.push({ turn, ...(await readTicket(join(dir, name))) });
    }
    return out.sort((a, b) => a.turn - b.turn);
  }

  /** Removes the ticket of `turn` if `jobId` holds it: the owner gives back a turn it never ran. */
  async release(sessionId: string, turn: number, jobId: string): Promise<void> {
    const path = join(this.dirOf(sessionId), `${turn}.json`);
    if ((await readTicket(path)).jobId === jobId) await rm(path, { force: true });
  }

  async #highest(dir: string): Promise<number> {
    let highest = 0;
    for (const name of await namesIn(dir)) {
      const match = TICKET.exec(name);
      if (match) highest = Math.max(highest, Number(match[1]));
    }
    return highest;
  }
}

/**
 * The earliest turn below `turn` that has not ended, or undefined when none. `state` tells
 * what a job is doing (reading its record marks one whose server died as interrupted).
 * `ended` remembers job ids found ended across calls: an end is final, so a long session's
 * old turns are not read again on every check.
 */
export async function blockingTurn(
  turns: SessionTurns,
  sessionId: string,
  turn: number,
  self: ProcessIdentity,
  state: (jobId: string) => Promise<TurnJobState>,
  ended = new Set<string>(),
): Promise<TurnTicket | undefined> {
  for (const ticket of await turns.list(sessionId)) {
    if (ticket.turn >= turn) break;
    if (ended.has(ticket.jobId)) continue;
    if (ticket.jobId === "") {
      if (await youngerThan(join(turns.dirOf(sessionId), `${ticket.turn}.json`))) return ticket;
      continue;
    }
    const now = await state(ticket.jobId);
    if (now === "running") return ticket;
    if (now === "missing") {
      // No record yet: its owner is creating it, or gave up. This process knows its own
      // jobs, so `state` said "running" for any it is still setting up.
      const mine = ticket.owner.pid === self.pid && ticket.owner.startTime === self.startTime;
      if (!mine && ticket.owner.pid > 0 && (await isRunning(ticket.owner))) return ticket;
    }
    // Ended, or never to be created: its owner is gone (a dead process creates nothing).
    ended.add(ticket.jobId);
  }
  return undefined;
}

/** Lets turns that wait hear at once that a turn of this process ended. */
export class TurnWakeups {
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
 * Waits until every turn of `sessionId` below `turn` has ended: true then, false when
 * `signal` aborts first (also when it aborts as the wait ends).
 */
export async function awaitTurn(options: {
  turns: SessionTurns;
  sessionId: string;
  turn: number;
  self: ProcessIdentity;
  state: (jobId: string) => Promise<TurnJobState>;
  signal: AbortSignal;
  /** Called with the turn waited for, each time that changes. */
  waiting?: (ticket: TurnTicket) => void;
  wakeups: TurnWakeups;
}): Promise<boolean> {
  const { turns, sessionId, turn, self, state, signal } = options;
  const ended = new Set<string>();
  await waitForEarlierTurns({
    blocking: () => blockingTurn(turns, sessionId, turn, self, state, ended),
    signal,
    ...(options.waiting ? { waiting: options.waiting } : {}),
    subscribe: options.wakeups.subscribe,
  });
  return !signal.aborted;
}

/**
 * Waits until `blocking` finds no earlier turn running. Resolves true then, or false when
 * `signal` aborts. `waiting` hears of each turn waited for; `subscribe` lets this process
 * say at once that one of its turns ended (other processes are polled).
 */
export async function waitForEarlierTurns(options: {
  blocking: () => Promise<TurnTicket | undefined>;
  signal: AbortSignal;
  waiting?: (ticket: TurnTicket) => void;
  subscribe: (wake: () => void) => () => void;
  pollMs?: number;
}): Promise<boolean> {
  let announced = "";
  while (!options.signal.aborted) {
    const ticket = await options.blocking();
    if (options.signal.aborted) return false;
    if (!ticket) return true;
    const key = `${ticket.turn}:${ticket.jobId}`;
    if (key !== announced) {
      announced = key;
      options.waiting?.(ticket);
    }
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        unsubscribe();
        options.signal.removeEventListener("abort", done);
        resolve();
      };
      const timer = setTimeout(done, options.pollMs ?? POLL_MS);
      const unsubscribe = options.subscribe(done);
      options.signal.addEventListener("abort", done, { once: true });
    });
  }
  return false;
}

async function namesIn(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw e;
  }
}

async function readTicket(path: string): Promise<{ jobId: string; owner: ProcessIdentity }> {
  try {
    const raw = JSON.parse(await readFile(path, "utf8")) as Partial<TurnTicket>;
    const owner = raw.owner;
    if (
      typeof raw.jobId === "string" && isValidId(raw.jobId) && typeof owner?.pid === "number" &&
      typeof owner.startTime === "string"
    ) {
      return {
        jobId: raw.jobId.toLowerCase(),
        owner: { pid: owner.pid, startTime: owner.startTime },
      };
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
