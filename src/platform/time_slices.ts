/**
 * Long synchronous work cut into slices: a walk that calls the file system synchronously (many
 * times faster than node:fs/promises on Deno, whose each call is an operation of its own) still
 * lets the server's event loop answer between slices, every 20 ms at most.
 */
import { setTimeout as delay } from "node:timers/promises";

/** How long a slice of synchronous work may run before the event loop gets a turn. */
const SLICE_MS = 20;

export class TimeSlices {
  #slice = performance.now();

  /** Yields to the event loop when the current slice has run its time. */
  async maybe(): Promise<void> {
    if (performance.now() - this.#slice < SLICE_MS) return;
    await delay(0);
    this.#slice = performance.now();
  }
}
