import { withEmulator } from "./emulator.ts";
import assert from "node:assert/strict";
import {
  type ChatRequestView,
  type EmulatorOptions,
  type OllamaEmulator,
  startOllamaEmulator,
} from "./emulator.ts";

const RETIRED = "glm-4.7 was retired at 2026-07-15 00:00:00 -0700 PDT (ref: 0b5e6c1a)";
const MODELS: EmulatorOptions["models"] = [
  { name: "qwen3:8b" },
  { name: "deepseek-r1:8b", capabilities: ["completion", "tools", "thinking"] },
  { name: "gemma2:2b", capabilities: ["completion"] },
  { name: "glm-4.7:cloud", retiredText: RETIRED },
];

type Json = Record<string, unknown>;

function post(emu: OllamaEmulator, body: unknown, path = "/api/chat", signal?: AbortSignal) {
  return fetch(emu.url + path, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: typeof body === "string" ? body : JSON.stringify(body),
    signal,
  });
}

const BASH_TOOL = {
  type: "function",
  function: {
    name: "Bash",
    description: "Run a shell command",
    parameters: { type: "object", properties: { command: { type: "string" } } },
  },
};

function chat(content: string, extra: Json = {}): Json {
  return { model: "qwen3:8b", messages: [{ role: "user", content }], ...extra };
}

/** Parses NDJSON strictly: one JSON object a line, every line ends in "\n". */
async function ndjson(res: Response): Promise<Json[]> {
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("content-type"), "application/x-ndjson");
  const text = await res.text();
  assert.ok(text.endsWith("\n"), "every object ends its line");
  return text.slice(0, -1).split("\n").map((line) => JSON.parse(line) as Json);
}

async function errorOf(res: Response, status: number): Promise<unknown> {
  assert.equal(res.status, status);
  assert.equal(res.headers.get("content-type"), "application/json; charset=utf-8");
  return await res.json();
}

const METRICS = [
  "total_duration",
  "load_duration",
  "prompt_eval_count",
  "prompt_eval_duration",
  "eval_count",
  "eval_duration",
];

function assertFinal(o: Json, doneReason = "stop"): void {
  assert.deepEqual(Object.keys(o), [
    "model",
    "created_at",
    "message",
    "done",
    "done_reason",
    ...METRICS,
  ]);
  assert.equal(o.done, true);
  assert.equal(o.done_reason, doneReason);
  for (const k of METRICS) assert.ok(Number.isInteger(o[k]) && Number(o[k]) > 0, k);
  // Nanoseconds: the whole exceeds each part.
  assert.ok(Number(o.total_duration) > Number(o.eval_duration) + Number(o.load_duration));
}

Deno.test("/api/chat streams NDJSON: text over several objects, then the final metrics", async () => {
  await withEmulator({ models: MODELS }, async (emu) => {
    const prompt = "tell me something long enough to be split in pieces";
    const objects = await ndjson(await post(emu, chat(prompt)));
    assert.ok(objects.length >= 3, `several objects: ${objects.length}`);
    const final = objects.pop()!;
    for (const o of objects) {
      assert.deepEqual(Object.keys(o), ["model", "created_at", "message", "done"]);
      assert.equal(o.model, "qwen3:8b");
      assert.equal(o.done, false);
      assert.ok(!Number.isNaN(Date.parse(String(o.created_at))));
      const m = o.message as Json;
      assert.equal(m.role, "assistant");
      assert.ok(!("tool_calls" in m) && !("thinking" in m));
    }
    assert.equal(objects.map((o) => (o.message as Json).content).join(""), `echo: ${prompt}`);
    assertFinal(final);
    assert.deepEqual(final.message, { role: "assistant", content: "" });
    assert.equal(
      final.prompt_eval_count,
      Math.ceil(JSON.stringify(chat(prompt).messages).length / 4),
    );
  });
});

Deno.test("/api/chat with stream false answers one JSON object", async () => {
  await withEmulator({ models: MODELS }, async (emu) => {
    const res = await post(emu, chat("@reply all done", { stream: false }));
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("content-type"), "application/json; charset=utf-8");
    const body = await res.json() as Json;
    assertFinal(body);
    assert.deepEqual(body.message, { role: "assistant", content: "all done" });
  });
});

