/**
 * `delegate_run`: one delegation run to completion. A client that negotiates MCP tasks
 * (2025-11-25 basic/utilities/tasks, experimental SEP-1686) gets a task to poll and cancel;
 * a client that sends no `task` parameter (Claude Code) gets a blocking call with progress
 * notifications. The job is the source of truth; the task mirrors its state.
 */
import { randomUUID } from "node:crypto";
import type {
  CreateTaskOptions,
  TaskStore,
  ToolTaskHandler,
} from "@modelcontextprotocol/sdk/experimental/tasks";
import type { McpServer, RegisteredTool } from "@modelcontextprotocol/sdk/server/mcp.js";
import {
  type CallToolResult,
  ErrorCode,
  McpError,
  type Request,
  type RequestId,
  type Result,
  type Task,
} from "@modelcontextprotocol/sdk/types.js";
import type { z } from "zod";
import { errorMessage, isDelegateError } from "../errors.ts";
import type { JobView } from "../jobs/manager.ts";
import { isTerminal, type JobState } from "../jobs/record.ts";
import { shapes } from "./inputs.ts";
import { activityLines } from "./render.ts";

/** How often a task-capable client is asked to poll, and the SDK's own auto-poll. */
const POLL_MS = 1000;
/** Progress and task status refresh while a job runs (as for `wait_seconds`). */
const TICK_MS = 5000;
/** Finished tasks are kept this long unless the client asks for less (spec: ttl may be overridden). */
const DEFAULT_TTL_MS = 60 * 60 * 1000;
const MAX_TTL_MS = 24 * 60 * 60 * 1000;

/** The server capability to declare next to the task store (spec: tasks capabilities). */
export const TASKS_CAPABILITY = { list: {}, cancel: {}, requests: { tools: { call: {} } } };

const { wait_seconds: _omitted, ...startFields } = shapes.start;
/**
 * delegate_start's inputs minus `wait_seconds` (a run always goes to the end), without the
 * per-field descriptions: delegate_start lists them, and tools/list costs context on every
 * turn (issue 5 item 4).
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
}

type TaskStatus = Task["status"];
const isTerminalStatus = (s: TaskStatus) =>
  s === "completed" || s === "failed" || s === "cancelled";

interface Entry {
  task: Task;
  sessionId: string | undefined;
  /** Whether the request carried `task`; false for the SDK's automatic polling. */
  augmented: boolean;
  result?: Result;
  onCancel?: () => Promise<void>;
}

/**
 * An in-memory TaskStore whose `cancelled` transition stops the job first, and which keeps a
 * result for cancelled tasks too, so `tasks/result` always answers with the job's text.
 */
export class JobTaskStore implements TaskStore {
  readonly #tasks = new Map<string, Entry>();

