/**
 * `delegate_run`: one delegation run to completion. A client that negotiates MCP tasks gets a
 * task to poll and cancel: 2025-11-25 tasks (basic/utilities/tasks, experimental SEP-1686)
 * through the SDK, or the 2026-07-28 tasks extension through server/transport/revision_2026.ts, which interactive
 * Claude Code uses to run the call in the background. A client that asks for neither (Claude
 * Code's `claude -p` and subagents) gets a blocking call with progress notifications. The job
 * is the source of truth; the task mirrors its state (task_store.ts).
 */
import type { ToolTaskHandler } from "@modelcontextprotocol/sdk/experimental/tasks";
import type { McpServer, RegisteredTool } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult, Task } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { errorMessage, isDelegateError } from "../errors.ts";
import type { JobView } from "../jobs/manager.ts";
import { isTerminal, type JobState } from "../jobs/record.ts";
import { shapes } from "./shapes.ts";
import { activityLines } from "./render.ts";
import { type JobTaskStore, POLL_MS } from "./task_store.ts";
import { progressOf, type ReportProgress } from "./progress.ts";

export { JobTaskStore } from "./task_store.ts";

const { wait_seconds: _omitted, ...startFields } = shapes.start;
/**
 * delegate_start's inputs minus `wait_seconds` (a run always goes to the end), without the
 * per-field descriptions: delegate_start lists them, and tools/list costs the orchestrator
 * context on every turn.
 */
export const shapeRun = Object.fromEntries(
  Object.entries(startFields).map((
    [name, field],
  ) => [name, field.meta({ description: undefined })]),
) as typeof startFields;
export type RunArgs = z.infer<z.ZodObject<typeof startFields>>;

export interface RunToolDeps {
  /** The same store given to the McpServer constructor as `taskStore`. */
  taskStore: JobTaskStore;
  /** What delegate_start does: validate, resolve the model, start the job. */
  start(args: RunArgs): Promise<JobView>;
  wait(
    id: string,
    seconds: number,
    options: {
      signal?: AbortSignal;
      tick?: (view: JobView, elapsedMs: number) => void;
      tickMs?: number;
    },
  ): Promise<JobView>;
  /** Stops the job and its process tree, and resolves once the end is recorded. */
  cancel(id: string): Promise<{ view: JobView; wasRunning: boolean }>;
  /** The text delegate_result gives for a finished job. */
  reply(view: JobView): Promise<CallToolResult> | CallToolResult;
  /** The client collected the reply of the job's end (its result is read: jobs/unread.ts). */
  markDelivered?(view: JobView): Promise<void>;
  /** Progress and task status refresh while a job runs (as for `wait_seconds`). */
  progressMs: number;
}

function taskStatusOf(state: JobState): Task["status"] {
  if (state === "completed") return "completed";
  if (state === "cancelled") return "cancelled";
  return isTerminal(state) ? "failed" : "working";
}

/** One line for `statusMessage` and progress: the job id first, so a client can use the other tools. */
function describe(view: JobView, seconds?: number): string {
  const r = view.record;
  const last = view.activities.at(-1);
  const doing = last ? `: ${activityLines([last], 1)[0]!.trim()}` : "";
  const where = r.state === "queued" && view.queuePosition > 0
    ? ` (queue position ${view.queuePosition})`
    : "";
  const time = seconds === undefined ? "" : `, ${seconds}s`;
  return `job ${r.id} ${r.state}${where}${time}${doing}`;
}

const errorResult = (e: unknown): CallToolResult => ({
  content: [{
    type: "text",
    text: isDelegateError(e) ? e.message : `Internal error: ${errorMessage(e)}`,
  }],
  isError: true,
});

const DESCRIPTION =
  "Run a delegated task to completion: delegate_start's inputs minus wait_seconds. " +
  "Interactive Claude Code runs it in the background; its result arrives by itself " +
  "(TaskStop stops it). Elsewhere it blocks, with progress every 5 s. " +
  "Replies like delegate_result, with the job_id for follow-ups.";

const runInput = z.object(shapeRun);

/** The SDK's wording for arguments that fail the schema, so both protocols say the same. */
function invalidArguments(error: z.ZodError): CallToolResult {
  const issues = error.issues.map((i) =>
    i.path.length > 0 ? `${i.message} at ${i.path.join(".")}` : i.message
  );
  return {
    content: [{
      type: "text",
      text: `Input validation error: Invalid arguments for tool delegate_run: ${issues.join("\n")}`,
    }],
    isError: true,
  };
}

