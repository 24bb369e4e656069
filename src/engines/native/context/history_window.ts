/**
 * Which entries of the conversation before it a follow-up reads back: the task, and the newest
 * whole exchanges (a user message and everything up to the next one) that fit a budget in
 * bytes of their saved lines. Older exchanges are left out, whole, oldest first, so that a
 * tool call is never kept without its result; an exchange too large for the budget on its
 * own is left out too. Entries are fed in file order and forgotten as soon as they fall out.
 */

interface Exchange<T> {
  entries: T[];
  /** Bytes of the messages held. */
  bytes: number;
  /** Left out: what comes next of it is not kept either. */
  out: boolean;
}

/** What was left out: whole messages and the bytes of their saved lines. */
export interface LeftOut {
  messages: number;
  bytes: number;
}

export class HistoryWindow<T> {
  #task: T | undefined;
  #taskBytes = 0;
  #seen = 0;
  #exchanges: Array<Exchange<T>> = [];
  /** Bytes of the exchanges kept. */
  #bytes = 0;
  readonly leftOut: LeftOut = { messages: 0, bytes: 0 };

  constructor(readonly budgetBytes: number) {}

  /** The next entry of the file, its role and the size of its line. */
  add(entry: T, role: string, bytes: number): void {
    if (this.#seen++ === 0 && role === "user") {
      // The task is kept whatever its size: every request carries it (it has caps of its
      // own: the prompt's, and the inlined files' share of the context).
      this.#task = entry;
      this.#taskBytes = bytes;
      return;
    }
    const current = this.#current(role === "user");
    if (current.out) {
      this.#leave(1, bytes);
      return;
    }
    current.entries.push(entry);
    current.bytes += bytes;
    this.#bytes += bytes;
    this.#fit();
  }

  /** The task, when the file starts with one. */
  get task(): T | undefined {
    return this.#task;
  }

  /** The exchanges kept, oldest first. */
  get exchanges(): T[][] {
    return this.#exchanges.filter((e) => !e.out).map((e) => e.entries);
  }

  /** Counts an exchange found unreadable after all as left out. */
  leave(entries: number, bytes: number): void {
    this.#leave(entries, bytes);
  }

  #current(opens: boolean): Exchange<T> {
    if (opens || this.#exchanges.length === 0) {
      // One left out before it has nothing more to count.
      if (this.#exchanges.at(-1)?.out) this.#exchanges.pop();
      this.#exchanges.push({ entries: [], bytes: 0, out: false });
    }
    return this.#exchanges.at(-1)!;
  }

  /** Leaves out the oldest exchanges until the kept ones fit; then the newest, if it must. */
  #fit(): void {
    const room = Math.max(0, this.budgetBytes - this.#taskBytes);
    while (this.#bytes > room && this.#exchanges.length > 1) this.#drop(this.#exchanges.shift()!);
    if (this.#bytes > room) this.#drop(this.#exchanges.at(-1)!);
  }

  /** Leaves out what `exchange` holds, and what comes next of it. */
  #drop(exchange: Exchange<T>): void {
    this.#leave(exchange.entries.length, exchange.bytes);
    this.#bytes -= exchange.bytes;
    exchange.entries = [];
    exchange.bytes = 0;
    exchange.out = true;
  }

  #leave(messages: number, bytes: number): void {
    this.leftOut.messages += messages;
    this.leftOut.bytes += bytes;
  }
}