Deno.test("/api/chat tool calls: whole, arguments as objects, ids from 0.12.10 on", async () => {
  const args = { command: "printf '%s' \"a b\" && echo ü", timeout: 5 };
  for (const [version, withIds] of [["0.33.0", true], ["0.12.3", false]] as const) {
    await withEmulator({ models: MODELS, version }, async (emu) => {
      const prompt = `go\n@tool Bash ${JSON.stringify(args)}\n@bash echo two`;
      const objects = await ndjson(await post(emu, chat(prompt, { tools: [BASH_TOOL] })));
      const final = objects.pop()!;
      assertFinal(final);
      assert.equal(objects.length, 1, "one object for the one call");
      const message = objects[0]!.message as Json;
      assert.equal(message.content, "");
      const calls = message.tool_calls as Json[];
      assert.equal(calls.length, 1);
      if (withIds) {
        assert.deepEqual(Object.keys(calls[0]!), ["id", "function"]);
        assert.match(String(calls[0]!.id), /^call_[a-z0-9]{8}$/);
      } else assert.deepEqual(Object.keys(calls[0]!), ["function"]);
      assert.deepEqual(calls[0]!.function, { index: 0, name: "Bash", arguments: args });

      // The result goes back in the native shape, without an id, and counts as a round trip.
      const round = [
        { role: "user", content: prompt },
        {
          role: "assistant",
          content: "",
          tool_calls: [{ function: { name: "Bash", arguments: args } }],
        },
        { role: "tool", content: "a b ü", tool_name: "Bash" },
      ];
      const second = await post(emu, {
        model: "qwen3:8b",
        messages: round,
        tools: [BASH_TOOL],
        stream: false,
      });
      const secondCalls = ((await second.json() as Json).message as Json).tool_calls as Json[];
      assert.deepEqual(secondCalls.map((c) => c.function), [
        { index: 0, name: "Bash", arguments: { command: "echo two" } },
      ]);
      const third = [
        ...round,
        {
          role: "assistant",
          content: "",
          tool_calls: [{ function: { name: "Bash", arguments: { command: "echo two" } } }],
        },
        { role: "tool", content: "two", tool_name: "Bash" },
      ];
      const done = await (await post(emu, {
        model: "qwen3:8b",
        messages: third,
        tools: [BASH_TOOL],
        stream: false,
      })).json() as Json;
      assert.deepEqual(done.message, { role: "assistant", content: "done: two" });
    });
  }
});

Deno.test("/api/chat escapes <, > and & as Go does, so text arrives as \\u003c on the wire", async () => {
  await withEmulator({
    models: MODELS,
    chatScript: () => ({ kind: "text", text: "<tool_call> & </b>" }),
  }, async (emu) => {
    const raw = await (await post(emu, chat("x", { stream: false }))).text();
    assert.ok(raw.includes("\\u003ctool_call\\u003e \\u0026 \\u003c/b\\u003e"), raw);
    assert.ok(!raw.includes("<"));
    assert.equal(((JSON.parse(raw) as Json).message as Json).content, "<tool_call> & </b>");
  });
});

Deno.test("/api/chat thinking comes before content, only from a thinking model", async () => {
  const script = () => ({
    kind: "text" as const,
    text: "The answer.",
    thinking: "Hmm, let me see.",
  });
  await withEmulator({ models: MODELS, chatScript: script }, async (emu) => {
    const objects = await ndjson(await post(emu, chat("x", { model: "deepseek-r1:8b" })));
    objects.pop();
    const messages = objects.map((o) => o.message as Json);
    const firstContent = messages.findIndex((m) => m.content !== "");
    assert.ok(firstContent > 0, "thinking first");
    assert.equal(
      messages.slice(0, firstContent).map((m) => m.thinking).join(""),
      "Hmm, let me see.",
    );
    assert.equal(messages.slice(firstContent).map((m) => m.content).join(""), "The answer.");

    // A thinking model thinks unless told not to; think:false turns it off.
    const off =
      await (await post(emu, chat("x", { model: "deepseek-r1:8b", think: false, stream: false })))
        .json() as Json;
    assert.deepEqual(off.message, { role: "assistant", content: "The answer." });
    const on =
      await (await post(emu, chat("x", { model: "deepseek-r1:8b", think: "high", stream: false })))
        .json() as Json;
    assert.deepEqual(on.message, {
      role: "assistant",
      content: "The answer.",
      thinking: "Hmm, let me see.",
    });
    // A model without the capability never sends thinking (asking it to think is a 400).
    const plain = await (await post(emu, chat("x", { stream: false }))).json() as Json;
    assert.deepEqual(plain.message, { role: "assistant", content: "The answer." });
  });
});

