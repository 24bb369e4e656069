import { withEmulator } from "./emulator.ts";
import assert from "node:assert/strict";
import { type ChatRequestView, type MessagesRequestView, type OllamaEmulator } from "./emulator.ts";

type Json = Record<string, unknown>;

async function postJson(emu: OllamaEmulator, path: string, body: unknown): Promise<Json> {
  const res = await fetch(emu.url + path, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  assert.equal(res.status, 200, `${path}: ${res.status}`);
  return await res.json() as Json;
}

/** A conversation of about `turns` × 1000 tokens (chars/4) that starts with the task. */
function longConversation(turns: number, first = "@reply finished the task"): Json[] {
  const messages: Json[] = [
    { role: "system", content: "You are a careful coding agent." },
    { role: "user", content: first },
  ];
  for (let i = 0; i < turns; i++) {
    messages.push({ role: "assistant", content: `step ${i}: ${"a".repeat(2000)}` });
    messages.push({ role: "user", content: `result ${i}: ${"b".repeat(2000)}` });
  }
  return messages;
}

const estimate = (v: unknown) => Math.ceil(JSON.stringify(v).length / 4);

Deno.test("real mode: /v1/chat/completions silently drops the oldest messages to fit 4096", async () => {
  const seen: ChatRequestView[] = [];
  await withEmulator({
    contextMode: "real",
    models: [{ name: "qwen3:8b" }],
    chatScript: (v) => {
      seen.push(v);
      return undefined;
    },
  }, async (emu) => {
    const messages = longConversation(8);
    assert.ok(estimate(messages) > 8000);
    const body = await postJson(emu, "/v1/chat/completions", { model: "qwen3:8b", messages });
    const usage = body.usage as Json;
    assert.ok(Number(usage.prompt_tokens) <= 4096, `reported ${usage.prompt_tokens}`);
    const v = seen[0]!;
    // The task in the first user message is gone, so its @reply directive is too.
    assert.notEqual(v.firstUserText, "@reply finished the task");
    assert.notEqual(((body.choices as Json[])[0]!.message as Json).content, "finished the task");
    // The system message survives message-level truncation; the newest messages are kept.
    assert.deepEqual(v.messages[0], messages[0]);
    assert.deepEqual(v.messages.at(-1), messages.at(-1));
    assert.equal(Number(usage.prompt_tokens), estimate(v.messages));
    const [record] = emu.contextRecords;
    assert.equal(record!.estimatedTokens, estimate(messages));
    assert.equal(record!.contextLength, 4096);
    assert.equal(record!.source, "default");
    assert.equal(record!.truncated, true);
    assert.equal(record!.truncation, "messages");
    assert.equal(record!.droppedMessages, messages.length - v.messages.length);
    assert.equal(record!.keptTokens, usage.prompt_tokens);
    assert.equal(v.context, record);
  });
});

Deno.test("ideal mode (the default) sends the same prompt whole but records the overflow", async () => {
  await withEmulator(
    { models: [{ name: "qwen3:8b" }], defaultContextLength: 4096 },
    async (emu) => {
      const messages = longConversation(8);
      const body = await postJson(emu, "/v1/chat/completions", { model: "qwen3:8b", messages });
      assert.equal(((body.choices as Json[])[0]!.message as Json).content, "finished the task");
      assert.equal((body.usage as Json).prompt_tokens, estimate(messages));
      const [record] = emu.contextRecords;
      assert.equal(record!.overflow, true);
      assert.equal(record!.truncated, false);
      assert.equal(record!.contextLength, 4096);
    },
  );
});

Deno.test("ideal mode without a default context loads models with their maximum", async () => {
  await withEmulator({ models: [{ name: "qwen3:8b", contextLength: 40960 }] }, async (emu) => {
    const messages = longConversation(8);
    await postJson(emu, "/v1/chat/completions", { model: "qwen3:8b", messages });
    const [record] = emu.contextRecords;
    assert.equal(record!.contextLength, 40960);
    assert.equal(record!.overflow, false);
    assert.equal(emu.loadedModels().models[0]?.context_length, 40960);
  });
});

Deno.test("where the context comes from: num_ctx, Modelfile, OLLAMA_CONTEXT_LENGTH, default; capped", async () => {
  const models = [
    { name: "plain:8b", contextLength: 40960 },
    { name: "tuned:8b", contextLength: 40960, numCtx: 16384 },
    { name: "small:1b", contextLength: 2048 },
  ];
  const ask = (emu: OllamaEmulator, model: string, options?: Json) =>
    postJson(emu, "/api/chat", {
      model,
      messages: [{ role: "user", content: "hi" }],
      stream: false,
      ...(options ? { options } : {}),
    });
  await withEmulator({ models, defaultContextLength: 8192 }, async (emu) => {
    await ask(emu, "plain:8b");
    await ask(emu, "tuned:8b");
    await ask(emu, "tuned:8b", { num_ctx: 32768 });
    await ask(emu, "plain:8b", { num_ctx: 131072 });
    await ask(emu, "small:1b");
    assert.deepEqual(emu.contextRecords.map((r) => [r.model, r.contextLength, r.source]), [
      ["plain:8b", 8192, "default"],
      ["tuned:8b", 16384, "modelfile"],
      ["tuned:8b", 32768, "request"],
      ["plain:8b", 40960, "request"],
      ["small:1b", 2048, "default"],
    ]);
  });
  await withEmulator({ models, serverContextLength: 24576 }, async (emu) => {
    await ask(emu, "plain:8b");
    await ask(emu, "tuned:8b");
    assert.deepEqual(emu.contextRecords.map((r) => [r.contextLength, r.source]), [
      [24576, "server"],
      [16384, "modelfile"],
    ]);
  });
});

Deno.test("a num_ctx that changes reloads the model; a stable one does not", async () => {
  await withEmulator({ models: [{ name: "qwen3:8b" }] }, async (emu) => {
    const turn = (numCtx?: number) =>
      postJson(emu, "/api/chat", {
        model: "qwen3:8b",
        messages: [{ role: "user", content: "hi" }],
        stream: false,
        ...(numCtx ? { options: { num_ctx: numCtx } } : {}),
      });
    const first = await turn(16384);
    const second = await turn(16384);
    assert.ok(Number(first.load_duration) > 1e9, "a first load takes seconds");
    assert.ok(Number(second.load_duration) < 1e8, "a loaded model answers at once");
    assert.equal(emu.reloadCount("qwen3:8b"), 0);
    await turn(20000);
    await turn(24000);
    assert.equal(emu.reloadCount("qwen3:8b"), 2);
    // /v1 cannot set num_ctx: it runs with the default and so reloads the model too.
    await postJson(emu, "/v1/chat/completions", {
      model: "qwen3:8b",
      messages: [{ role: "user", content: "hi" }],
    });
    assert.equal(emu.reloadCount("qwen3:8b"), 3);
    assert.equal(emu.loadCount("qwen3:8b"), 4);
    assert.deepEqual(emu.contextRecords.map((r) => r.reload), [false, false, true, true, true]);
  });
});

Deno.test("real mode: /v1/messages cuts Claude Code's prompt; the system prompt counts", async () => {
  const seen: MessagesRequestView[] = [];
  await withEmulator({
    contextMode: "real",
    models: [{ name: "qwen3:8b" }],
    script: (v) => {
      seen.push(v);
      return undefined;
    },
  }, async (emu) => {
    const system = [{ type: "text", text: "You are Claude Code. " + "s".repeat(6000) }];
    const messages = longConversation(4, "@reply done").slice(1).map((m) => ({
      role: m.role,
      content: [{ type: "text", text: m.content }],
    }));
    const body = await postJson(emu, "/v1/messages", {
      model: "qwen3:8b",
      max_tokens: 100,
      system,
      messages,
    });
    const usage = body.usage as Json;
    assert.ok(Number(usage.input_tokens) <= 4096, `reported ${usage.input_tokens}`);
    assert.equal(seen[0]!.system.length > 6000, true, "the system prompt was kept");
    assert.notEqual(seen[0]!.firstUserText, "@reply done");
    assert.equal(emu.contextRecords[0]!.truncation, "messages");

    // A last message that cannot fit beside the system prompt: only its tail survives, about
    // half the context, and the system prompt is gone (the runner cuts the prompt's front).
    seen.length = 0;
    const huge = [{
      role: "user",
      content: [{ type: "text", text: "START " + "x".repeat(40_000) + " END" }],
    }];
    const cut = await postJson(emu, "/v1/messages", {
      model: "qwen3:8b",
      max_tokens: 100,
      system,
      messages: huge,
    });
    const cutTokens = Number((cut.usage as Json).input_tokens);
    assert.ok(cutTokens <= 2048 && cutTokens > 1900, `about half of 4096: ${cutTokens}`);
    assert.equal(seen[0]!.system, "");
    assert.match(seen[0]!.firstUserText, /x END$/);
    assert.doesNotMatch(seen[0]!.firstUserText, /START/);
    assert.equal(emu.contextRecords[1]!.truncation, "tokens");
  });
});

Deno.test("real mode: /api/chat honours num_ctx, so a big enough window keeps everything", async () => {
  await withEmulator(
    { contextMode: "real", models: [{ name: "qwen3:8b", contextLength: 65536 }] },
    async (emu) => {
      const messages = longConversation(8);
      const small = await postJson(emu, "/api/chat", {
        model: "qwen3:8b",
        messages,
        stream: false,
      });
      assert.ok(Number(small.prompt_eval_count) <= 4096);
      assert.notEqual((small.message as Json).content, "finished the task");
      const big = await postJson(emu, "/api/chat", {
        model: "qwen3:8b",
        messages,
        stream: false,
        options: { num_ctx: 32768 },
      });
      assert.equal(big.prompt_eval_count, estimate(messages));
      assert.equal((big.message as Json).content, "finished the task");
      assert.deepEqual(emu.contextRecords.map((r) => [r.contextLength, r.truncated]), [
        [4096, true],
        [32768, false],
      ]);
    },
  );
});

Deno.test("/api/ps lists used models with context_length; keep_alive 0 and -1", async () => {
  await withEmulator({
    models: [{ name: "qwen3:8b" }, { name: "llama3.2:3b" }, { name: "glm-5:cloud" }],
    defaultContextLength: 4096,
  }, async (emu) => {
    const ps = async () =>
      (await (await fetch(emu.url + "/api/ps")).json() as { models: Json[] }).models;
    assert.deepEqual(await ps(), []);
    await postJson(emu, "/v1/chat/completions", {
      model: "qwen3:8b",
      messages: [{ role: "user", content: "hi" }],
    });
    await postJson(emu, "/v1/chat/completions", {
      model: "glm-5:cloud",
      messages: [{ role: "user", content: "hi" }],
    });
    const [entry] = await ps();
    assert.deepEqual(Object.keys(entry!), [
      "name",
      "model",
      "size",
      "digest",
      "details",
      "expires_at",
      "size_vram",
      "context_length",
    ]);
    assert.equal(entry!.name, "qwen3:8b");
    assert.equal(entry!.context_length, 4096);
    assert.equal(entry!.size, entry!.size_vram);
    assert.match(String(entry!.digest), /^[0-9a-f]{64}$/);
    const expires = Date.parse(String(entry!.expires_at)) - Date.now();
    assert.ok(expires > 4 * 60_000 && expires <= 5 * 60_000, `about 5m: ${expires}`);
    assert.equal((await ps()).length, 1, "cloud models are not loaded locally");

    await postJson(emu, "/api/chat", {
      model: "llama3.2:3b",
      messages: [{ role: "user", content: "hi" }],
      stream: false,
      keep_alive: -1,
    });
    const both = await ps();
    assert.deepEqual(both.map((m) => m.name), ["llama3.2:3b", "qwen3:8b"], "latest expiry first");
    assert.ok(Date.parse(String(both[0]!.expires_at)) > Date.parse("2300-01-01"));

    await postJson(emu, "/api/chat", {
      model: "qwen3:8b",
      messages: [{ role: "user", content: "hi" }],
      stream: false,
      keep_alive: 0,
    });
    assert.deepEqual(
      (await ps()).map((m) => m.name),
      ["llama3.2:3b"],
      "unloaded after the request",
    );
  });
});

Deno.test("/api/create derives a model with num_ctx 65536 that /api/show and /api/ps report", async () => {
  await withEmulator({
    models: [{ name: "qwen3:8b", contextLength: 131072 }, { name: "glm-5:cloud" }],
  }, async (emu) => {
    const res = await fetch(emu.url + "/api/create", {
      method: "POST",
      body: JSON.stringify({
        model: "qwen3-64k",
        from: "qwen3:8b",
        parameters: { num_ctx: 65536 },
      }),
    });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("content-type"), "application/x-ndjson");
    const statuses = (await res.text()).trim().split("\n").map((l) =>
      (JSON.parse(l) as Json).status
    );
    assert.match(String(statuses[0]), /^using existing layer sha256:[0-9a-f]{64}$/);
    assert.match(String(statuses.at(-3)), /^creating new layer sha256:[0-9a-f]{64}$/);
    assert.deepEqual(statuses.slice(-2), ["writing manifest", "success"]);

    const show = await postJson(emu, "/api/show", { model: "qwen3-64k" });
    assert.match(String(show.parameters), /^num_ctx {24}65536$/m);
    assert.match(String(show.modelfile), /^PARAMETER num_ctx 65536$/m);
    const info = show.model_info as Json;
    assert.equal(
      info[`${info["general.architecture"]}.context_length`],
      131072,
      "the base's maximum",
    );
    assert.equal((show.details as Json).parent_model, "qwen3:8b");
    assert.deepEqual(show.capabilities, ["completion", "tools"]);
    const tags = await (await fetch(emu.url + "/api/tags")).json() as { models: Json[] };
    assert.ok(tags.models.some((m) => m.name === "qwen3-64k:latest"));

    // Claude Code's /v1/messages cannot set num_ctx; the Modelfile's applies.
    await postJson(emu, "/v1/messages", {
      model: "qwen3-64k",
      max_tokens: 10,
      messages: [{ role: "user", content: "hi" }],
    });
    const ps = emu.loadedModels().models;
    assert.deepEqual(ps.map((m) => [m.name, m.context_length]), [["qwen3-64k:latest", 65536]]);

    const quiet = await postJson(emu, "/api/create", {
      model: "again",
      from: "qwen3-64k",
      stream: false,
    });
    assert.deepEqual(quiet, { status: "success" });
    assert.match(
      String((await postJson(emu, "/api/show", { model: "again" })).parameters),
      /^num_ctx {24}65536$/m,
    );
  });
});

