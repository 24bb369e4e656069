/**
 * A wait that a signal may cut short. node:timers/promises rejects when its signal aborts;
 * the waits here are polls and backoffs whose callers look again at why they woke (a job
 * ended, a slot came free, the caller gave up), so an abort ends the wait, not the caller.
 * A wait that nothing cuts short is node:timers/promises' setTimeout itself.
 */
import { setTimeout as delay } from "node:timers/promises";

/** Resolves after `ms`, or at once when `signal` aborts (or has aborted). */
export async function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  try {
    await delay(Math.max(0, ms), undefined, signal ? { signal } : undefined);
  } catch (e) {
    if (!signal?.aborted) throw e;
  }
}
