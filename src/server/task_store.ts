/**
 * The tasks behind `delegate_run`, for both MCP task protocols: 2025-11-25 tasks (the SDK's
 * TaskStore, experimental SEP-1686) and the 2026-07-28 tasks extension
 * (`io.modelcontextprotocol/tasks`, SEP-2663) that server/transport/revision_2026.ts serves. The job is the
 * source of truth; a task mirrors its state.
 */
import type { CreateTaskOptions, TaskStore } from "@modelcontextprotocol/sdk/experimental/tasks";
import {
  type CallToolResult,
  ErrorCode,
  McpError,
  type Request,
  type RequestId,
  type Result,
  type Task,
} from "@modelcontextprotocol/sdk/types.js";

/** The server capability to declare next to the task store (spec: tasks capabilities). */
export const TASKS_CAPABILITY = { list: {}, cancel: {}, requests: { tools: { call: {} } } };

/** How often a client is asked to poll, and the SDK's own auto-poll. */
export const POLL_MS = 1000;
/** Finished tasks are kept this long unless the client asks for less (spec: ttl may be overridden). */
const DEFAULT_TTL_MS = 60 * 60 * 1000;
const MAX_TTL_MS = 24 * 60 * 60 * 1000;
/** Results of the SDK's own polling of a blocking call are read at once. */
const BLOCKING_KEEP_MS = 60_000;

type TaskStatus = Task["status"];
export const isTerminalStatus = (s: TaskStatus) =>
  s === "completed" || s === "failed" || s === "cancelled";

/**
 * Who wants the task: the SDK polling a blocking call for its caller, a 2025-11-25 client that
 * sent `task`, or a 2026-07-28 client of the tasks extension. It decides how long a finished
 * task is kept and whether its end is announced with `notifications/tasks/status`.
 */
type Origin = "call" | "tasks-2025" | "tasks-2026";

interface Entry {
  task: Task;
  sessionId: string | undefined;
  origin: Origin;
  result?: Result;
  onCancel?: () => Promise<void>;
  /**
   * Called once, when the client collects the result: the job's result is read. Awaited before
   * the result is given, so whoever asks next already sees it read.
   */
  onRead?: () => Promise<void>;
  /** A 2026 client asked to stop it while it ran (tasks/cancel). */
  stoppedByClient?: boolean;
}

/**
 * Starts the job of a 2026 task from the call's raw arguments and follows it to its end;
 * returns the error result instead when the job could not start (bad arguments, refused model).
 */
export type DetachedRunner = (taskId: string, args: unknown) => Promise<CallToolResult | undefined>;

/** A 2026 task as `tasks/get` shows it. */
export interface DetachedView {
  task: Task;
  /** The job's reply, once it ended. */
  result?: Result;
  /** Ended by the client's tasks/cancel (not by a terminal, delegate_cancel or a timeout). */
  stoppedByClient: boolean;
}

/**
 * An in-memory TaskStore whose `cancelled` transition stops the job first, and which keeps a
 * result for cancelled tasks too, so `tasks/result` always answers with the job's text.
 */
export class JobTaskStore implements TaskStore {
  readonly #tasks = new Map<string, Entry>();
  #runner: DetachedRunner | undefined;

