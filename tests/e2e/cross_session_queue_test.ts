/**
 * Two real servers on one state dir, as two Claude Code sessions of one user run them, share
 * the default Ollama's limit (maxConcurrent 1 here): the second session's job waits while the
 * first one's runs, its status names the holder, and it runs once the first ends, is cancelled
 * or its server dies.
 */
import assert from "node:assert/strict";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { field, tempDir, until } from "../support/harness.ts";
import { startScene } from "../support/scene.ts";
import { endpointFolder } from "../../src/jobs/queue/slot_queue.ts";

const native = { engine: "native", model: "qwen3:8b", wait_seconds: 0 };

Deno.test("two sessions with maxConcurrent 1: the second one's job waits for the first one's slot", async () => {
  await using scene = await startScene({ env: { OLLAMA_MCP_MAX_CONCURRENT: "1" } });
  const one = scene.server;
  const two = await scene.startServer();
  const work = tempDir("od-queue-");
  const first = await one.call("delegate_start", {
    ...native,
    prompt: `@hang\nhold the GPU ${crypto.randomUUID()}`,
    cwd: work,
  });
  const a = field(first.text, "job_id")!;
  assert.equal(field(first.text, "state"), "running", first.text);
  await until(() => scene.emulator.nativeChatRequests().length >= 1, 30_000, "job A's request");

  const second = await two.call("delegate_start", {
    ...native,
    prompt: `@reply second done\nafter the first ${crypto.randomUUID()}`,
    cwd: work,
  });
  const b = field(second.text, "job_id")!;
  assert.equal(field(second.text, "state")?.startsWith("queued"), true, second.text);
  // The start reply waits up to a second for the job to know where it stands.
  const waiting = await until(
    async () => {
      const status = await two.call("delegate_status", { job_id: b });
      return field(status.text, "queue") ? status.text : undefined;
    },
    30_000,
    "job B's place in the shared queue",
  );
  assert.equal(field(waiting, "state"), "queued (1 in line)", waiting);
  assert.equal(
    field(waiting, "queue"),
    '1st in line for backend "ollama" (1 of 1 slot held: 1 by another session)',
  );
  assert.equal(field(waiting, "held by"), `${a} in server pid ${one.pid}`);

  const list = await two.call("delegate_list", {});
  assert.match(list.text, new RegExp(`job ${b}  ".*"  \\(1st in line for backend "ollama"\\)`));
  // The first session sees the other's job waiting behind its own, read from the state dir.
  const seen = await one.call("delegate_status", { job_id: b });
  assert.equal(field(seen.text, "state"), "queued (1 in line)", seen.text);
  assert.equal(field(seen.text, "held by"), `${a} here`);

  // Nothing of B reached the model while A holds the only slot.
  await new Promise((r) => setTimeout(r, 1500));
  assert.equal(scene.emulator.nativeChatRequests().length, 1);

  const cancelled = await one.call("delegate_cancel", { job_id: a });
  assert.equal(cancelled.isError, false, cancelled.text);
  const done = await two.call("delegate_result", { job_id: b, wait_seconds: 60 });
  assert.equal(field(done.text, "state"), "completed", done.text);
  assert.match(done.text, /--- output ---\nsecond done/);
  // Both ended: no slot and no ticket is left behind.
  assert.deepEqual(
    readdirSync(join(scene.stateDir, ".slots", endpointFolder(scene.emulator.url))),
    [],
  );
});

Deno.test("a session's server killed while its job holds the slot: the other session's job runs", async () => {
  await using scene = await startScene({ env: { OLLAMA_MCP_MAX_CONCURRENT: "1" } });
  const one = scene.server;
  const two = await scene.startServer();
  const work = tempDir("od-queue-");
  const first = await one.call("delegate_start", {
    ...native,
    prompt: `@hang\nhold the GPU ${crypto.randomUUID()}`,
    cwd: work,
  });
  assert.equal(field(first.text, "state"), "running", first.text);
  await until(() => scene.emulator.nativeChatRequests().length >= 1, 30_000, "job A's request");
  const second = await two.call("delegate_start", {
    ...native,
    prompt: `@reply second done\nafter the first ${crypto.randomUUID()}`,
    cwd: work,
  });
  const b = field(second.text, "job_id")!;
  assert.equal(field(second.text, "state")?.startsWith("queued"), true, second.text);
  process.kill(one.pid, "SIGKILL");
  const done = await two.call("delegate_result", { job_id: b, wait_seconds: 60 });
  assert.equal(field(done.text, "state"), "completed", done.text);
});

