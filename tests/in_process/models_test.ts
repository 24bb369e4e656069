/** Model checks at start, retired cloud models, progress while waiting, honest counts. */
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { field, type SceneServer, tempDir, until } from "../support/harness.ts";
import { startInProcessScene } from "../support/in_process_scene.ts";
import { type ChatScript } from "../support/emulator/emulator.ts";
import { ACTIVITY_KEEP } from "../../src/jobs/live_job.ts";

const RETIRED = "glm-4.7 was retired at 2026-07-15 00:00:00 -0700 PDT (ref: 0b7c4d1e)";

Deno.test("a retired cloud model is remembered, flagged, refused and never auto-picked", async () => {
  await using scene = await startInProcessScene({
    emulator: {
      models: [{ name: "glm-4.7:cloud", retiredText: RETIRED }, { name: "gpt-oss:120b-cloud" }, {
        name: "qwen3:8b",
      }],
    },
  });
  const work = tempDir("od-work-");
  const models = await scene.call("ollama_models");
  assert.match(models.text, /Default model: +glm-4\.7:cloud \(auto\)/, "first cloud model");
  const failed = await scene.call("delegate_start", {
    prompt: "hi",
    cwd: work,
    wait_seconds: 90,
  });
  assert.equal(failed.isError, true, failed.text);
  assert.equal(field(failed.text, "state"), "failed");
  assert.equal(field(failed.text, "model"), "glm-4.7:cloud");
  assert.match(failed.text, /was retired/);
  const after = await scene.call("ollama_models");
  assert.match(after.text, /x glm-4\.7:cloud +\[cloud\] .*RETIRED: .*was retired at 2026-07-15/);
  assert.match(after.text, /Default model: +gpt-oss:120b-cloud \(auto\)/);
  const refused = await scene.call("delegate_start", { prompt: "hi", model: "glm-4.7:cloud" });
  assert.equal(refused.isError, true);
  assert.match(refused.text, /model "glm-4\.7:cloud" was retired by Ollama \(.*2026-07-15/);
  const picked = await scene.call("delegate_start", {
    prompt: "hi",
    cwd: work,
    wait_seconds: 90,
  });
  assert.equal(field(picked.text, "model"), "gpt-oss:120b-cloud", picked.text);
  assert.equal(field(picked.text, "state"), "completed");
});

Deno.test("cloud-suffixed models pass unlisted and `llama3` equals `llama3:latest`", async () => {
  await using scene = await startInProcessScene({
    emulator: { models: [{ name: "llama3:latest" }, { name: "unlisted-here:cloud" }] },
    server: false,
  });
  scene.emulator.setModels([{ name: "llama3:latest" }]);
  await scene.startServer({ userConfig: { allowedModels: ["llama3", "kimi-k3:cloud"] } });
  const work = tempDir("od-work-");
  const ok = await scene.call("delegate_start", {
    prompt: "hi",
    cwd: work,
    model: "llama3:latest",
    wait_seconds: 90,
  });
  assert.equal(field(ok.text, "state"), "completed", ok.text);
  // Not listed by Ollama, but a cloud name: accepted, and Ollama's own 404 reaches the job.
  const cloud = await scene.call("delegate_start", {
    prompt: "hi",
    cwd: work,
    model: "kimi-k3:cloud",
    wait_seconds: 120,
  });
  assert.equal(field(cloud.text, "model"), "kimi-k3:cloud");
  assert.equal(cloud.isError, true, cloud.text);
  assert.doesNotMatch(cloud.text, /has no model/);
});

Deno.test("a blocking wait sends progress notifications and every tool call is counted", async () => {
  // Past the live record's ring of recent activity (the job layer's, whatever the engine), which
  // must not cap the count. The native engine, six reads of another line a reply: through
  // Claude Code, 120 model turns took 11 s of CPU, and 120 commands 40 s (a sandbox each).
  // Progress every 300 ms instead of every 5 s.
  const calls = ACTIVITY_KEEP + 20;
  const work = tempDir("od-work-");
  const notes = join(work, "notes.txt");
  writeFileSync(notes, Array.from({ length: calls + 1 }, (_, i) => `line ${i}`).join("\n"));
  const script: ChatScript = (view) => {
    const done = view.toolResults.length;
    if (done >= calls) return { kind: "text", text: `ran ${done} commands` };
    // A pause a reply, so that the wait lasts long enough for several progress ticks.
    return {
      kind: "delay",
      ms: 100,
      then: {
        kind: "tool_calls",
        calls: Array.from({ length: Math.min(6, calls - done) }, (_, i) => ({
          name: "Read",
          arguments: { file_path: notes, offset: done + i + 1, limit: 1 },
        })),
      },
    };
  };
  await using scene = await startInProcessScene({
    progressMs: 300,
    emulator: { chatScript: script },
  });
  const progress: Array<{ progress: number; message?: string }> = [];
  const reply = await scene.call("delegate_start", {
    prompt: "read many lines",
    cwd: work,
    engine: "native",
    model: "qwen3:8b",
    wait_seconds: 300,
  }, { onprogress: (p) => progress.push(p), timeoutMs: 320_000 });
  assert.equal(field(reply.text, "state"), "completed", reply.text);
  assert.equal(field(reply.text, "tool calls"), String(calls), "no ring-buffer cap");
  assert.match(reply.text, new RegExp(`ran ${calls} commands`));
  assert.ok(progress.length >= 2, "progress notifications while blocked");
  const id = field(reply.text, "job_id")!;
  assert.ok(progress.every((p) => p.message?.includes(id)), JSON.stringify(progress));
  for (let i = 1; i < progress.length; i++) {
    assert.ok(progress[i]!.progress > progress[i - 1]!.progress);
  }
});

Deno.test("a completed job without tool calls is flagged unverified; a failed one is an error", async () => {
  await using scene = await startInProcessScene();
  const work = tempDir("od-work-");
  const plain = await scene.call("delegate_start", {
    prompt: "what is in this repo?",
    cwd: work,
    model: "qwen3:8b",
    wait_seconds: 90,
  });
  assert.equal(plain.isError, false);
  assert.match(
    plain.text,
    /^tool calls: 0 {3}<- answered without using any tools; treat factual claims as unverified$/m,
  );
  scene.emulator.setScript(() => ({
    kind: "error",
    status: 400,
    message: "something the model rejected",
  }));
  const failed = await scene.call("delegate_start", {
    prompt: "this will fail",
    cwd: work,
    model: "qwen3:8b",
    wait_seconds: 120,
  });
  assert.equal(failed.isError, true, failed.text);
  assert.equal(field(failed.text, "state"), "failed");
  assert.match(failed.text, /^tool calls: 0$/m, "no unverified note on a failed job");
  const status = await scene.call("delegate_status", { job_id: field(failed.text, "job_id")! });
  assert.equal(status.isError, true, "failed is an error everywhere");
});

Deno.test("delegate_start's description names the real default model once Ollama is asked", async () => {
  await using scene = await startInProcessScene({ server: false });
  const description = async (server: SceneServer) => {
    const { tools } = await server.client.listTools();
    return tools.find((t: { name: string }) => t.name === "delegate_start")?.description ?? "";
  };
  // A local model allowed: the default is local, not "the first allowed cloud model".
  const local = await scene.startServer({ userConfig: { allowedModels: ["qwen3:8b"] } });
  await until(
    async () => (await description(local)).includes("Default: qwen3:8b."),
    30_000,
    "the description to name qwen3:8b",
  );
  assert.doesNotMatch(await description(local), /cloud model/);
  await local.close();
  // No list: a cloud model Ollama serves comes first. (A HOME of its own: the first server's
  // holds the list in its config file.)
  const any = await scene.startServer({ home: tempDir("od-home-") });
  await until(
    async () => (await description(any)).includes("Default: gpt-oss:120b-cloud."),
    30_000,
    "the description to name the cloud model",
  );
});