  #entry(taskId: string, sessionId?: string): Entry | undefined {
    const entry = this.#tasks.get(taskId);
    if (entry && sessionId !== undefined && entry.sessionId !== undefined) {
      return entry.sessionId === sessionId ? entry : undefined;
    }
    return entry;
  }

  #add(ttl: number, pollInterval: number, origin: Origin, sessionId?: string): Task {
    const now = new Date().toISOString();
    const task: Task = {
      // Web Crypto's, global on Deno and Node 20: node:crypto would load before `initialize`.
      taskId: crypto.randomUUID(),
      status: "working",
      ttl: Math.min(ttl, MAX_TTL_MS),
      createdAt: now,
      lastUpdatedAt: now,
      pollInterval,
    };
    this.#tasks.set(task.taskId, { task, sessionId, origin });
    return { ...task };
  }

  createTask(
    params: CreateTaskOptions,
    _requestId: RequestId,
    request: Request,
    sessionId?: string,
  ): Promise<Task> {
    const augmented = request.params !== undefined && "task" in request.params &&
      request.params.task !== undefined;
    return Promise.resolve(this.#add(
      params.ttl ?? DEFAULT_TTL_MS,
      params.pollInterval ?? POLL_MS,
      augmented ? "tasks-2025" : "call",
      sessionId,
    ));
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

  async getTaskResult(taskId: string, sessionId?: string): Promise<Result> {
    const entry = this.#entry(taskId, sessionId);
    const result = entry?.result;
    if (!result) throw new Error(`Task ${taskId} has no result yet`);
    await this.#read(entry);
    return result;
  }

  /** The result reached the client: once. A mark that cannot be removed never fails the answer. */
  async #read(entry: Entry): Promise<void> {
    const onRead = entry.onRead;
    delete entry.onRead;
    await onRead?.().catch(() => {});
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
    // The 2026 extension has no tasks/list; its tasks are not a 2025 client's business.
    const ids = [...this.#tasks.keys()].filter((id) =>
      this.#entry(id, sessionId) && this.#tasks.get(id)!.origin !== "tasks-2026"
    );
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

  /** Whether the client polls the task (else the SDK polls it for a blocking call). */
  isAugmented(taskId: string): boolean {
    const origin = this.#tasks.get(taskId)?.origin;
    return origin !== undefined && origin !== "call";
  }

  /** Whether the task's end is announced with 2025's `notifications/tasks/status`. */
  announcesStatus(taskId: string): boolean {
    return this.#tasks.get(taskId)?.origin === "tasks-2025";
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

  /**
   * Records the end and result once; returns the task when this call ended it. `onRead` runs
   * when the client collects the result (tasks/result, a 2026 tasks/get that carries it).
   */
  settle(
    taskId: string,
    status: TaskStatus,
    result: Result,
    message?: string,
    onRead?: () => Promise<void>,
  ): Task | undefined {
    const entry = this.#tasks.get(taskId);
    if (!entry || isTerminalStatus(entry.task.status)) return undefined;
    entry.result = result;
    if (onRead) entry.onRead = onRead;
    delete entry.onCancel;
    this.#set(entry, status, message);
    const ttl = entry.task.ttl ?? DEFAULT_TTL_MS;
    let keep = entry.origin === "call" ? Math.min(ttl, BLOCKING_KEEP_MS) : ttl;
    if (entry.origin === "tasks-2026") {
      // Its client polls every second and reads the result at once; an hour is ample, and
      // the ttl it sees (from creation, which the extension lets change) says so.
      keep = DEFAULT_TTL_MS;
      entry.task.ttl = Date.now() + keep - Date.parse(entry.task.createdAt);
    }
    const timer = setTimeout(() => this.#tasks.delete(taskId), keep);
    (timer as { unref?: () => void }).unref?.();
    return { ...entry.task };
  }

  /** Installed by delegate_run's registration: how a 2026 task starts its job. */
  serveDetached(runner: DetachedRunner): void {
    this.#runner = runner;
  }

  /** Whether delegate_run can run as a 2026 task here (it is not offered in mode "off"). */
  get runsDetached(): boolean {
    return this.#runner !== undefined;
  }

  /**
   * delegate_run for a client of the 2026-07-28 tasks extension: a task whose job runs on
   * while the client polls, or the error result when the job could not start.
   */
  async startDetached(args: unknown): Promise<{ task: Task } | { result: CallToolResult }> {
    const runner = this.#runner;
    if (!runner) throw new TypeError("Cannot start a detached task: delegate_run is not served");
    // The client cannot ask for a ttl in this revision; a day covers a job at the default
    // limits with room to collect its result.
    const { taskId } = this.#add(MAX_TTL_MS, POLL_MS, "tasks-2026");
    const refused = await runner(taskId, args);
    if (refused) {
      // No job exists: the error is the answer to the call itself.
      this.#tasks.delete(taskId);
      return { result: refused };
    }
    return { task: { ...this.#tasks.get(taskId)!.task } };
  }

  /**
   * A task of startDetached as tasks/get shows it; undefined for unknown ids. `reading`: the
   * answer carries its result to the client (tasks/get does, in this revision).
   */
  async detached(taskId: string, reading = false): Promise<DetachedView | undefined> {
    const entry = this.#tasks.get(taskId);
    if (!entry || entry.origin !== "tasks-2026") return undefined;
    if (reading && entry.result) await this.#read(entry);
    return {
      task: { ...entry.task },
      ...(entry.result ? { result: entry.result } : {}),
      stoppedByClient: entry.stoppedByClient === true,
    };
  }

  /**
   * The client's tasks/cancel: stops the job and resolves once it is stopped. False for an
   * unknown task; a task that already ended stays as it ended (cancelling is cooperative).
   */
  async cancelDetached(taskId: string): Promise<boolean> {
    const entry = this.#tasks.get(taskId);
    if (!entry || entry.origin !== "tasks-2026") return false;
    if (isTerminalStatus(entry.task.status)) return true;
    entry.stoppedByClient = true;
    try {
      await this.updateTaskStatus(taskId, "cancelled", "Cancelled by the client (tasks/cancel)");
    } catch (e) {
      // It ended on its own meanwhile: that end stands.
      if (!isTerminalStatus(entry.task.status)) throw e;
    }
    return true;
  }

  #set(entry: Entry, status: TaskStatus, message?: string): void {
    entry.task.status = status;
    if (message !== undefined) entry.task.statusMessage = message;
    entry.task.lastUpdatedAt = new Date().toISOString();
  }
}
