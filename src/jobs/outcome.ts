import type { TurnOutcome } from "../engines/types.ts";
import type { StopReason } from "./live_job.ts";
import type { JobRecord } from "./record.ts";
import type { CancelSource } from "./store.ts";

/** What, besides the turn's own outcome, decides how a job ends. */
export interface EndContext {
  jobTimeoutMs: number;
  /** Why the server is stopping, for jobs its shutdown interrupts ("the client closed stdin"). */
  shutdownReason: string;
  /** Who cancelled the job, when not this server's own client. */
  cancelledFrom?: CancelSource;
  /** How the job's shared backend slot went to another job. */
  slotLost?: string;
  /** Which budget the job passed (`budget_exhausted: ...`). */
  budgetExhausted?: string;
  now?: number;
}

/**
 * Writes a turn's end into its record: the figures the engine reported, then the state the
 * job ends in. A stop by this process (cancel, timeout, shutdown) decides the state over
 * what the engine saw; without an outcome the job never reached its engine. No I/O.
 */
export function applyOutcome(
  record: JobRecord,
  outcome: TurnOutcome | undefined,
  stopReason: StopReason | undefined,
  context: EndContext,
): void {
  record.endedAt = context.now ?? Date.now();
  if (outcome) {
    record.exitCode = outcome.exitCode;
    record.signal = outcome.signal;
    if (outcome.usage) record.usage = outcome.usage;
    record.permissionDenials = outcome.permissionDenials;
  }
  switch (stopReason) {
    case "cancel":
      record.state = "cancelled";
      record.errorText = context.cancelledFrom === "terminal"
        ? "Cancelled from a terminal (ollama-delegate jobs cancel)"
        : context.cancelledFrom === "session"
        ? "Cancelled from another Claude Code session (delegate_cancel)"
        : "Cancelled by caller";
      break;
    case "timeout":
      record.state = "failed";
      record.errorText = `Timed out after ${Math.round(context.jobTimeoutMs / 1000)}s`;
      break;
    case "slot-lost":
      record.state = "interrupted";
      record.errorText = `Stopped because ${
        context.slotLost ?? "its backend's shared slot went to another job"
      }; follow up to continue`;
      break;
    case "budget":
      record.state = "failed";
      record.errorText = context.budgetExhausted ?? "budget_exhausted: the job passed its budget";
      break;
    case "shutdown":
      record.state = "interrupted";
      record.errorText =
        `Stopped because ${context.shutdownReason} before the job finished; follow up to continue`;
      break;
    default:
      record.state = outcome?.ok ? "completed" : "failed";
      if (!outcome?.ok) record.errorText = outcome?.errorText ?? "The job failed";
  }
  const idle = nothingRan(record);
  if (idle && !(record.warnings ?? []).includes(idle)) (record.warnings ??= []).push(idle);
  delete record.child;
}

/**
 * The warning for a turn whose every tool call was denied or refused, or undefined: its
 * `completed` and `exit: code 0` would otherwise read as work done.
 */
export function nothingRan(record: JobRecord): string | undefined {
  const calls = record.toolCalls;
  const denied = record.permissionDenials.length;
  const refused = (record.commands ?? []).filter((c) => c.refused !== undefined).length;
  if (calls === 0 || denied + refused < calls) return undefined;
  const why = [
    ...(denied > 0 ? [`${denied} denied by permissions`] : []),
    ...(refused > 0 ? [`${refused} refused by the sandbox`] : []),
  ].join(", ");
  const ran = calls === 1
    ? "its only tool call did not run"
    : `none of its ${calls} tool calls ran`;
  return `${ran} (${why}): the delegate looked at and changed nothing, so its answer rests on ` +
    "no work in the project";
}

/**
 * A job whose end could not be written (a full disk) did not end for a follow-up or another
 * process: it is never reported completed, and its error says where and what to do.
 */
export function applyUnwrittenEnd(record: JobRecord, folder: string, error: string): void {
  const was = record.errorText ? ` (${record.errorText})` : "";
  if (record.state === "completed") record.state = "failed";
  record.errorText = `Cannot record the end of the job in ${folder}: ${error}${was}. Its ` +
    `output is kept in memory while this server runs and written when that works again; ` +
    `free disk space there, then follow up to continue`;
}
