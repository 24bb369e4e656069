import type { JobManager } from "./manager.ts";

/** A moment after start-up, so that `initialize` never waits for the sweep. */
const SWEEP_DELAY_MS = 500;

/**
 * Recovers, in the background, the jobs of server processes that died (a crash, a SIGKILL):
 * each becomes interrupted and the delegate tree it recorded is stopped, without waiting
 * for someone to read the job. The timer never keeps the process alive. Resolves with the
 * ids recovered.
 */
export function startBackgroundSweep(
  manager: JobManager,
  log: (line: string) => void,
  delayMs = SWEEP_DELAY_MS,
): Promise<string[]> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      manager.recoverOrphans().then((ids) => {
        if (ids.length > 0) {
          log(
            `recovered ${ids.length} job(s) whose server had stopped (now interrupted, their ` +
              `delegates stopped): ${ids.slice(0, 5).join(", ")}${ids.length > 5 ? ", ..." : ""}`,
          );
        }
        resolve(ids);
      }, (e) => {
        log(`cannot recover the jobs of stopped servers: ${(e as Error).message}`);
        resolve([]);
      });
    }, delayMs);
    (timer as { unref?: () => void }).unref?.();
  });
}