Deno.test("/api/create errors: unknown base (pull fails offline), no from, bad name; cloud base", async () => {
  await withEmulator({
    models: [{ name: "qwen3:8b" }, { name: "glm-5:cloud", contextLength: 202752 }],
  }, async (emu) => {
    const create = (body: unknown) =>
      fetch(emu.url + "/api/create", { method: "POST", body: JSON.stringify(body) });
    const streamed = await create({ model: "x", from: "nope:1b" });
    assert.equal(streamed.status, 200, "the stream had started");
    assert.deepEqual((await streamed.text()).trim().split("\n").map((l) => JSON.parse(l)), [
      { status: "pulling manifest" },
      { error: "pull model manifest: file does not exist" },
    ]);
    const quiet = await create({ model: "x", from: "nope:1b", stream: false });
    assert.equal(quiet.status, 500);
    assert.deepEqual(await quiet.json(), { error: "pull model manifest: file does not exist" });
    const noFrom = await create({ model: "x" });
    assert.equal(noFrom.status, 400);
    assert.deepEqual(await noFrom.json(), { error: "neither 'from' or 'files' was specified" });
    const badName = await create({ model: "bad name!", from: "qwen3:8b" });
    assert.equal(badName.status, 400);
    assert.deepEqual(await badName.json(), { error: "invalid model name" });

    // Ollama does not refuse a cloud base: it writes a stub that points at ollama.com.
    const cloud = await create({
      model: "glm-big",
      from: "glm-5:cloud",
      parameters: { num_ctx: 65536 },
      stream: false,
    });
    assert.equal(cloud.status, 200);
    const show = await postJson(emu, "/api/show", { model: "glm-big" });
    assert.equal(show.remote_host, "https://ollama.com:443");
    assert.match(String(show.parameters), /^num_ctx {24}65536$/m);
    await postJson(emu, "/v1/chat/completions", {
      model: "glm-big",
      messages: [{ role: "user", content: "hi" }],
    });
    assert.deepEqual(emu.contextRecords.map((r) => [r.contextLength, r.source]), [[
      202752,
      "cloud",
    ]]);
  });
});

Deno.test("/api/show reports a model's Modelfile num_ctx in Ollama's padded format", async () => {
  await withEmulator({ models: [{ name: "qwen3:8b", numCtx: 8192 }] }, async (emu) => {
    const show = await postJson(emu, "/api/show", { model: "qwen3:8b" });
    assert.equal(
      show.parameters,
      [
        "num_ctx                        8192",
        "temperature                    0.6",
        "top_k                          20",
        "top_p                          0.95",
      ].join("\n"),
    );
  });
});
