/**
 * Appending JSON lines to the native engine's job files (`messages.jsonl`, `transcript.jsonl`)
 * without making the loop wait for the disk, and settling them at the end of a turn.
 */
import { appendFile, stat, truncate } from "node:fs/promises";
import { errorMessage } from "../../errors.ts";
import type { TurnOutcome } from "../types.ts";

export const line = (value: unknown) => JSON.stringify(value) + "\n";

/**
 * Appends JSON lines in order without making the loop wait for the disk. The first failed
 * append (a full disk) stops the writer: the file is cut back to its last whole line, later
 * lines are not written, and `flush` rejects, so the turn fails instead of leaving a
 * history that silently misses entries.
 */
export class JsonlWriter {
  #queue: Promise<void> = Promise.resolve();
  #pending: string[] = [];
  /** Bytes known to be in the file, whole lines only; read on the first append. */
  #size: number | undefined;
  #failure: unknown;

  constructor(readonly path: string) {}

  push(value: unknown): void {
    if (this.#failure !== undefined) return;
    this.#pending.push(line(value));
    if (this.#pending.length > 1) return;
    this.#queue = this.#queue.then(() => this.#drain());
  }

  async #drain(): Promise<void> {
    if (this.#failure !== undefined || this.#pending.length === 0) return;
    const batch = this.#pending.join("");
    this.#pending = [];
    try {
      this.#size ??= await sizeOf(this.path);
      await appendFile(this.path, batch, { mode: 0o600 });
      this.#size += new TextEncoder().encode(batch).length;
    } catch (e) {
      this.#failure = e;
      this.#pending = [];
      // An append cut short leaves half a line; truncating frees space, so it works on a
      // full disk too.
      if (this.#size !== undefined) await truncate(this.path, this.#size).catch(() => {});
    }
  }

  /** Waits for every line; rejects when any could not be written. */
  async flush(): Promise<void> {
    await this.#queue;
    await this.#drain();
    if (this.#failure !== undefined) {
      throw new Error(`cannot write ${this.path}: ${errorMessage(this.#failure)}`, {
        cause: this.#failure,
      });
    }
  }
}

/**
 * Waits for the job files; when one could not be written, the turn failed (its answer is
 * kept), because a follow-up would continue from a history that misses what it did.
 */
export async function settleWriters(
  outcome: TurnOutcome,
  writers: JsonlWriter[],
): Promise<TurnOutcome> {
  const failures = (await Promise.allSettled(writers.map((w) => w.flush())))
    .filter((r): r is PromiseRejectedResult => r.status === "rejected")
    .map((r) => errorMessage(r.reason));
  if (failures.length === 0) return outcome;
  // The disk failed, whatever the backend did: no kind a fallback model could help with.
  const { failure: _backend, ...rest } = outcome;
  return {
    ...rest,
    ok: false,
    errorText: `Cannot save the job's conversation: ${failures.join("; ")}. The disk may be ` +
      `full: free space, then follow up; the follow-up continues from the last entry saved` +
      (outcome.errorText ? ` (the turn itself: ${outcome.errorText})` : ""),
  };
}

async function sizeOf(path: string): Promise<number> {
  try {
    return (await stat(path)).size;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return 0;
    throw e;
  }
}
