/**
 * delegate_run over the real stdio server: a task-capable client gets an MCP task
 * (2025-11-25 tasks) it can poll, collect and cancel; a plain call, as Claude Code makes it,
 * blocks until the job ends and reports progress.
 */
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  McpError,
  type Task,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import { alive, field, type SceneServer, tempDir, until } from "../support/harness.ts";
import { startInProcessScene } from "../support/in_process_scene.ts";

const MODEL = "qwen3:8b";

function textOf(result: { content: Array<{ type: string; text?: string }> }): string {
  const first = result.content[0];
  return first?.type === "text" ? first.text ?? "" : "";
}

function jobRecord(server: SceneServer, id: string): Record<string, unknown> {
  return JSON.parse(readFileSync(join(server.stateDir, id, "job.json"), "utf8"));
}

/** The one job the server has recorded so far. */
function onlyJobId(server: SceneServer): string | undefined {
  if (!existsSync(server.stateDir)) return undefined;
  const ids = readdirSync(server.stateDir).filter((d) =>
    existsSync(join(server.stateDir, d, "job.json"))
  );
  return ids.length === 1 ? ids[0] : undefined;
}

const jobIdOf = (task: Task) => /\bjob (\S+)/.exec(task.statusMessage ?? "")?.[1];

Deno.test("delegate_run is listed with optional task support", async () => {
  await using scene = await startInProcessScene({ emulator: false });
  const caps = scene.client.getServerCapabilities();
  assert.ok(caps?.tasks?.requests?.tools?.call, "the server advertises task-augmented calls");
  assert.ok(caps?.tasks?.cancel, "the server advertises tasks/cancel");
  const { tools } = await scene.client.listTools();
  const run = tools.find((t: Tool) => t.name === "delegate_run");
  assert.ok(run, "delegate_run is listed");
  assert.equal(run.execution?.taskSupport, "optional");
  assert.ok((run.description ?? "").length <= 300, "short description");
  assert.equal("wait_seconds" in (run.inputSchema.properties ?? {}), false);
  const start = tools.find((t: Tool) => t.name === "delegate_start");
  assert.equal(start?.execution?.taskSupport ?? "forbidden", "forbidden");
});

Deno.test("a task-capable client gets a task, polls it to completed and reads the result", async () => {
  await using scene = await startInProcessScene();
  const work = tempDir("od-work-");
  const created = await scene.client.request(
    {
      method: "tools/call",
      params: {
        name: "delegate_run",
        arguments: { prompt: "@reply done-by-task", model: MODEL, cwd: work },
        task: { ttl: 600_000 },
      },
    },
    CreateTaskResultSchema,
  );
  const taskId = created.task.taskId;
  assert.equal(created.task.status, "working");
  const jobId = jobIdOf(created.task);
  assert.ok(jobId, `the status names the job: ${created.task.statusMessage}`);
  assert.ok(existsSync(join(scene.stateDir, jobId, "job.json")));

  const done = await until(
    async () => {
      const task = await scene.client.experimental.tasks.getTask(taskId);
      return task.status === "working" ? undefined : task;
    },
    120_000,
    "the task to finish",
  );
  assert.equal(done.status, "completed", done.statusMessage);
  // Ended, its result not collected yet: unread (issue 31, item 2).
  const unreadLine = (text: string) => text.split("\n").find((l) => l.includes(jobId));
  assert.match(unreadLine((await scene.call("delegate_list", {})).text) ?? "", /\[unread\]/);

  const result = await scene.client.experimental.tasks.getTaskResult(
    taskId,
    CallToolResultSchema,
  );
  assert.equal(result.isError ?? false, false);
  const text = textOf(result);
  assert.equal(field(text, "job_id"), jobId);
  assert.equal(field(text, "state"), "completed");
  assert.match(text, /--- output ---\ndone-by-task\n/);
  // tasks/result carried it to the client: no longer unread.
  assert.doesNotMatch(unreadLine((await scene.call("delegate_list", {})).text)!, /\[unread\]/);
  const same = await scene.call("delegate_result", { job_id: jobId });
  assert.equal(same.text, text, "tasks/result gives what delegate_result gives");
  assert.equal(jobRecord(scene.server, jobId).state, "completed");

  const { tasks } = await scene.client.experimental.tasks.listTasks();
  assert.ok(tasks.some((t: Task) => t.taskId === taskId && t.status === "completed"));
});