Deno.test("/api/chat errors in Ollama's native shape and statuses", async () => {
  await withEmulator({ models: MODELS }, async (emu) => {
    assert.deepEqual(await errorOf(await post(emu, chat("x", { model: "nope:1b" })), 404), {
      error: "model 'nope:1b' not found",
    });
    assert.deepEqual(
      await errorOf(await post(emu, chat("x", { model: "gemma2:2b", tools: [BASH_TOOL] })), 400),
      { error: "registry.ollama.ai/library/gemma2:2b does not support tools" },
    );
    assert.deepEqual(await errorOf(await post(emu, chat("x", { think: true })), 400), {
      error: '"qwen3:8b" does not support thinking',
    });
    assert.deepEqual(await errorOf(await post(emu, chat("x", { think: "loud" })), 400), {
      error: 'invalid think value: "loud" (must be "high", "medium", "low", "max", true, or false)',
    });
    assert.deepEqual(await errorOf(await post(emu, chat("x", { keep_alive: "10" })), 400), {
      error: 'time: missing unit in duration "10"',
    });
    assert.deepEqual(await errorOf(await post(emu, { messages: [] }), 400), {
      error: "model is required",
    });
    assert.deepEqual(await errorOf(await post(emu, ""), 400), { error: "missing request body" });
    // A retired cloud model's upstream error is relayed as Go's api.StatusError.
    assert.deepEqual(await errorOf(await post(emu, chat("x", { model: "glm-4.7:cloud" })), 410), {
      StatusCode: 410,
      Status: "410 Gone",
      error: RETIRED,
    });
    // Scripted failures keep the native shape; @fail counts per conversation.
    const busy = await post(emu, chat("@fail 503 1\n@reply ok"));
    assert.equal(busy.headers.get("retry-after"), "0");
    assert.deepEqual(await errorOf(busy, 503), {
      error: "server busy, please try again.  maximum pending requests exceeded",
    });
    const ok = await (await post(emu, chat("@fail 503 1\n@reply ok", { stream: false })))
      .json() as Json;
    assert.equal((ok.message as Json).content, "ok");
    const wrongMethod = await fetch(emu.url + "/api/chat");
    assert.equal(wrongMethod.status, 404);
    assert.equal(await wrongMethod.text(), "404 page not found");
  });
});

Deno.test("/api/chat: num_predict cuts the reply with done_reason length", async () => {
  await withEmulator({ models: MODELS }, async (emu) => {
    const body = await (await post(
      emu,
      chat("@reply " + "word ".repeat(40), { stream: false, options: { num_predict: 2 } }),
    )).json() as Json;
    assert.equal(body.done_reason, "length");
    assert.equal((body.message as Json).content, "word wor", "2 tokens of 4 chars");
    assert.equal(body.eval_count, 2);
  });
});

Deno.test("the chat script sees native fields: api, options, think, format, tool_name results", async () => {
  const seen: ChatRequestView[] = [];
  const chatScript = (v: ChatRequestView) => {
    seen.push(v);
    return undefined;
  };
  await withEmulator({ models: MODELS, chatScript }, async (emu) => {
    const messages = [
      { role: "system", content: "be brief" },
      { role: "user", content: "first" },
      {
        role: "assistant",
        content: "",
        tool_calls: [{ function: { name: "Read", arguments: {} } }],
      },
      { role: "tool", content: "file text", tool_name: "Read" },
    ];
    const res = await post(emu, {
      model: "deepseek-r1:8b",
      messages,
      think: "low",
      format: "json",
      options: { num_ctx: 8192, temperature: 0 },
      keep_alive: "1m",
    });
    await res.body?.cancel();
  });
  assert.equal(seen.length, 1);
  const v = seen[0]!;
  assert.equal(v.api, "native");
  assert.equal(v.stream, true);
  assert.equal(v.think, "low");
  assert.equal(v.format, "json");
  assert.deepEqual(v.options, { num_ctx: 8192, temperature: 0 });
  assert.equal(v.firstUserText, "first");
  assert.deepEqual(v.toolResults, [{ toolCallId: "", name: "Read", content: "file text" }]);
  assert.equal(v.context?.contextLength, 8192);
  assert.equal(v.context?.source, "request");
});

