/**
 * The native engine against an Ollama that behaves like a real local one (the emulator's
 * contextMode "real": a 4096-token default context, and a prompt over the loaded context cut
 * silently from the front). The real server over stdio runs each job; the tests check what
 * reached the model, what the job reports, and the requests on the wire.
 */
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type ChatScript } from "../support/emulator/emulator.ts";
import { field, tempDir } from "../support/harness.ts";
import { startInProcessScene } from "../support/in_process_scene.ts";

type Json = Record<string, unknown>;
const native = { engine: "native", model: "qwen3:8b", wait_seconds: 120 };
const callTimeout = { timeoutMs: 300_000 };

/** Answers whether the first user message reached the model whole. */
const seesTask: ChatScript = (view) => {
  const task = view.firstUserText.trim();
  if (!task.startsWith("BEGIN-TASK")) return undefined;
  return {
    kind: "text",
    text: task.endsWith("END-TASK") ? "the whole task reached me" : "the task was cut",
  };
};

function transcriptOf(stateDir: string, id: string): Json[] {
  return readFileSync(join(stateDir, id, "transcript.jsonl"), "utf8").trim().split("\n")
    .map((l) => JSON.parse(l) as Json);
}

const numCtxOf = (body: unknown) => ((body as Json).options as Json | undefined)?.num_ctx;

Deno.test("local context: a prompt over Ollama's 4096 default reaches the model whole, because the job sizes num_ctx", async () => {
  await using scene = await startInProcessScene({
    emulator: { contextMode: "real", chatScript: seesTask },
  });
  // About 6,300 tokens: over the default context, well under the model's 32,768.
  const prompt = `BEGIN-TASK\n${"word ".repeat(5000)}\nEND-TASK`;
  const reply = await scene.call("delegate_start", {
    ...native,
    prompt,
    cwd: tempDir("od-ctx-"),
  }, callTimeout);
  assert.equal(field(reply.text, "state"), "completed", reply.text);
  assert.match(reply.text, /--- output ---\nthe whole task reached me/);
  const [request] = scene.emulator.nativeChatRequests();
  assert.equal(
    numCtxOf(request!.json),
    16384,
    "the prompt plus 8k for the reply, as a power of two",
  );
  const record = scene.emulator.contextRecords.at(-1)!;
  assert.equal(record.truncated, false);
  assert.equal(record.contextLength, 16384);
  assert.equal(record.source, "request");
});

Deno.test("local context: num_ctx stays the same over a 3-request job, so Ollama never reloads the model", async () => {
  await using scene = await startInProcessScene({ emulator: { contextMode: "real" } });
  const work = tempDir("od-ctx-");
  writeFileSync(join(work, "a.txt"), "alpha line\n".repeat(300));
  writeFileSync(join(work, "b.txt"), "beta line\n".repeat(300));
  const reply = await scene.call("delegate_start", {
    ...native,
    prompt: '@tool Read {"file_path":"a.txt"}\n@tool Read {"file_path":"b.txt"}\n' +
      "@reply read both\nread the files",
    cwd: work,
  }, callTimeout);
  assert.equal(field(reply.text, "state"), "completed", reply.text);
  assert.match(reply.text, /--- output ---\nread both/);
  const requests = scene.emulator.nativeChatRequests();
  assert.equal(requests.length, 3);
  const sizes = requests.map((r) => numCtxOf(r.json));
  assert.deepEqual(sizes, [16384, 16384, 16384], "one context for the whole job");
  const estimates = scene.emulator.contextRecords.map((r) => r.estimatedTokens);
  assert.ok(estimates[2]! > estimates[0]! + 1000, `the prompt grew: ${estimates}`);
  assert.equal(scene.emulator.loadCount("qwen3:8b"), 1);
  assert.equal(scene.emulator.reloadCount("qwen3:8b"), 0);
  assert.ok(scene.emulator.contextRecords.every((r) => !r.truncated));
});