/** Registers `delegate_run` (taskSupport "optional"); needs `deps.taskStore` on the server. */
export function registerRunTool(server: McpServer, deps: RunToolDeps): RegisteredTool {
  const store = deps.taskStore;

  /** Records the job's end in its task; the first caller wins. */
  const finish = async (taskId: string, view: JobView) => {
    const status = taskStatusOf(view.record.state);
    const task = store.settle(
      taskId,
      status,
      await deps.reply(view),
      describe(view),
      async () => await deps.markDelivered?.(view),
    );
    if (task && store.announcesStatus(taskId)) {
      server.server.notification({ method: "notifications/tasks/status", params: task })
        .catch(() => {});
    }
  };

  /** Waits until the job ends or `signal` aborts, refreshing the task and sending progress. */
  const follow = async (
    taskId: string,
    first: JobView,
    report?: ReportProgress,
    signal?: AbortSignal,
  ) => {
    const tick = (v: JobView) => {
      store.note(taskId, describe(v));
      report?.((s) => describe(v, s));
    };
    let view = first;
    while (!isTerminal(view.record.state) && !signal?.aborted) {
      view = await deps.wait(view.record.id, 600, {
        tickMs: deps.progressMs,
        tick,
        ...(signal ? { signal } : {}),
      });
    }
    return view;
  };

  /** Starts the job of a task; the error result when it could not start. */
  const begin = async (taskId: string, args: RunArgs): Promise<JobView | CallToolResult> => {
    let view: JobView;
    try {
      view = await deps.start(args);
    } catch (e) {
      return errorResult(e);
    }
    const jobId = view.record.id;
    store.note(taskId, describe(view));
    store.onCancel(taskId, async () => {
      await finish(taskId, (await deps.cancel(jobId)).view);
    });
    return view;
  };
  const started = (x: JobView | CallToolResult): x is JobView => "record" in x;

  /** The client polls: the job is followed here until it ends. */
  const detach = (taskId: string, view: JobView) => {
    follow(taskId, view).then((end) => finish(taskId, end)).catch((e) =>
      store.settle(taskId, "failed", errorResult(e))
    );
  };

  // The 2026-07-28 tasks extension, served outside the SDK (server/transport/revision_2026.ts).
  store.serveDetached(async (taskId, raw) => {
    const parsed = runInput.safeParse(raw ?? {});
    if (!parsed.success) return invalidArguments(parsed.error);
    const view = await begin(taskId, parsed.data);
    if (!started(view)) return view;
    detach(taskId, view);
    return undefined;
  });

  const handler: ToolTaskHandler<typeof shapeRun> = {
    createTask: async (args, extra) => {
      const created = await extra.taskStore.createTask({
        ttl: extra.taskRequestedTtl ?? null,
        pollInterval: POLL_MS,
      });
      const taskId = created.taskId;
      const view = await begin(taskId, args);
      if (!started(view)) {
        store.settle(taskId, "failed", view);
        return { task: await extra.taskStore.getTask(taskId) };
      }
      if (store.isAugmented(taskId)) {
        detach(taskId, view);
        return { task: await extra.taskStore.getTask(taskId) };
      }
      // No `task` in the request: block until the job ends. The SDK then returns the
      // stored result at once, since the task is already terminal. The manager's job
      // timeout bounds the wait; a cancelled request cancels the job.
      try {
        let end = await follow(taskId, view, progressOf(extra), extra.signal);
        if (!isTerminal(end.record.state)) end = (await deps.cancel(view.record.id)).view;
        await finish(taskId, end);
      } catch (e) {
        store.settle(taskId, "failed", errorResult(e));
      }
      return { task: await extra.taskStore.getTask(taskId) };
    },
    getTask: async (_args, extra) => await extra.taskStore.getTask(extra.taskId),
    getTaskResult: async (_args, extra) =>
      (await extra.taskStore.getTaskResult(extra.taskId)) as CallToolResult,
  };
  return server.experimental.tasks.registerToolTask(
    "delegate_run",
    {
      title: "Run a delegated task to completion",
      description: DESCRIPTION,
      inputSchema: shapeRun,
      annotations: { readOnlyHint: false, destructiveHint: true, openWorldHint: true },
      execution: { taskSupport: "optional" },
    },
    handler,
  );
}