Deno.test("callToolStream runs delegate_run as a task to its result", async () => {
  await using scene = await startInProcessScene();
  const work = tempDir("od-work-");
  const kinds: string[] = [];
  let final = "";
  for await (
    const message of scene.client.experimental.tasks.callToolStream(
      {
        name: "delegate_run",
        arguments: { prompt: "@reply streamed", model: MODEL, cwd: work },
      },
      CallToolResultSchema,
      { task: {}, timeout: 120_000 },
    )
  ) {
    kinds.push(message.type);
    if (message.type === "result") final = textOf(message.result as { content: [] });
    if (message.type === "error") throw message.error;
  }
  assert.equal(kinds[0], "taskCreated");
  assert.equal(kinds.at(-1), "result");
  assert.match(final, /--- output ---\nstreamed\n/);
});

Deno.test("tasks/cancel cancels the job and stops its delegate", async () => {
  await using scene = await startInProcessScene();
  const work = tempDir("od-work-");
  const created = await scene.client.request(
    {
      method: "tools/call",
      params: {
        name: "delegate_run",
        arguments: { prompt: "@hang", model: MODEL, cwd: work },
        task: {},
      },
    },
    CreateTaskResultSchema,
  );
  const taskId = created.task.taskId;
  const jobId = jobIdOf(created.task)!;
  // The delegate is live once it has asked the model and its pid is recorded.
  const childPid = await until(
    () => {
      const child = jobRecord(scene.server, jobId).child as { pid?: number } | undefined;
      return scene.emulator.messageRequests().length > 0 && child?.pid ? child.pid : undefined;
    },
    60_000,
    "the delegate to call the model",
  );
  assert.ok(alive(childPid));

  const cancelled = await scene.client.experimental.tasks.cancelTask(taskId);
  assert.equal(cancelled.status, "cancelled");
  // The reply comes once the job's end is recorded and its process is gone.
  const record = jobRecord(scene.server, jobId);
  assert.equal(record.state, "cancelled");
  assert.equal(alive(childPid), false, `delegate pid ${childPid} survived`);

  const task = await scene.client.experimental.tasks.getTask(taskId);
  assert.equal(task.status, "cancelled");
  const result = await scene.client.experimental.tasks.getTaskResult(
    taskId,
    CallToolResultSchema,
  );
  assert.equal(result.isError, true);
  assert.equal(field(textOf(result), "state"), "cancelled");
  assert.match(textOf(result), /--- partial output ---/);

  await assert.rejects(
    scene.client.experimental.tasks.cancelTask(taskId),
    (e: Error) => e instanceof McpError && (e as McpError).code === -32602,
    "a finished task cannot be cancelled again",
  );
});

Deno.test("a plain call blocks until the job ends and reports progress", async () => {
  // Progress every 300 ms instead of every 5 s: several arrive within a 2 s job.
  await using scene = await startInProcessScene({ progressMs: 300 });
  const work = tempDir("od-work-");
  const progress: Array<{ progress: number; message?: string }> = [];
  const reply = await scene.call(
    "delegate_run",
    { prompt: "@delay 2000\n@reply slow-but-done", model: MODEL, cwd: work },
    { onprogress: (p) => progress.push(p), timeoutMs: 120_000 },
  );
  assert.equal(reply.isError, false, reply.text);
  assert.equal(field(reply.text, "state"), "completed");
  assert.match(reply.text, /--- output ---\nslow-but-done\n/);
  const jobId = field(reply.text, "job_id")!;
  assert.ok(progress.length >= 2, `progress notifications arrived: ${JSON.stringify(progress)}`);
  for (let i = 1; i < progress.length; i++) {
    assert.ok(progress[i]!.progress > progress[i - 1]!.progress, "progress increases");
  }
  assert.match(progress[0]!.message ?? "", new RegExp(`^job ${jobId} running`));
});