Deno.test("a session's server stopped (Ctrl-Z) while its job holds the slot: the other's job runs; resumed, the first stops", async () => {
  await using scene = await startScene({ env: { OLLAMA_MCP_MAX_CONCURRENT: "1" } });
  const one = scene.server;
  const two = await scene.startServer();
  const work = tempDir("od-queue-");
  const first = await one.call("delegate_start", {
    ...native,
    prompt: `@hang\nhold the GPU ${crypto.randomUUID()}`,
    cwd: work,
  });
  const a = field(first.text, "job_id")!;
  await until(() => scene.emulator.nativeChatRequests().length >= 1, 30_000, "job A's request");
  process.kill(one.pid, "SIGSTOP");
  try {
    const stoppedAt = Date.now();
    const second = await two.call("delegate_start", {
      ...native,
      prompt: `@hang\ntake the GPU ${crypto.randomUUID()}`,
      cwd: work,
    });
    const b = field(second.text, "job_id")!;
    // The stopped server's lease (8 s) lapses, and is seen lapsed for 3 s more.
    await until(() => scene.emulator.nativeChatRequests().length >= 2, 30_000, "job B's request");
    const waited = Date.now() - stoppedAt;
    assert.ok(waited >= 7_000 && waited <= 25_000, `B ran ${waited} ms after A's server stopped`);
    const running = await two.call("delegate_status", { job_id: b });
    assert.equal(field(running.text, "state"), "running", running.text);
    process.kill(one.pid, "SIGCONT");
    const ended = await one.call("delegate_result", { job_id: a, wait_seconds: 30 });
    assert.equal(field(ended.text, "state"), "interrupted", ended.text);
    assert.match(
      field(ended.text, "error") ?? "",
      /^Stopped because this server did not renew its hold on backend "ollama"'s shared slot for \d+ s \(it was suspended, e\.g\. by Ctrl-Z, or stalled\), and another session's job took the slot; the job was stopped so that the limit of 1 is kept; follow up to continue$/,
    );
    const queue = join(scene.stateDir, ".slots", endpointFolder(scene.emulator.url));
    assert.deepEqual(readdirSync(queue), [`slot-0-${b}.json`], "only B holds the slot");
    assert.equal(scene.emulator.nativeChatRequests().length, 2, "A sent nothing more");
    await two.call("delegate_cancel", { job_id: b });
  } finally {
    process.kill(one.pid, "SIGCONT");
  }
});

Deno.test("status of jobs of two sessions at once: wait all returns once both ended", async () => {
  await using scene = await startScene({ env: { OLLAMA_MCP_MAX_CONCURRENT: "1" } });
  const one = scene.server;
  const two = await scene.startServer();
  const work = tempDir("od-queue-");
  const first = await one.call("delegate_start", {
    ...native,
    prompt: `@delay 2000\n@reply first done\nslow ${crypto.randomUUID()}`,
    cwd: work,
  });
  const second = await two.call("delegate_start", {
    ...native,
    prompt: `@reply second done\nquick ${crypto.randomUUID()}`,
    cwd: work,
  });
  const [a, b] = [field(first.text, "job_id")!, field(second.text, "job_id")!];
  const both = await two.call("delegate_status", {
    job_ids: [a, b],
    wait: "all",
    wait_seconds: 120,
  });
  assert.equal(both.isError, false, both.text);
  assert.equal(both.text.split("\n")[0], `2 of 2 finished: ${a}, ${b}`);
});

Deno.test("a job waiting in the shared queue, cancelled from the other session, leaves it", async () => {
  await using scene = await startScene({ env: { OLLAMA_MCP_MAX_CONCURRENT: "1" } });
  const one = scene.server;
  const two = await scene.startServer();
  const work = tempDir("od-queue-");
  const first = await one.call("delegate_start", {
    ...native,
    prompt: `@hang\nhold the GPU ${crypto.randomUUID()}`,
    cwd: work,
  });
  const a = field(first.text, "job_id")!;
  await until(() => scene.emulator.nativeChatRequests().length >= 1, 30_000, "job A's request");
  const second = await two.call("delegate_start", {
    ...native,
    prompt: `@reply never\nnot needed ${crypto.randomUUID()}`,
    cwd: work,
  });
  const b = field(second.text, "job_id")!;
  const queue = join(scene.stateDir, ".slots", endpointFolder(scene.emulator.url));
  await until(() => readdirSync(queue).includes(`wait-${b}.json`), 30_000, "job B's ticket");
  const cancelled = await one.call("delegate_cancel", { job_id: b });
  assert.equal(field(cancelled.text, "state"), "cancelled", cancelled.text);
  assert.deepEqual(readdirSync(queue), [`slot-0-${a}.json`], "B left the queue, A keeps its slot");
  const still = await one.call("delegate_status", { job_id: a });
  assert.equal(field(still.text, "state"), "running");
  await one.call("delegate_cancel", { job_id: a });
  assert.equal(scene.emulator.nativeChatRequests().length, 1, "B never reached the model");
});