  #entry(taskId: string, sessionId?: string): Entry | undefined {
    const entry = this.#tasks.get(taskId);
    if (entry && sessionId !== undefined && entry.sessionId !== undefined) {
      return entry.sessionId === sessionId ? entry : undefined;
    }
    return entry;
  }

  createTask(
    params: CreateTaskOptions,
    _requestId: RequestId,
    request: Request,
    sessionId?: string,
  ): Promise<Task> {
    const now = new Date().toISOString();
    const task: Task = {
      taskId: randomUUID(),
      status: "working",
      ttl: Math.min(params.ttl ?? DEFAULT_TTL_MS, MAX_TTL_MS),
      createdAt: now,
      lastUpdatedAt: now,
      pollInterval: params.pollInterval ?? POLL_MS,
    };
    const augmented = request.params !== undefined && "task" in request.params &&
      request.params.task !== undefined;
    this.#tasks.set(task.taskId, { task, sessionId, augmented });
    return Promise.resolve({ ...task });
  }

  getTask(taskId: string, sessionId?: string): Promise<Task | null> {
    const entry = this.#entry(taskId, sessionId);
    return Promise.resolve(entry ? { ...entry.task } : null);
  }

  storeTaskResult(
    taskId: string,
    status: "completed" | "failed",
    result: Result,
    sessionId?: string,
  ): Promise<void> {
    const entry = this.#entry(taskId, sessionId);
    if (!entry) return Promise.reject(new Error(`Task ${taskId} not found`));
    if (isTerminalStatus(entry.task.status)) {
      return Promise.reject(new Error(`Task ${taskId} is already ${entry.task.status}`));
    }
    this.settle(taskId, status, result);
    return Promise.resolve();
  }

  getTaskResult(taskId: string, sessionId?: string): Promise<Result> {
    const result = this.#entry(taskId, sessionId)?.result;
    return result
      ? Promise.resolve(result)
      : Promise.reject(new Error(`Task ${taskId} has no result yet`));
  }

  async updateTaskStatus(
    taskId: string,
    status: TaskStatus,
    statusMessage?: string,
    sessionId?: string,
  ): Promise<void> {
    const entry = this.#entry(taskId, sessionId);
    if (!entry) throw new McpError(ErrorCode.InvalidParams, `Task ${taskId} not found`);
    const before = entry.task.status;
    if (!isTerminalStatus(before) && status === "cancelled" && entry.onCancel) {
      // tasks/cancel answers once the job and its process tree are gone.
      await entry.onCancel();
      if (entry.task.status === "cancelled") return;
    }
    if (isTerminalStatus(entry.task.status)) {
      throw new McpError(
        ErrorCode.InvalidParams,
        `Cannot ${status === "cancelled" ? "cancel" : "update"} task ${taskId}: ` +
          `already in terminal status '${entry.task.status}'`,
      );
    }
    this.#set(entry, status, statusMessage);
  }

  listTasks(cursor?: string, sessionId?: string): Promise<{ tasks: Task[]; nextCursor?: string }> {
    const PAGE = 50;
    const ids = [...this.#tasks.keys()].filter((id) => this.#entry(id, sessionId));
    const start = cursor === undefined ? 0 : ids.indexOf(cursor) + 1;
    if (start === 0 && cursor !== undefined) {
      return Promise.reject(new Error(`Invalid cursor: ${cursor}`));
    }
    const page = ids.slice(start, start + PAGE);
    const tasks = page.map((id) => ({ ...this.#tasks.get(id)!.task }));
    return Promise.resolve(
      start + PAGE < ids.length ? { tasks, nextCursor: page.at(-1)! } : { tasks },
    );
  }

  /** Whether the task was asked for by the client (else the SDK polls it on the server). */
  isAugmented(taskId: string): boolean {
    return this.#tasks.get(taskId)?.augmented ?? false;
  }

  /** What a `cancelled` transition must do before it is recorded. */
  onCancel(taskId: string, fn: () => Promise<void>): void {
    const entry = this.#tasks.get(taskId);
    if (entry) entry.onCancel = fn;
  }

  /** A new status message for a working task. */
  note(taskId: string, message: string): void {
    const entry = this.#tasks.get(taskId);
    if (entry && entry.task.status === "working") this.#set(entry, "working", message);
  }

  /** Records the end and result once; returns the task when this call ended it. */
  settle(taskId: string, status: TaskStatus, result: Result, message?: string): Task | undefined {
    const entry = this.#tasks.get(taskId);
    if (!entry || isTerminalStatus(entry.task.status)) return undefined;
    entry.result = result;
    delete entry.onCancel;
    this.#set(entry, status, message);
    // The SDK reads a blocking call's result at once; only a client's own tasks are kept long.
    const keep = Math.min(entry.task.ttl ?? DEFAULT_TTL_MS, entry.augmented ? MAX_TTL_MS : 60_000);
    const timer = setTimeout(() => this.#tasks.delete(taskId), keep);
    (timer as { unref?: () => void }).unref?.();
    return { ...entry.task };
  }

  #set(entry: Entry, status: TaskStatus, message?: string): void {
    entry.task.status = status;
    if (message !== undefined) entry.task.statusMessage = message;
    entry.task.lastUpdatedAt = new Date().toISOString();
  }
}

function taskStatusOf(state: JobState): TaskStatus {
  if (state === "completed") return "completed";
  if (state === "cancelled") return "cancelled";
  return isTerminal(state) ? "failed" : "working";
}

/** One line for `statusMessage` and progress: the job id first, so a client can use the other tools. */
function describe(view: JobView, elapsedMs?: number): string {
  const r = view.record;
  const last = view.activities.at(-1);
  const doing = last ? `: ${activityLines([last], 1)[0]!.trim()}` : "";
  const where = r.state === "queued" && view.queuePosition > 0
    ? ` (queue position ${view.queuePosition})`
    : "";
  const time = elapsedMs === undefined ? "" : `, ${Math.round(elapsedMs / 1000)}s`;
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
  "Run a delegated task to completion: the inputs of delegate_start without wait_seconds. " +
  "MCP clients with tasks get a task to poll or cancel; others block, with progress every 5 s. " +
  "Replies like delegate_result, with the job_id for follow-ups.";

/** Registers `delegate_run` (taskSupport "optional"); needs `deps.taskStore` on the server. */
export function registerRunTool(server: McpServer, deps: RunToolDeps): RegisteredTool {
  const store = deps.taskStore;

  /** Records the job's end in its task; the first caller wins. */
  const finish = async (taskId: string, view: JobView) => {
    const status = taskStatusOf(view.record.state);
    const task = store.settle(taskId, status, await deps.reply(view), describe(view));
    if (task && store.isAugmented(taskId)) {
      server.server.notification({ method: "notifications/tasks/status", params: task })
        .catch(() => {});
    }
  };

  /** Waits until the job ends or `signal` aborts, refreshing the task and sending progress. */
  const follow = async (
    taskId: string,
    first: JobView,
    extra: {
      _meta?: { progressToken?: string | number };
      sendNotification: (n: {
        method: "notifications/progress";
        params: { progressToken: string | number; progress: number; message?: string };
      }) => Promise<void>;
    },
    signal?: AbortSignal,
  ) => {
    const token = extra._meta?.progressToken;
    const t0 = Date.now();
    const tick = (v: JobView) => {
      const elapsed = Date.now() - t0;
      store.note(taskId, describe(v));
      if (token === undefined) return;
      // Progress must increase; seconds since the call keep it so across wait() rounds.
      extra.sendNotification({
        method: "notifications/progress",
        params: { progressToken: token, progress: elapsed / 1000, message: describe(v, elapsed) },
      }).catch(() => {});
    };
    let view = first;
    while (!isTerminal(view.record.state) && !signal?.aborted) {
      view = await deps.wait(view.record.id, 600, {
        tickMs: TICK_MS,
        tick,
        ...(signal ? { signal } : {}),
      });
    }
    return view;
  };

  const handler: ToolTaskHandler<typeof shapeRun> = {
    createTask: async (args, extra) => {
      const created = await extra.taskStore.createTask({
        ttl: extra.taskRequestedTtl ?? null,
        pollInterval: POLL_MS,
      });
      const taskId = created.taskId;
      let view: JobView;
      try {
        view = await deps.start(args);
      } catch (e) {
        store.settle(taskId, "failed", errorResult(e));
        return { task: await extra.taskStore.getTask(taskId) };
      }
      const jobId = view.record.id;
      store.note(taskId, describe(view));
      store.onCancel(taskId, async () => {
        await finish(taskId, (await deps.cancel(jobId)).view);
      });
      if (store.isAugmented(taskId)) {
        follow(taskId, view, extra).then((end) => finish(taskId, end)).catch((e) =>
          store.settle(taskId, "failed", errorResult(e))
        );
        return { task: await extra.taskStore.getTask(taskId) };
      }
      // No `task` in the request: block until the job ends. The SDK then returns the
      // stored result at once, since the task is already terminal. The manager's job
      // timeout bounds the wait; a cancelled request cancels the job.
      try {
        let end = await follow(taskId, view, extra, extra.signal);
        if (!isTerminal(end.record.state)) end = (await deps.cancel(jobId)).view;
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