Deno.test("a job that cannot start gives the error text, with or without a task", async () => {
  await using scene = await startInProcessScene({ emulator: false });
  const reply = await scene.call("delegate_run", { prompt: "  " });
  assert.equal(reply.isError, true);
  assert.match(reply.text, /^Cannot use an empty prompt/);
  const created = await scene.client.request(
    {
      method: "tools/call",
      params: { name: "delegate_run", arguments: { prompt: "  " }, task: {} },
    },
    CreateTaskResultSchema,
  );
  assert.equal(created.task.status, "failed");
  const result = await scene.client.experimental.tasks.getTaskResult(
    created.task.taskId,
    CallToolResultSchema,
  );
  assert.equal(result.isError, true);
  assert.match(textOf(result), /^Cannot use an empty prompt/);
});

Deno.test("cancelling a plain call cancels its job", async () => {
  await using scene = await startInProcessScene();
  const work = tempDir("od-work-");
  const abort = new AbortController();
  const call = scene.client.callTool(
    { name: "delegate_run", arguments: { prompt: "@hang", model: MODEL, cwd: work } },
    undefined,
    { signal: abort.signal, timeout: 120_000 },
  );
  const rejected = assert.rejects(call);
  const jobId = await until(
    () => (scene.emulator.messageRequests().length > 0 ? onlyJobId(scene.server) : undefined),
    60_000,
    "the delegate to call the model",
  );
  abort.abort("test gives up");
  await rejected;
  const state = await until(
    () => {
      const s = jobRecord(scene.server, jobId).state as string;
      return s === "running" || s === "queued" ? undefined : s;
    },
    15_000,
    "the job to end",
  );
  assert.equal(state, "cancelled");
});

Deno.test("a job whose end nobody collected stays [unread] in delegate_list until a reply carries it", async () => {
  await using scene = await startInProcessScene();
  const work = tempDir("od-work-");
  const list = async () => (await scene.call("delegate_list", {})).text;
  const line = (text: string, id: string) => text.split("\n").find((l) => l.includes(id)) ?? "";
  // Started and left: it ends while nobody looks.
  const started = await scene.call("delegate_start", {
    prompt: "@reply left alone",
    model: MODEL,
    cwd: work,
  });
  const left = field(started.text, "job_id")!;
  await until(
    async () => (await scene.call("delegate_status", { job_id: left })).text.includes("Finished"),
    120_000,
    "the job to end",
  );
  assert.match(line(await list(), left), /\[unread\]/);
  assert.match(await list(), /\[unread\]: 1 job ended without its result reaching you/);
  // A status that says it ended is not its result.
  assert.match(line(await list(), left), /\[unread\]/);
  const read = await scene.call("delegate_result", { job_id: left });
  assert.equal(field(read.text, "state"), "completed");
  assert.doesNotMatch(line(await list(), left), /\[unread\]/);
  // Waited for, its reply carried the end: never unread.
  const waited = await scene.call("delegate_start", {
    prompt: "@reply waited for",
    model: MODEL,
    cwd: work,
    wait_seconds: 120,
  }, { timeoutMs: 180_000 });
  assert.equal(field(waited.text, "state"), "completed", waited.text);
  assert.doesNotMatch(line(await list(), field(waited.text, "job_id")!), /\[unread\]/);
  assert.equal(
    readdirSync(join(scene.stateDir, ".unread")).flatMap((key) =>
      readdirSync(join(scene.stateDir, ".unread", key))
    ).length,
    0,
    "no marker is left",
  );
});
