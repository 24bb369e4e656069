/**
 * Errors of the job layer that a caller is expected to handle. Each carries what went wrong
 * as data; the front ends (server/, cli/) word it for their reader, with what that reader
 * can do about it. The message is a plain statement for logs.
 */
import { DelegateError, isDelegateError } from "../errors.ts";
import type { JobState } from "./record.ts";

export type JobProblem =
  | { kind: "unknown-job"; id: string }
  | { kind: "unknown-session"; id: string }
  /** Another server process runs the job and has not stopped it yet; the request stays. */
  | {
    kind: "cancel-pending";
    id: string;
    ownerPid: number | undefined;
    state: JobState;
    waitedMs: number;
  }
  /** The claude engine was asked for something only the native engine does. */
  | { kind: "needs-native"; what: "backend" | "files"; baseUrl: string }
  | { kind: "unknown-backend"; name: string | undefined; configured: readonly string[] }
  | { kind: "no-model-for-backend"; backend: string }
  | { kind: "model-not-allowed"; model: string; allowed: readonly string[] }
  /** The backend's spend today reached one of its daily budgets (daily_budget.ts). */
  | {
    kind: "daily-budget";
    backend: string;
    what: "usd" | "tokens";
    spent: number;
    budget: number;
    /** When the UTC day ends and the budget starts again. */
    resetsAt: number;
    now: number;
    /** Jobs of today whose cost is unknown (no price). */
    unpriced: number;
  };

export class JobError extends DelegateError {
  override name = "JobError";

  constructor(readonly problem: JobProblem, options?: { cause?: unknown }) {
    super(plainMessage(problem), options);
  }
}

/** True for a JobError from any copy of this module (bundles may hold two). */
export function isJobError(value: unknown): value is JobError {
  return isDelegateError(value) && typeof (value as { problem?: unknown }).problem === "object";
}

function plainMessage(p: JobProblem): string {
  switch (p.kind) {
    case "unknown-job":
      return `Unknown job id "${p.id.slice(0, 80)}"`;
    case "unknown-session":
      return `Unknown session id "${p.id.slice(0, 80)}"`;
    case "cancel-pending":
      return `Job ${p.id} is still ${p.state} after a cancel request to pid ${p.ownerPid ?? "?"}`;
    case "needs-native":
      return `Cannot start job: ${p.what} needs engine "native"`;
    case "unknown-backend":
      return `Cannot start job: there is no backend "${p.name}"`;
    case "no-model-for-backend":
      return `Cannot start job: no model named for backend "${p.backend}"`;
    case "model-not-allowed":
      return `Cannot start job: model "${p.model}" is not in the allowed list`;
    case "daily-budget":
      return `Cannot start job: backend "${p.backend}" reached its daily budget`;
  }
}