Deno.test("/api/chat with no messages loads or unloads the model", async () => {
  await withEmulator({ models: MODELS }, async (emu) => {
    const load =
      await (await post(emu, { model: "qwen3:8b", messages: [], options: { num_ctx: 16384 } }))
        .json() as Json;
    assert.deepEqual(Object.keys(load), ["model", "created_at", "message", "done", "done_reason"]);
    assert.equal(load.done_reason, "load");
    const ps = emu.loadedModels().models;
    assert.deepEqual(ps.map((m) => [m.name, m.context_length]), [["qwen3:8b", 16384]]);
    const unload = await (await post(emu, { model: "qwen3:8b", messages: [], keep_alive: 0 }))
      .json() as Json;
    assert.equal(unload.done_reason, "unload");
    assert.deepEqual(emu.loadedModels().models, []);
  });
});

Deno.test("/api/generate answers prompts in `response` and loads with an empty prompt", async () => {
  await withEmulator({ models: MODELS }, async (emu) => {
    const objects = await ndjson(
      await post(emu, { model: "qwen3:8b", prompt: "@reply generated" }, "/api/generate"),
    );
    const final = objects.pop()!;
    assert.equal(objects.map((o) => o.response).join(""), "generated");
    assert.deepEqual(Object.keys(objects[0]!), ["model", "created_at", "response", "done"]);
    assert.equal(final.done, true);
    assert.equal(final.response, "");
    assert.equal(final.done_reason, "stop");
    const load =
      await (await post(emu, { model: "qwen3:8b", options: { num_ctx: 2048 } }, "/api/generate"))
        .json() as Json;
    assert.deepEqual(Object.keys(load), ["model", "created_at", "response", "done", "done_reason"]);
    assert.equal(load.done_reason, "load");
    assert.equal(emu.loadedModels().models[0]?.context_length, 2048);
  });
});

Deno.test("close() answers a hanging /api/chat with 503 and cuts a slow stream short", async () => {
  const emu = await startOllamaEmulator({
    chatScript: (v) =>
      v.firstUserText === "slow"
        ? { kind: "text", text: "abcdef", chunkChars: 1, chunkDelayMs: 60_000 }
        : { kind: "hang" },
  });
  const hanging = post(emu, chat("hang"));
  const slow = await post(emu, chat("slow"));
  const reading = slow.text();
  const deadline = Date.now() + 5000;
  while (emu.nativeChatRequests().length < 2 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 10));
  }
  await emu.close();
  assert.deepEqual(await errorOf(await hanging, 503), {
    error: "ollama emulator closed while the request was hanging",
  });
  const lines = (await reading).trim().split("\n");
  assert.equal(lines.length, 1, "no final object after the cut");
  assert.equal(((JSON.parse(lines[0]!) as Json).message as Json).content, "a");
});

Deno.test("a delay with `until` answers once the promise settles, or 503 on close", async () => {
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  const emu = await startOllamaEmulator({
    chatScript: (v) => ({
      kind: "delay",
      ms: 0,
      until: v.firstUserText === "gated" ? gate : new Promise(() => {}),
      then: { kind: "text", text: `after ${v.firstUserText}` },
    }),
  });
  try {
    let answered = false;
    const gated = post(emu, { ...chat("gated"), stream: false }).then((r) => {
      answered = true;
      return r.json();
    });
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(answered, false, "answered before the promise settled");
    open();
    assert.equal(((await gated) as { message: Json }).message.content, "after gated");
    const never = post(emu, chat("never"));
    const deadline = Date.now() + 5000;
    while (emu.nativeChatRequests().length < 2 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 10));
    }
    await emu.close();
    assert.deepEqual(await errorOf(await never, 503), {
      error: "ollama emulator closed while the reply was delayed",
    });
  } finally {
    await emu.close();
  }
});