Deno.test("local context: a job that outgrows maxContext has old tool output stubbed, says so, and still answers", async () => {
  await using scene = await startInProcessScene({
    emulator: { contextMode: "real" },
    userConfig: { maxContext: 8192 },
  });
  const work = tempDir("od-ctx-");
  const reads: string[] = [];
  for (let i = 1; i <= 9; i++) {
    writeFileSync(join(work, `f${i}.txt`), `file ${i} `.padEnd(49, "z").concat("\n").repeat(50));
    reads.push(`@tool Read {"file_path":"f${i}.txt"}`);
  }
  const reply = await scene.call("delegate_start", {
    ...native,
    prompt: `${reads.join("\n")}\n@reply finished reading\nread every file`,
    cwd: work,
  }, callTimeout);
  assert.equal(field(reply.text, "state"), "completed", reply.text);
  assert.match(reply.text, /--- output ---\nfinished reading/);
  assert.match(
    field(reply.text, "context") ?? "",
    /^\d+ older tool outputs? shortened to fit the model's context$/,
  );
  const id = field(reply.text, "job_id")!;
  const notes = transcriptOf(scene.stateDir, id)
    .filter((e) => e.kind === "text" && String(e.text).startsWith("[context shortened]"));
  assert.ok(notes.length >= 1);
  assert.match(
    String(notes[0]!.text),
    /^\[context shortened\] To fit the context \(8,192 tokens, set by maxContext; 2,048 kept for the reply\): stubbed Read f1\.txt \(\d{1,2},\d{3} chars\)/,
  );
  // Every request fit the context it asked for, and the model never lost the task.
  const requests = scene.emulator.nativeChatRequests();
  assert.equal(requests.length, 10);
  assert.ok(requests.every((r) => numCtxOf(r.json) === 8192));
  assert.ok(scene.emulator.contextRecords.every((r) => !r.truncated && r.contextLength === 8192));
  const last = requests.at(-1)!.json as { messages: Array<{ role: string; content: string }> };
  assert.match(last.messages[1]!.content, /^@tool Read \{"file_path":"f1\.txt"\}/);
  assert.ok(last.messages.some((m) => /^\[tool result of Read f1\.txt: /.test(m.content)));
  // The job's own history keeps everything.
  const history = readFileSync(join(scene.stateDir, id, "messages.jsonl"), "utf8");
  assert.equal(history.includes("[tool result of"), false);
  const status = await scene.call("delegate_status", { job_id: id });
  assert.match(status.text, /\[context shortened\]/);
});

Deno.test("local context: a task that cannot fit fails with context_overflow, the numbers and the fix, and sends nothing", async () => {
  await using scene = await startInProcessScene({
    emulator: { contextMode: "real" },
    userConfig: { maxContext: 8192 },
  });
  const reply = await scene.call("delegate_start", {
    ...native,
    prompt: `BEGIN-TASK\n${"word ".repeat(8000)}\nEND-TASK`,
    cwd: tempDir("od-ctx-"),
  }, callTimeout);
  assert.equal(field(reply.text, "state"), "failed", reply.text);
  assert.match(
    field(reply.text, "error") ?? "",
    /^context_overflow: the request needs about 10,\d{3} tokens \(chars\/4: system prompt and tools \d{3}, task and user messages 10,\d{3}, the model's replies 0, tool results 0\) plus 2,048 for the reply, but the context is capped at 8,192 tokens, set by maxContext\. The system prompt and the task are never cut\. To fix: raise maxContext/,
  );
  assert.equal(scene.emulator.nativeChatRequests().length, 0, "nothing was sent to be cut");
});

Deno.test("local context: an OpenAI-compatible backend keeps its API; effort goes out as reasoning_effort", async () => {
  await using scene = await startInProcessScene({
    emulator: { contextMode: "real" },
    server: false,
  });
  await scene.startServer({
    userConfig: { backends: { lab: { url: scene.emulator.url, kind: "openai" } } },
  });
  const work = tempDir("od-ctx-");
  writeFileSync(join(work, "a.txt"), "hello\n");
  const reply = await scene.call("delegate_start", {
    ...native,
    backend: "lab",
    effort: "max",
    prompt: '@tool Read {"file_path":"a.txt"}\n@reply read on lab\nread it',
    cwd: work,
  }, callTimeout);
  assert.equal(field(reply.text, "state"), "completed", reply.text);
  assert.match(reply.text, /--- output ---\nread on lab/);
  assert.equal(scene.emulator.nativeChatRequests().length, 0);
  const bodies = scene.emulator.chatRequests().map((r) => r.json as Json);
  assert.equal(bodies.length, 2);
  for (const body of bodies) {
    assert.equal(body.reasoning_effort, "high");
    assert.equal("options" in body || "num_ctx" in body, false);
  }
  assert.match(field(reply.text, "tokens") ?? "", /^in [1-9]\d* \/ out [1-9]/);
});

Deno.test("local context: effort goes out as think to a thinking model, not to one that cannot think; keepAlive as keep_alive", async () => {
  await using scene = await startInProcessScene({
    emulator: {
      contextMode: "real",
      models: [
        { name: "qwen3:8b", capabilities: ["completion", "tools", "thinking"] },
        { name: "gpt-oss:20b", capabilities: ["completion", "tools", "thinking"] },
        { name: "qwen2.5-coder:7b", capabilities: ["completion", "tools"] },
      ],
    },
    userConfig: { keepAlive: "30m" },
  });
  const work = tempDir("od-ctx-");
  const runs: Array<[string, string]> = [
    ["qwen3:8b", "high"],
    ["gpt-oss:20b", "low"],
    ["qwen3:8b", "off"],
    ["qwen2.5-coder:7b", "high"],
  ];
  for (const [model, effort] of runs) {
    const reply = await scene.call("delegate_start", {
      ...native,
      model,
      effort,
      prompt: `@reply thought ${effort}\nthink`,
      cwd: work,
    }, callTimeout);
    assert.equal(field(reply.text, "state"), "completed", `${model}: ${reply.text}`);
  }
  const bodies = scene.emulator.nativeChatRequests().map((r) => r.json as Json);
  assert.deepEqual(bodies.map((b) => b.think), [true, "low", false, undefined]);
  assert.ok(bodies.every((b) => b.keep_alive === "30m"));
});

Deno.test("local context: a model already loaded with a larger context is used as it is, without a reload", async () => {
  await using scene = await startInProcessScene({ emulator: { contextMode: "real" } });
  // Loaded by someone else (another client, the user) with 32k: an empty chat only loads it.
  const load = await fetch(`${scene.emulator.url}/api/chat`, {
    method: "POST",
    body: JSON.stringify({ model: "qwen3:8b", messages: [], options: { num_ctx: 32768 } }),
  });
  assert.equal((await load.json()).done_reason, "load");
  const reply = await scene.call("delegate_start", {
    ...native,
    prompt: "@reply small job\ndo it",
    cwd: tempDir("od-ctx-"),
  }, callTimeout);
  assert.equal(field(reply.text, "state"), "completed", reply.text);
  assert.equal(numCtxOf(scene.emulator.nativeChatRequests().at(-1)!.json), 32768);
  assert.equal(scene.emulator.loadCount("qwen3:8b"), 1);
  assert.equal(scene.emulator.reloadCount("qwen3:8b"), 0);
});
