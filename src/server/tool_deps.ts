/** What the tool handlers are given, and how each turns its outcome into a tool result. */
import { traceOfMeta, withRequestTrace } from "../telemetry/telemetry.ts";
import { PROGRESS_MS } from "./progress.ts";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { WorkdirPolicy } from "../guard/workdirs.ts";
import { DelegateError, errorMessage, isDelegateError } from "../errors.ts";
import { isJobError } from "../jobs/errors.ts";
import type { ResolvedSettings } from "../settings/load.ts";
import { jobProblemText } from "./job_errors.ts";
import type { Runtime } from "../jobs/runtime.ts";
import type { JobTaskStore } from "./task_store.ts";

export interface ToolDeps {
  resolved: ResolvedSettings;
  serverCwd: string;
  /**
   * The user's Claude Code config dir, whose `agents/` (and the project's `.claude/agents/`)
   * hold subagents a call may name (issue 31); absent: Claude Code's files are not read.
   */
  claudeUserDir?: string;
  /** Where delegates may work: checked for cwd and add_dirs of every start and follow-up. */
  workdirs: WorkdirPolicy;
  /** The job layer and model policy, built at the first call that needs them. */
  runtime(): Promise<Runtime>;
  /** Present when the server offers MCP tasks (delegate_run). */
  taskStore?: JobTaskStore;
  /**
   * How often a blocking wait sends progress (and refreshes a task's status); PROGRESS_MS
   * unless the wiring says otherwise (the in-process test tier, to see several in a second).
   */
  progressMs?: number;
}

export const progressEvery = (deps: Pick<ToolDeps, "progressMs">): number =>
  deps.progressMs ?? PROGRESS_MS;

/** What the SDK hands a tool handler besides its arguments, as far as ours use it. */
export type ToolExtra = {
  signal: AbortSignal;
  _meta?: { progressToken?: string | number };
  sendNotification: (
    n: { method: "notifications/progress"; params: Record<string, unknown> },
  ) => Promise<void>;
};

export const textResult = (body: string, isError = false): CallToolResult => ({
  content: [{ type: "text", text: body }],
  ...(isError ? { isError: true } : {}),
});

/** A failure in words for the orchestrator: what went wrong and what to do. */
export function toolErrorText(e: unknown): string {
  if (isJobError(e)) return jobProblemText(e.problem);
  if (isDelegateError(e)) return e.message;
  return `Internal error: ${errorMessage(e)}`;
}

/** Every failure becomes an isError result whose text says what to do. */
export function catchToolErrors<A>(fn: (args: A, extra: ToolExtra) => Promise<CallToolResult>) {
  return async (args: A, extra: ToolExtra): Promise<CallToolResult> => {
    try {
      // Jobs the call starts run under the trace the client sent in `_meta`, if any. (A tool
      // without arguments is called with `extra` alone: none of those starts a job.)
      return await withRequestTrace(traceOfMeta(extra?._meta), () => fn(args, extra));
    } catch (e) {
      return textResult(toolErrorText(e), true);
    }
  };
}

/**
 * The job layer's errors worded for the orchestrator, for callers (delegate_run) that show
 * a DelegateError's message as it is.
 */
export async function wordJobErrors<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (e) {
    if (isJobError(e)) throw new DelegateError(jobProblemText(e.problem), { cause: e });
    throw e;
  }
}
