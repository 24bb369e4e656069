/**
 * Retention: a server prunes finished jobs older than `retainDays` a moment after it starts
 * (retention.ts does the pruning).
 */
import type { Settings } from "../settings/types.ts";
import { pruneJobs, type PruneReport } from "./retention.ts";
import type { JobStore } from "./store.ts";

const DAY_MS = 86_400_000;
/**
 * Server start-up must never wait for pruning: removing many job folders can take seconds
 * while the client waits for the handshake.
 */
const BACKGROUND_DELAY_MS = 2000;

/** Handle of a scheduled background prune. */
export interface BackgroundPrune {
  /** Cancels the prune if it has not started. */
  stop(): void;
  /** The report, or undefined when nothing ran (retention off, stopped, or failed). */
  done: Promise<PruneReport | undefined>;
}

/**
 * Prunes finished jobs older than `retainDays` a moment after the server starts, so that
 * `initialize` never waits for it; 0 keeps jobs forever. The timer never keeps the process
 * alive. Logs one line when something was removed or could not be read.
 */
export function startBackgroundPrune(
  store: JobStore,
  settings: Settings,
  log: (line: string) => void,
  delayMs = BACKGROUND_DELAY_MS,
): BackgroundPrune {
  const retainDays = settings.retainDays;
  let resolve!: (r: PruneReport | undefined) => void;
  const done = new Promise<PruneReport | undefined>((r) => (resolve = r));
  if (!(retainDays > 0)) {
    resolve(undefined);
    return { stop() {}, done };
  }
  const timer = setTimeout(() => {
    pruneJobs(store, { olderThanMs: retainDays * DAY_MS, settings }).then((report) => {
      if (report.removed.length > 0 || report.failed.length > 0) {
        const files = report.engineFiles.reduce((n, f) => n + f.paths.length, 0);
        log(
          `retention: removed ${report.removed.length} finished job(s) older than ` +
            `${retainDays} days` +
            (files > 0 ? ` and ${files} file(s) their engines kept of them` : "") +
            (report.failed.length > 0 ? `; could not remove ${report.failed.length}` : ""),
        );
      }
      for (const w of report.worktrees) log(`retention: ${w.note}`);
      if (report.corrupt.length > 0) {
        log(
          `retention: skipped ${report.corrupt.length} unreadable job record(s), e.g. ` +
            `${report.corrupt[0]!.id}: ${report.corrupt[0]!.reason}`,
        );
      }
      resolve(report);
    }, (e) => {
      log(`retention: cannot prune ${store.stateDir}: ${(e as Error).message}`);
      resolve(undefined);
    });
  }, delayMs);
  (timer as { unref?: () => void }).unref?.();
  return {
    stop() {
      clearTimeout(timer);
      resolve(undefined);
    },
    done,
  };
}
