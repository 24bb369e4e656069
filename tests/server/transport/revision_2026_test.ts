/**
 * MCP 2026-07-28 on the real server, in raw JSON-RPC lines over its stdio: what Claude Code
 * sends (server/discover, per-request `_meta`, the tasks extension, subscriptions/listen) and
 * what the revision requires back. The 2025-11-25 handshake on the same server stays as it was.
 * Jobs run on the native engine against the Ollama emulator; a job that must still be running
 * waits in real bubblewrap for a file the test creates.
 */
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { startOllamaEmulator } from "../../support/emulator/emulator.ts";
import { realDenoDir, serverCommand, tempDir, until } from "../../support/harness.ts";
import { VERSION as VERSION_OF_SERVER } from "../../../src/version.ts";

const VERSION = "2026-07-28";
const TASKS = "io.modelcontextprotocol/tasks";
const MODEL = "qwen3:8b";
type Json = Record<string, unknown>;

/** The `_meta` every 2026 request carries; `tasks` declares the tasks extension. */
function meta(tasks = true, extra: Json = {}): Json {
  return {
    "io.modelcontextprotocol/protocolVersion": VERSION,
    "io.modelcontextprotocol/clientInfo": { name: "raw-test", version: "1" },
    "io.modelcontextprotocol/clientCapabilities": tasks ? { extensions: { [TASKS]: {} } } : {},
    ...extra,
  };
}

/** A job prompt whose delegate waits in its sandbox until `release` exists in its cwd. */
const GATED = "@bash i=0; while [ ! -e release ]; do i=$((i+1)); [ $i -gt 1500 ] && exit 1; " +
  "sleep 0.2; done; echo released\n@reply gated-done\nwait for the release file";

interface Raw {
  stateDir: string;
  /** Sends a request and resolves with its whole response message. */
  request(method: string, params?: Json, id?: string | number): Promise<Json>;
  notify(method: string, params?: Json): void;
  /** Every message the server sent that was not a response, in order. */
  notifications(): Json[];
  jobs(): string[];
  jobState(id: string): string;
  stderr(): string;
  close(): Promise<void>;
}

