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

/**
 * What `promise` gives, or `fallback` when it has not settled within `ms`. The deadline's timer
 * goes when the promise settles first: a timer left running would hold a command-line process
 * open for the rest of its time after its work was done.
 */
export async function settleWithin<T, F>(
  promise: Promise<T>,
  ms: number,
  fallback: F,
): Promise<T | F> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<F>((resolve) => timer = setTimeout(() => resolve(fallback), Math.max(0, ms))),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
