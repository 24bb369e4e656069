/**
 * Progress notifications of one blocking call (a `wait_seconds` wait, delegate_run without a
 * task, a review panel, delegate_status over several jobs). MCP wants each call's progress to
 * grow with every notification: here it is the seconds since the call began, to the
 * millisecond, and never the same twice even when two jobs of one call report at once.
 */

/** How often a blocking call reports progress while its jobs run. */
export const PROGRESS_MS = 5000;

/** The part of a tool handler's `extra` that progress needs. */
export interface ProgressTarget {
  _meta?: { progressToken?: string | number };
  sendNotification: (n: {
    method: "notifications/progress";
    params: { progressToken: string | number; progress: number; total?: number; message?: string };
  }) => Promise<void>;
}

/** Sends one notification; `message` gets the whole seconds since the call began. */
export type ReportProgress = (message: (seconds: number) => string) => void;

/**
 * The reporter of one call, or undefined when the client asked for no progress (no token).
 * `total`: the seconds the call waits at most, when it has a limit.
 */
export function progressOf(target: ProgressTarget, total?: number): ReportProgress | undefined {
  const token = target._meta?.progressToken;
  if (token === undefined) return undefined;
  const started = Date.now();
  let last = 0;
  return (message) => {
    const elapsed = Date.now() - started;
    const progress = Math.max(elapsed, last + 1);
    last = progress;
    target.sendNotification({
      method: "notifications/progress",
      params: {
        progressToken: token,
        progress: progress / 1000,
        ...(total !== undefined ? { total } : {}),
        message: message(Math.round(elapsed / 1000)),
      },
    }).catch(() => {});
  };
}
