import { sleep } from "../platform/sleep.ts";
import type { JobView } from "./live_job.ts";
import { isTerminal } from "./record.ts";

export interface WaitOptions {
  signal?: AbortSignal;
  tick?: (view: JobView, elapsedMs: number) => void;
  tickMs?: number;
}

/**
 * Waits until job `id` ends or `seconds` pass (600 at most), reading its view anew after
 * each step; `tick` runs every `tickMs` meanwhile. A job this process runs wakes the wait
 * as it ends (`finished`); any other is read again every half second.
 */
export async function waitForEnd(
  id: string,
  seconds: number,
  options: WaitOptions,
  jobs: {
    get(id: string): Promise<JobView>;
    finished(id: string): Promise<void> | undefined;
  },
): Promise<JobView> {
  const started = Date.now();
  const deadline = started + Math.min(seconds, 600) * 1000;
  const tickMs = options.tickMs ?? 5000;
  let view = await jobs.get(id);
  // `id` may be a prefix: the whole id is not looked up again at every step.
  const whole = view.record.id;
  let lastTick = started;
  while (!isTerminal(view.record.state) && Date.now() < deadline && !options.signal?.aborted) {
    const finished = jobs.finished(whole);
    const step = Math.min(deadline - Date.now(), finished ? tickMs : 500, tickMs);
    // The step's timer goes when the job ends first: one left running would hold a command-line
    // process (review --gate) open for the rest of the step after its answer was printed.
    const woken = new AbortController();
    const signal = options.signal ? AbortSignal.any([options.signal, woken.signal]) : woken.signal;
    try {
      await Promise.race([finished ?? new Promise(() => {}), sleep(step, signal)]);
    } finally {
      woken.abort();
    }
    view = await jobs.get(whole);
    if (options.tick && Date.now() - lastTick >= tickMs - 5 && !isTerminal(view.record.state)) {
      lastTick = Date.now();
      options.tick(view, lastTick - started);
    }
  }
  return view;
}