function startRaw(baseUrl: string, env: Record<string, string> = {}): Raw {
  const home = tempDir("od-raw-");
  const stateDir = join(home, "state");
  const cwd = join(home, "project");
  mkdirSync(cwd);
  const { command, args } = serverCommand();
  const child = new Deno.Command(command, {
    args,
    cwd,
    clearEnv: true,
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: home,
      DENO_DIR: realDenoDir(),
      NO_COLOR: "1",
      OLLAMA_MCP_STATE_DIR: stateDir,
      OLLAMA_MCP_BASE_URL: baseUrl,
      ...env,
    },
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  const waiting = new Map<string | number, (m: Json) => void>();
  const others: Json[] = [];
  let stderr = "";
  const reading = (async () => {
    let pending = "";
    for await (const chunk of child.stdout.pipeThrough(new TextDecoderStream())) {
      pending += chunk;
      let nl;
      while ((nl = pending.indexOf("\n")) >= 0) {
        const message = JSON.parse(pending.slice(0, nl)) as Json;
        pending = pending.slice(nl + 1);
        const id = message.id as string | number | undefined;
        if (!("method" in message) && id !== undefined && waiting.has(id)) {
          waiting.get(id)!(message);
          waiting.delete(id);
        } else others.push(message);
      }
    }
  })();
  const errors = (async () => {
    for await (const chunk of child.stderr.pipeThrough(new TextDecoderStream())) stderr += chunk;
  })();
  const send = (message: Json) =>
    writer.write(new TextEncoder().encode(JSON.stringify({ jsonrpc: "2.0", ...message }) + "\n"));
  let next = 1;
  const jobs = () =>
    existsSync(stateDir)
      ? readdirSync(stateDir).filter((d) => existsSync(join(stateDir, d, "job.json")))
      : [];
  return {
    stateDir,
    async request(method, params = {}, id = next++) {
      const answered = new Promise<Json>((resolve) => waiting.set(id, resolve));
      await send({ id, method, params });
      return await answered;
    },
    notify(method, params = {}) {
      void send({ method, params });
    },
    notifications: () => others,
    jobs,
    jobState: (id) => JSON.parse(readFileSync(join(stateDir, id, "job.json"), "utf8")).state,
    stderr: () => stderr,
    async close() {
      await writer.close().catch(() => {});
      const timer = setTimeout(() => child.kill("SIGKILL"), 15_000);
      await child.status;
      clearTimeout(timer);
      await reading.catch(() => {});
      await errors.catch(() => {});
    },
  };
}

const resultOf = (m: Json) => {
  assert.ok("result" in m, `a result, not ${JSON.stringify(m)}`);
  return m.result as Json;
};
const errorOf = (m: Json) => {
  assert.ok("error" in m, `an error, not ${JSON.stringify(m)}`);
  return m.error as { code: number; message: string; data?: Json };
};
const textOf = (result: Json) =>
  ((result.content as Array<{ text?: string }> | undefined)?.[0]?.text) ?? "";

async function withServer(
  fn: (raw: Raw, work: string) => Promise<void>,
  env: Record<string, string> = {},
) {
  const emu = await startOllamaEmulator();
  const raw = startRaw(emu.url, env);
  try {
    await fn(raw, tempDir("od-raw-work-"));
  } finally {
    await raw.close();
    await emu.close();
  }
}

Deno.test("2026-07-28: server/discover, then requests with their protocol fields, get the revision's result shapes", async () => {
  await withServer(async (raw) => {
    const discover = resultOf(await raw.request("server/discover", { _meta: meta() }));
    assert.equal(discover.resultType, "complete");
    assert.deepEqual(discover.supportedVersions, [VERSION]);
    assert.equal(discover.ttlMs, 0);
    assert.equal(discover.cacheScope, "private");
    assert.deepEqual(discover.capabilities, {
      tools: { listChanged: true },
      extensions: { [TASKS]: {} },
    });
    assert.deepEqual((discover._meta as Json)["io.modelcontextprotocol/serverInfo"], {
      name: "ollama-delegate",
      version: VERSION_OF_SERVER,
    });

    const list = resultOf(await raw.request("tools/list", { _meta: meta() }));
    assert.equal(list.resultType, "complete");
    assert.equal(list.ttlMs, 0, "tool descriptions change (default model): never cached");
    assert.equal(list.cacheScope, "private");
    const names = (list.tools as Array<{ name: string }>).map((t) => t.name);
    assert.ok(names.includes("delegate_run"), names.join(", "));

    const status = resultOf(
      await raw.request("tools/call", { name: "ollama_models", arguments: {}, _meta: meta() }),
    );
    assert.equal(status.resultType, "complete");
    assert.equal("ttlMs" in status, false, "only cacheable results carry cache hints");
    assert.match(textOf(status), /delegation mode/i);

    const noCaps = errorOf(
      await raw.request("tools/list", {
        _meta: { "io.modelcontextprotocol/protocolVersion": VERSION },
      }),
    );
    assert.equal(noCaps.code, -32602);
    assert.match(noCaps.message, /io\.modelcontextprotocol\/clientCapabilities" is required/);

    const future = errorOf(
      await raw.request("tools/list", {
        _meta: { ...meta(), "io.modelcontextprotocol/protocolVersion": "2099-01-01" },
      }),
    );
    assert.equal(future.code, -32022);
    assert.equal(future.data?.requested, "2099-01-01");
    assert.deepEqual((future.data?.supported as string[]).slice(0, 2), [VERSION, "2025-11-25"]);

    const old = errorOf(await raw.request("tasks/result", { taskId: "x", _meta: meta() }));
    assert.equal(old.code, -32601, "2025's blocking tasks/result is not part of 2026");
    assert.match(raw.stderr(), /client raw-test 1 speaks MCP 2026-07-28/);
  });
});

Deno.test("2026-07-28: with delegation off there is no delegate_run; discover declares what initialize does", async () => {
  await withServer(async (raw) => {
    // Answered before the settings are read (early_discover.ts), as initialize's `tasks` is.
    const discover = resultOf(await raw.request("server/discover", { _meta: meta() }));
    assert.deepEqual(discover.capabilities, {
      tools: { listChanged: true },
      extensions: { [TASKS]: {} },
    });
    const call = resultOf(
      await raw.request("tools/call", {
        name: "delegate_run",
        arguments: { prompt: "hi" },
        _meta: meta(),
      }),
    );
    assert.equal(call.resultType, "complete");
    assert.equal(call.isError, true);
    assert.match(textOf(call), /Tool delegate_run not found/);
  }, { OLLAMA_MCP_DELEGATION_MODE: "off" });
});

Deno.test("2026-07-28: tasks/* need the tasks extension declared on the request, and a known task", async () => {
  await withServer(async (raw) => {
    for (const method of ["tasks/get", "tasks/cancel", "tasks/update"]) {
      const missing = errorOf(
        await raw.request(method, { taskId: "t", inputResponses: {}, _meta: meta(false) }),
      );
      assert.equal(missing.code, -32021, method);
      assert.deepEqual(missing.data, { requiredCapabilities: { extensions: { [TASKS]: {} } } });
      const unknown = errorOf(
        await raw.request(method, { taskId: "t", inputResponses: {}, _meta: meta() }),
      );
      assert.equal(unknown.code, -32602, method);
      assert.match(unknown.message, /Task not found/);
    }
    assert.match(raw.stderr(), /Refused a 2026-07-28 tasks\/get request \(id \d+\): Missing/);
  });
});

Deno.test("2026-07-28: delegate_run with the tasks extension answers with a task at once; tasks/get brings the result", async () => {
  await withServer(async (raw, work) => {
    const created = resultOf(
      await raw.request("tools/call", {
        name: "delegate_run",
        arguments: { prompt: GATED, engine: "native", model: MODEL, cwd: work },
        _meta: meta(true, { progressToken: 7 }),
      }),
    );
    assert.equal(created.resultType, "task");
    assert.equal(created.status, "working");
    for (const key of ["taskId", "createdAt", "lastUpdatedAt"]) {
      assert.equal(typeof created[key], "string", key);
    }
    // Longer than a job may run at the default limit (30 min), so no client gives up on it.
    assert.ok(Number(created.ttlMs) > 2 * 1_800_000, `ttlMs ${created.ttlMs}`);
    assert.equal(created.pollIntervalMs, 1000);
    assert.equal("content" in created, false, "the flat task shape, not a tool result");
    assert.equal("task" in created, false, "not 2025's CreateTaskResult");
    const [jobId] = raw.jobs();
    assert.ok(jobId, "the job exists once the task is returned");
    assert.match(String(created.statusMessage), new RegExp(`job ${jobId}`));

    const get = () => raw.request("tasks/get", { taskId: created.taskId, _meta: meta() });
    const working = resultOf(await get());
    assert.equal(working.resultType, "complete");
    assert.equal(working.status, "working");
    assert.equal("result" in working, false);
    assert.match(raw.jobState(jobId), /^(queued|running)$/, "the job has not ended");
    const update = resultOf(
      await raw.request("tasks/update", {
        taskId: created.taskId,
        inputResponses: { never_asked: { action: "accept" } },
        _meta: meta(),
      }),
    );
    assert.deepEqual(Object.keys(update).sort(), ["_meta", "resultType"]);

    writeFileSync(join(work, "release"), "");
    const done = await until(
      async () => {
        const r = resultOf(await get());
        return r.status === "working" ? undefined : r;
      },
      60_000,
      "the task to end",
    );
    assert.equal(done.status, "completed");
    // Kept an hour after it ended; ttlMs counts from creation.
    const kept = Date.parse(String(done.lastUpdatedAt)) + 3_600_000 -
      Date.parse(String(done.createdAt));
    assert.ok(Math.abs(Number(done.ttlMs) - kept) < 1000, `ttlMs ${done.ttlMs}, kept ${kept}`);
    const result = done.result as Json;
    assert.equal(result.isError, undefined);
    assert.match(textOf(result), /--- output ---\ngated-done/);
    assert.match(textOf(result), new RegExp(`job_id:\\s+${jobId}`));
    assert.equal(raw.jobState(jobId), "completed");
    const methods = raw.notifications().map((n) => n.method);
    assert.ok(!methods.includes("notifications/tasks/status"), methods.join(", "));
    assert.ok(!methods.includes("notifications/progress"), "no progress for a task");
  });
});

Deno.test("2026-07-28: a delegate_run that cannot start, or runs without the extension, answers in the call", async () => {
  await withServer(async (raw, work) => {
    const call = (args: Json, tasks = true) =>
      raw.request("tools/call", { name: "delegate_run", arguments: args, _meta: meta(tasks) });
    const invalid = resultOf(await call({ prompt: 42 }));
    assert.equal(invalid.resultType, "complete");
    assert.equal(invalid.isError, true);
    assert.match(
      textOf(invalid),
      /^Input validation error: Invalid arguments for tool delegate_run/,
    );
    const refused = resultOf(
      await call({ prompt: "hi", engine: "native", model: "not-allowed:1b", cwd: work }),
    );
    assert.equal(refused.resultType, "complete");
    assert.equal(refused.isError, true);
    assert.match(textOf(refused), /Cannot start job/);
    assert.deepEqual(raw.jobs(), [], "no job for a call that could not start");

    // Without the extension (claude -p, subagents) the call blocks until the job ends.
    const blocking = resultOf(
      await call({ prompt: "@reply plain-done", engine: "native", model: MODEL, cwd: work }, false),
    );
    assert.equal(blocking.resultType, "complete");
    assert.match(textOf(blocking), /--- output ---\nplain-done/);
    assert.equal(raw.jobState(raw.jobs()[0]!), "completed");
  });
});

Deno.test("2026-07-28: tasks/cancel stops the job; a job stopped elsewhere completes with a result saying so", async () => {
  await withServer(async (raw, work) => {
    const start = async () =>
      resultOf(
        await raw.request("tools/call", {
          name: "delegate_run",
          arguments: { prompt: GATED, engine: "native", model: MODEL, cwd: work },
          _meta: meta(),
        }),
      );
    const get = async (taskId: unknown) =>
      resultOf(await raw.request("tasks/get", { taskId, _meta: meta() }));

    const first = await start();
    const firstJob = raw.jobs()[0]!;
    const ack = resultOf(
      await raw.request("tasks/cancel", { taskId: first.taskId, _meta: meta() }),
    );
    assert.equal(ack.resultType, "complete");
    assert.equal(
      raw.jobState(firstJob),
      "cancelled",
      "the job is stopped when tasks/cancel answers",
    );
    const cancelled = await get(first.taskId);
    assert.equal(cancelled.status, "cancelled");
    assert.equal("result" in cancelled, false);
    const again = resultOf(
      await raw.request("tasks/cancel", { taskId: first.taskId, _meta: meta() }),
    );
    assert.equal(again.resultType, "complete", "cancelling is cooperative: an ended task acks");

    const second = await start();
    const secondJob = raw.jobs().find((id) => id !== firstJob)!;
    const stopped = resultOf(
      await raw.request("tools/call", {
        name: "delegate_cancel",
        arguments: { job_id: secondJob },
        _meta: meta(),
      }),
    );
    assert.match(textOf(stopped), /Cancelled job/);
    const ended = await until(
      async () => {
        const r = await get(second.taskId);
        return r.status === "working" ? undefined : r;
      },
      30_000,
      "the second task to end",
    );
    assert.equal(ended.status, "completed", "only the client's own tasks/cancel is 'cancelled'");
    assert.equal((ended.result as Json).isError, true);
    assert.match(textOf(ended.result as Json), /state:\s+cancelled/);
  });
});

Deno.test("2026-07-28: subscriptions/listen is acknowledged and tools/list_changed comes stamped on it", async () => {
  await withServer(async (raw) => {
    await raw.request("server/discover", { _meta: meta() });
    const stamped = (id: string) =>
      raw.notifications().filter((n) =>
        n.method === "notifications/tools/list_changed" &&
        ((n.params as Json | undefined)?._meta as Json | undefined)?.[
            "io.modelcontextprotocol/subscriptionId"
          ] === id
      );
    // The listen request stays open: it is answered with notifications, not a result.
    raw.request("subscriptions/listen", {
      notifications: { toolsListChanged: true, promptsListChanged: true },
      _meta: meta(),
    }, "listen:0").catch(() => {});
    const ack = await until(
      () =>
        raw.notifications().find((n) => n.method === "notifications/subscriptions/acknowledged"),
      30_000,
      "the acknowledgement",
    );
    assert.deepEqual(ack.params, {
      notifications: { toolsListChanged: true },
      _meta: { "io.modelcontextprotocol/subscriptionId": "listen:0" },
    });
    // delegate_start's description names the default model once Ollama answered.
    await until(() => stamped("listen:0").length > 0 || undefined, 30_000, "a stamped change");
    const unstamped = raw.notifications().filter((n) =>
      n.method === "notifications/tools/list_changed" && !(n.params as Json | undefined)?._meta
    );
    assert.deepEqual(unstamped, [], "2026 delivers changes only on a subscription");

    const closed = resultOf(
      await raw.request("subscriptions/listen", {
        notifications: { promptsListChanged: true },
        _meta: meta(),
      }, "listen:1"),
    );
    assert.equal(closed.resultType, "complete", "nothing to deliver: closed at once");
    assert.equal((closed._meta as Json)["io.modelcontextprotocol/subscriptionId"], "listen:1");
    const tasks = errorOf(
      await raw.request("subscriptions/listen", {
        notifications: { taskIds: ["t"] },
        _meta: meta(false),
      }, "listen:2"),
    );
    assert.equal(tasks.code, -32021);
  });
});

Deno.test("2025-11-25 beside it: initialize, no resultType, tools/list_changed once initialized", async () => {
  await withServer(async (raw) => {
    const init = resultOf(
      await raw.request("initialize", {
        protocolVersion: "2025-11-25",
        capabilities: {},
        clientInfo: { name: "raw-legacy", version: "1" },
      }),
    );
    assert.equal(init.protocolVersion, "2025-11-25");
    assert.equal("resultType" in init, false);
    const { tasks: _tasks2025, ...capabilities } = init.capabilities as Json;
    assert.deepEqual(
      capabilities,
      { tools: { listChanged: true } },
      "discover reports the tool capability initialize reports (discoverResult() in server/transport/discover.ts)",
    );
    assert.ok(_tasks2025, "2025 clients keep the 2025 tasks capability");
    raw.notify("notifications/initialized");
    await until(
      () =>
        raw.notifications().find((n) =>
          n.method === "notifications/tools/list_changed" && !(n.params as Json | undefined)?._meta
        ),
      30_000,
      "an unstamped tools/list_changed",
    );
    const list = resultOf(await raw.request("tools/list"));
    assert.equal("resultType" in list, false);
    assert.equal("ttlMs" in list, false);
  });
});
