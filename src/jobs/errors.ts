/**
 * Errors of the job layer that a caller is expected to handle. Each carries what went wrong
 * as data; the front ends (server/, cli/) word it for their reader, with what that reader
 * can do about it. The message is a plain statement for logs.
 */
import { DelegateError, isDelegateError } from "../errors.ts";
import type { JobState } from "./record.ts";

/** A job an error offers instead of the one asked for (job_ref.ts), newest first. */
export interface JobCandidate {
  id: string;
  state?: JobState;
  createdAt?: number;
  model?: string;
}

export type JobProblem =
  | { kind: "unknown-job"; id: string }
  | { kind: "unknown-session"; id: string }
  /** A job reference that cannot be an id nor a prefix of one (job_ref.ts). */
  | { kind: "bad-job-ref"; ref: string; why: "empty" | "too-short" | "not-an-id" }
  /** No job id starts with the prefix; `newest` are the newest of the `jobs` there are. */
  | {
    kind: "unmatched-job-prefix";
    prefix: string;
    stateDir: string;
    jobs: number;
    newest: JobCandidate[];
  }
  /** Several job ids start with the prefix; `matches` are the newest of them. */
  | { kind: "ambiguous-job-prefix"; prefix: string; count: number; matches: JobCandidate[] }
  /** Another server process runs the job and has not stopped it yet; the request stays. */
  | {
    kind: "cancel-pending";
    id: string;
    ownerPid: number | undefined;
    state: JobState;
    waitedMs: number;
  }
  /** An engine was asked for something only the native engine does. */
  | { kind: "needs-native"; what: "backend" | "files"; baseUrl: string }
  /** The backend does not serve the API the engine speaks (engines/registry.ts backendApi). */
  | {
    kind: "backend-api";
    engine: string;
    backend: string;
    backendKind: string;
    needs: "messages";
    /** The kinds that serve it. */
    kinds: readonly string[];
  }
  | { kind: "unknown-backend"; name: string | undefined; configured: readonly string[] }
  | { kind: "no-model-for-backend"; backend: string }
  | { kind: "model-not-allowed"; model: string; allowed: readonly string[] }
  /**
   * The setting `residency` is "local" and the turn would leave this machine and its private
   * network (settings/residency.ts): `role` says whose model it is.
   */
  | {
    kind: "not-local";
    role: ModelRole;
    model: string;
    backend: string;
    place: "cloud" | "remote";
    /** Why, as settings/residency.ts `placeReason` words it. */
    reason: string;
  }
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

/**
 * Whose choice a job's model is: the call's (or its agent's), the default model, the session's
 * (a follow-up), or a review's reviewer.
 */
export type ModelRole = "call" | "default" | "session" | "reviewer";

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
    case "bad-job-ref":
      return `Unknown job id "${p.ref.slice(0, 80)}": not a job id nor a prefix of one (${p.why})`;
    case "unmatched-job-prefix":
      return `Unknown job id "${p.prefix.slice(0, 80)}": no job id in ${p.stateDir} starts with it`;
    case "ambiguous-job-prefix":
      return `Ambiguous job id "${p.prefix.slice(0, 80)}": ${p.count} job ids start with it`;
    case "cancel-pending":
      return `Job ${p.id} is still ${p.state} after a cancel request to pid ${p.ownerPid ?? "?"}`;
    case "needs-native":
      return `Cannot start job: ${p.what} needs engine "native"`;
    case "backend-api":
      return `Cannot start job: backend "${p.backend}" (kind ${p.backendKind}) does not serve ` +
        `the Messages API the ${p.engine} engine speaks`;
    case "unknown-backend":
      return `Cannot start job: there is no backend "${p.name}"`;
    case "no-model-for-backend":
      return `Cannot start job: no model named for backend "${p.backend}"`;
    case "model-not-allowed":
      return `Cannot start job: model "${p.model}" is not in the allowed list`;
    case "daily-budget":
      return `Cannot start job: backend "${p.backend}" reached its daily budget`;
    case "not-local":
      return `Cannot start job: residency is "local" and ${p.reason}`;
  }
}
