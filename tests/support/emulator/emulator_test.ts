import { withEmulator } from "./emulator.ts";
import assert from "node:assert/strict";
import { CLAUDE_BIN } from "../harness.ts";
import { withStandaloneEmulator } from "./standalone.ts";
import { join } from "node:path";
import {
  type EmulatorOptions,
  type MessagesRequestView,
  type OllamaEmulator,
  startOllamaEmulator,
} from "./emulator.ts";

const MODELS: EmulatorOptions["models"] = [
  { name: "qwen3:8b", contextLength: 40960 },
  { name: "llama3" },
  { name: "gemma2:2b", capabilities: ["completion"] },
  { name: "glm-5:cloud" },
  { name: "qwen3-next:80b-cloud", contextLength: 262144 },
  {
    name: "glm-4.7:cloud",
    retiredText: "glm-4.7 was retired at 2026-07-15 00:00:00 -0700 PDT (ref: 0b5e6c1a)",
  },
];

function post(emu: OllamaEmulator, path: string, body: unknown, signal?: AbortSignal) {
  return fetch(emu.url + path, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: typeof body === "string" ? body : JSON.stringify(body),
    signal,
  });
}

async function getJson(res: Response): Promise<Record<string, unknown>> {
  assert.match(res.headers.get("content-type") ?? "", /^application\/json/);
  const body: unknown = await res.json();
  assert.ok(typeof body === "object" && body !== null && !Array.isArray(body));
  return body as Record<string, unknown>;
}

function messagesBody(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    model: "qwen3:8b",
    max_tokens: 1024,
    messages: [{ role: "user", content: "hi there" }],
    ...extra,
  };
}

const BASH_TOOL = {
  name: "Bash",
  description: "Run a shell command",
  input_schema: { type: "object", properties: { command: { type: "string" } } },
};

interface SseFrame {
  event: string;
  data: Record<string, unknown>;
}

function parseSse(text: string): SseFrame[] {
  assert.ok(text.endsWith("\n\n"), "an SSE stream ends with a blank line");
  return text.slice(0, -2).split("\n\n").map((chunk) => {
    const lines = chunk.split("\n");
    assert.equal(lines.length, 2, `frame is one event line and one data line: ${chunk}`);
    const [eventLine = "", dataLine = ""] = lines;
    assert.ok(eventLine.startsWith("event: "), eventLine);
    assert.ok(dataLine.startsWith("data: "), dataLine);
    const event = eventLine.slice("event: ".length);
    const data = JSON.parse(dataLine.slice("data: ".length)) as Record<string, unknown>;
    assert.equal(data.type, event, "data.type repeats the event name");
    return { event, data };
  });
}

function assertAnthropicError(
  body: Record<string, unknown>,
  type: string,
  message: string,
): void {
  assert.equal(body.type, "error");
  assert.deepEqual(body.error, { type, message });
  assert.match(String(body.request_id), /^req_\w+$/);
  assert.deepEqual(Object.keys(body).sort(), ["error", "request_id", "type"]);
}

async function waitUntil(cond: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

// --- small endpoints --------------------------------------------------------------------------

Deno.test("root and version answer GET and HEAD like Ollama", async () => {
  await withEmulator({ models: MODELS, version: "0.31.2" }, async (emu) => {
    const root = await fetch(emu.url + "/");
    assert.equal(root.status, 200);
    assert.equal(await root.text(), "Ollama is running");

    const rootHead = await fetch(emu.url + "/", { method: "HEAD" });
    assert.equal(rootHead.status, 200);
    assert.equal(await rootHead.text(), "");

    const version = await fetch(emu.url + "/api/version");
    assert.equal(version.status, 200);
    assert.deepEqual(await getJson(version), { version: "0.31.2" });

    const versionHead = await fetch(emu.url + "/api/version", { method: "HEAD" });
    assert.equal(versionHead.status, 200);
    assert.equal(await versionHead.text(), "");
  });
  const emu = await startOllamaEmulator();
  try {
    assert.match(emu.url, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.ok(emu.port > 0);
    assert.deepEqual(await getJson(await fetch(emu.url + "/api/version")), { version: "0.33.0" });
  } finally {
    await emu.close();
  }
});

Deno.test("/api/tags lists local models and cloud stubs with their fields", async () => {
  await withEmulator({ models: MODELS }, async (emu) => {
    const res = await fetch(emu.url + "/api/tags");
    assert.equal(res.status, 200);
    const body = await getJson(res);
    const models = body.models as Record<string, unknown>[];
    assert.deepEqual(models.map((m) => m.name), [
      "qwen3:8b",
      "llama3:latest",
      "gemma2:2b",
      "glm-5:cloud",
      "qwen3-next:80b-cloud",
      "glm-4.7:cloud",
    ]);

    const local = models[0]!;
    assert.equal(local.model, "qwen3:8b");
    assert.ok(!Number.isNaN(Date.parse(String(local.modified_at))));
    assert.match(
      String(local.modified_at),
      /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/,
    );
    assert.ok(Number(local.size) > 1_000_000);
    assert.match(String(local.digest), /^[0-9a-f]{64}$/);
    assert.deepEqual(local.capabilities, ["completion", "tools"]);
    assert.ok(!("remote_host" in local) && !("remote_model" in local));
    const localDetails = local.details as Record<string, unknown>;
    assert.deepEqual(Object.keys(localDetails).sort(), [
      "context_length",
      "families",
      "family",
      "format",
      "parameter_size",
      "parent_model",
      "quantization_level",
    ]);
    assert.equal(localDetails.context_length, 40960);
    assert.equal(localDetails.format, "gguf");
    assert.equal(localDetails.parameter_size, "8B");
    assert.ok(Array.isArray(localDetails.families));

    assert.deepEqual(models[2]!.capabilities, ["completion"]);

    const cloud = models[4]!;
    assert.equal(cloud.model, "qwen3-next:80b-cloud");
    assert.equal(cloud.remote_model, "qwen3-next:80b");
    assert.equal(cloud.remote_host, "https://ollama.com:443");
    assert.ok(Number(cloud.size) >= 300 && Number(cloud.size) < 400, `stub size ${cloud.size}`);
    assert.deepEqual(cloud.details, {
      parent_model: "",
      format: "",
      family: "",
      families: null,
      parameter_size: "",
      quantization_level: "",
      context_length: 262144,
    });
    assert.equal(models[3]!.remote_model, "glm-5");

    const head = await fetch(emu.url + "/api/tags", { method: "HEAD" });
    assert.equal(head.status, 200);
    assert.equal(await head.text(), "");
  });
});

Deno.test("/api/show returns details, model_info and remote fields; 404 for unknown", async () => {
  await withEmulator({ models: MODELS }, async (emu) => {
    const local = await getJson(await post(emu, "/api/show", { model: "qwen3:8b" }));
    assert.deepEqual(local.capabilities, ["completion", "tools"]);
    const info = local.model_info as Record<string, unknown>;
    const arch = info["general.architecture"];
    assert.equal(typeof arch, "string");
    assert.equal(info[`${arch}.context_length`], 40960);
    assert.equal((local.details as Record<string, unknown>).format, "gguf");
    assert.ok(!Number.isNaN(Date.parse(String(local.modified_at))));
    assert.ok(!("remote_host" in local));

    // The deprecated `name` field and a missing tag both resolve as in Ollama.
    const byName = await post(emu, "/api/show", { name: "llama3" });
    assert.equal(byName.status, 200);
    assert.deepEqual((await getJson(byName)).capabilities, ["completion", "tools"]);
    const tagged = await post(emu, "/api/show", { model: "llama3:latest" });
    assert.equal(tagged.status, 200);
    await tagged.body?.cancel();

    const cloud = await getJson(await post(emu, "/api/show", { model: "glm-5:cloud" }));
    assert.equal(cloud.remote_model, "glm-5");
    assert.equal(cloud.remote_host, "https://ollama.com:443");
    const cloudInfo = cloud.model_info as Record<string, unknown>;
    assert.equal(cloudInfo[`${cloudInfo["general.architecture"]}.context_length`], 32768);

    const missing = await post(emu, "/api/show", { model: "nope:1b" });
    assert.equal(missing.status, 404);
    assert.deepEqual(await getJson(missing), { error: "model 'nope:1b' not found" });

    const noModel = await post(emu, "/api/show", {});
    assert.equal(noModel.status, 400);
    assert.deepEqual(await getJson(noModel), { error: "model is required" });

    const wrongMethod = await fetch(emu.url + "/api/show");
    assert.equal(wrongMethod.status, 404);
    assert.equal(await wrongMethod.text(), "404 page not found");
  });
});

Deno.test("/v1/models lists every model in the OpenAI shape", async () => {
  await withEmulator(
    { models: [{ name: "qwen3:8b" }, { name: "glm-5:cloud" }] },
    async (emu) => {
      const body = await getJson(await fetch(emu.url + "/v1/models"));
      assert.equal(body.object, "list");
      const data = body.data as Record<string, unknown>[];
      assert.deepEqual(data.map((d) => [d.id, d.object, d.owned_by]), [
        ["qwen3:8b", "model", "library"],
        ["glm-5:cloud", "model", "library"],
      ]);
      for (const d of data) {
        assert.ok(Number.isInteger(d.created));
        assert.ok(Math.abs(Number(d.created) - Date.now() / 1000) < 3600);
      }
    },
  );
});

Deno.test("setModels replaces the model list", async () => {
  await withEmulator({ models: MODELS }, async (emu) => {
    emu.setModels([{ name: "mistral:7b", contextLength: 8192 }]);
    const body = await getJson(await fetch(emu.url + "/api/tags"));
    const models = body.models as Record<string, unknown>[];
    assert.deepEqual(models.map((m) => m.name), ["mistral:7b"]);
    const gone = await post(emu, "/v1/messages", messagesBody());
    assert.equal(gone.status, 404);
    await gone.body?.cancel();
  });
});

Deno.test("count_tokens and unknown routes get gin's plain-text 404", async () => {
  await withEmulator({ models: MODELS }, async (emu) => {
    for (
      const res of [
        await post(emu, "/v1/messages/count_tokens?beta=true", messagesBody()),
        await fetch(emu.url + "/no/such/route"),
        await fetch(emu.url + "/v1/messages"),
      ]
    ) {
      assert.equal(res.status, 404);
      assert.match(res.headers.get("content-type") ?? "", /^text\/plain/);
      assert.equal(await res.text(), "404 page not found");
    }
  });
});

// --- /v1/messages errors ----------------------------------------------------------------------

Deno.test("/v1/messages validation errors use the Anthropic error shape", async () => {
  await withEmulator({ models: MODELS }, async (emu) => {
    const cases: [Record<string, unknown>, string][] = [
      [{ max_tokens: 10, messages: [{ role: "user", content: "x" }] }, "model is required"],
      [messagesBody({ max_tokens: 0 }), "max_tokens is required and must be positive"],
      [messagesBody({ max_tokens: undefined }), "max_tokens is required and must be positive"],
      [messagesBody({ messages: [] }), "messages is required"],
      [{ model: "qwen3:8b", max_tokens: 10 }, "messages is required"],
    ];
    for (const [body, message] of cases) {
      const res = await post(emu, "/v1/messages?beta=true", body);
      assert.equal(res.status, 400, message);
      assertAnthropicError(await getJson(res), "invalid_request_error", message);
    }
  });
});

Deno.test("/v1/messages: unknown 404, retired 410 verbatim, tools unsupported 400", async () => {
  await withEmulator({ models: MODELS }, async (emu) => {
    const unknown = await post(emu, "/v1/messages", messagesBody({ model: "nope:1b" }));
    assert.equal(unknown.status, 404);
    assertAnthropicError(await getJson(unknown), "not_found_error", "model 'nope:1b' not found");

    const retired = await post(emu, "/v1/messages", messagesBody({ model: "glm-4.7:cloud" }));
    assert.equal(retired.status, 410);
    assert.deepEqual(await getJson(retired), {
      error: "glm-4.7 was retired at 2026-07-15 00:00:00 -0700 PDT (ref: 0b5e6c1a)",
    });

    const noTools = await post(
      emu,
      "/v1/messages",
      messagesBody({ model: "gemma2:2b", tools: [BASH_TOOL] }),
    );
    assert.equal(noTools.status, 400);
    assertAnthropicError(
      await getJson(noTools),
      "invalid_request_error",
      "registry.ollama.ai/library/gemma2:2b does not support tools",
    );

    // Without tools the same model answers normally.
    const plain = await post(emu, "/v1/messages", messagesBody({ model: "gemma2:2b" }));
    assert.equal(plain.status, 200);
    assert.equal((await getJson(plain)).stop_reason, "end_turn");

    const badJson = await post(emu, "/v1/messages", "{not json");
    assert.equal(badJson.status, 400);
    assert.equal(
      ((await getJson(badJson)).error as Record<string, unknown>).type,
      "invalid_request_error",
    );
  });
});

Deno.test("script error replies map status to Anthropic error types", async () => {
  const statuses: [number, string][] = [
    [401, "authentication_error"],
    [403, "permission_error"],
    [429, "rate_limit_error"],
    [500, "api_error"],
    [503, "overloaded_error"],
    [529, "overloaded_error"],
  ];
  await withEmulator({ models: MODELS }, async (emu) => {
    for (const [status, type] of statuses) {
      emu.setScript(() => ({ kind: "error", status, message: `boom ${status}` }));
      const res = await post(emu, "/v1/messages", messagesBody({ stream: true }));
      assert.equal(res.status, status);
      assertAnthropicError(await getJson(res), type, `boom ${status}`);
    }
  });
});

// --- /v1/messages replies ---------------------------------------------------------------------

Deno.test("non-streaming reply is an Anthropic Message object", async () => {
  await withEmulator({ models: MODELS }, async (emu) => {
    const req = messagesBody({ system: [{ type: "text", text: "be brief" }] });
    const res = await post(emu, "/v1/messages?beta=true", req);
    assert.equal(res.status, 200);
    const msg = await getJson(res);
    assert.match(String(msg.id), /^msg_[0-9a-f]{24}$/);
    assert.equal(msg.type, "message");
    assert.equal(msg.role, "assistant");
    assert.equal(msg.model, "qwen3:8b");
    assert.deepEqual(msg.content, [{ type: "text", text: "echo: hi there" }]);
    assert.equal(msg.stop_reason, "end_turn");
    assert.equal(msg.stop_sequence, null);
    const usage = msg.usage as Record<string, number>;
    assert.equal(usage.input_tokens, Math.floor(JSON.stringify(req).length / 4));
    assert.ok(usage.output_tokens! > 0);
  });
});

Deno.test("streaming text reply has exactly Ollama's event sequence", async () => {
  const text = "The quick brown fox jumps over the lazy dog.";
  await withEmulator({ models: MODELS, script: () => ({ kind: "text", text }) }, async (emu) => {
    const req = messagesBody({ stream: true });
    const res = await post(emu, "/v1/messages?beta=true", req);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("content-type"), "text/event-stream");
    const frames = parseSse(await res.text());
    const deltas = frames.filter((f) => f.event === "content_block_delta");
    assert.ok(deltas.length >= 2, "text arrives in several deltas");
    assert.deepEqual(frames.map((f) => f.event), [
      "message_start",
      "content_block_start",
      ...deltas.map(() => "content_block_delta"),
      "content_block_stop",
      "message_delta",
      "message_stop",
    ]);

    const start = frames[0]!.data.message as Record<string, unknown>;
    assert.match(String(start.id), /^msg_[0-9a-f]{24}$/);
    assert.deepEqual(start.content, []);
    assert.equal(start.stop_reason, null);
    assert.deepEqual(start.usage, {
      input_tokens: Math.floor(JSON.stringify(req).length / 4),
      output_tokens: 0,
    });
    assert.deepEqual(frames[1]!.data, {
      type: "content_block_start",
      index: 0,
      content_block: { type: "text", text: "" },
    });
    const joined = deltas.map((f) => {
      assert.equal(f.data.index, 0);
      const delta = f.data.delta as Record<string, unknown>;
      assert.equal(delta.type, "text_delta");
      return String(delta.text);
    }).join("");
    assert.equal(joined, text);
    const messageDelta = frames.at(-2)!.data;
    assert.deepEqual(messageDelta.delta, { stop_reason: "end_turn", stop_sequence: null });
    const usage = messageDelta.usage as Record<string, number>;
    assert.equal(usage.input_tokens, Math.floor(JSON.stringify(req).length / 4));
    assert.ok(usage.output_tokens! > 0);
  });
});

Deno.test("streaming tool_use sends the whole input in one input_json_delta", async () => {
  const input = { command: "ls -la /tmp", description: "list", nested: { a: [1, 2, "ü"] } };
  const seen: MessagesRequestView[] = [];
  const script = (view: MessagesRequestView) => {
    seen.push(view);
    return { kind: "tool_use" as const, name: "Bash", input, text: "Let me look." };
  };
  await withEmulator({ models: MODELS, script }, async (emu) => {
    const res = await post(emu, "/v1/messages", messagesBody({ stream: true, tools: [BASH_TOOL] }));
    assert.equal(res.status, 200);
    const frames = parseSse(await res.text());
    assert.deepEqual(frames.map((f) => f.event).filter((e) => e !== "content_block_delta"), [
      "message_start",
      "content_block_start",
      "content_block_stop",
      "content_block_start",
      "content_block_stop",
      "message_delta",
      "message_stop",
    ]);
    const toolStartAt = frames.findIndex((f) =>
      f.event === "content_block_start" &&
      (f.data.content_block as Record<string, unknown>).type === "tool_use"
    );
    const toolStart = frames[toolStartAt]!.data;
    assert.equal(toolStart.index, 1);
    const block = toolStart.content_block as Record<string, unknown>;
    assert.match(String(block.id), /^call_[a-z0-9]{8}$/);
    assert.equal(block.name, "Bash");
    assert.deepEqual(block.input, {});
    // Exactly one delta, then the stop, for the tool block.
    assert.equal(frames[toolStartAt + 1]!.event, "content_block_delta");
    assert.equal(frames[toolStartAt + 2]!.event, "content_block_stop");
    assert.equal(frames[toolStartAt + 2]!.data.index, 1);
    const delta = frames[toolStartAt + 1]!.data.delta as Record<string, unknown>;
    assert.equal(delta.type, "input_json_delta");
    assert.deepEqual(JSON.parse(String(delta.partial_json)), input);
    const messageDelta = frames.at(-2)!.data.delta as Record<string, unknown>;
    assert.equal(messageDelta.stop_reason, "tool_use");
    assert.ok(!frames.some((f) => f.event === "ping"));

    // Without text there is no text block at all.
    emu.setScript(() => ({ kind: "tool_use", name: "Read", input: { file_path: "/x" } }));
    const bare = parseSse(
      await (await post(emu, "/v1/messages", messagesBody({ stream: true, tools: [BASH_TOOL] })))
        .text(),
    );
    assert.deepEqual(bare.map((f) => f.event), [
      "message_start",
      "content_block_start",
      "content_block_delta",
      "content_block_stop",
      "message_delta",
      "message_stop",
    ]);
    assert.equal(bare[1]!.data.index, 0);
  });
  assert.equal(seen.length, 1);
  assert.equal(seen[0]!.model, "qwen3:8b");
  assert.equal(seen[0]!.tools.length, 1);
  assert.equal(seen[0]!.firstUserText, "hi there");
  assert.equal(seen[0]!.headers["content-type"], "application/json");
});

Deno.test("a script returning undefined falls back to the default behaviour", async () => {
  await withEmulator({ models: MODELS, script: () => undefined }, async (emu) => {
    const msg = await getJson(await post(emu, "/v1/messages", messagesBody()));
    assert.deepEqual(msg.content, [{ type: "text", text: "echo: hi there" }]);
  });
});

// --- prompt directives ------------------------------------------------------------------------

Deno.test("@bash directives drive tool round trips, then the tool result is echoed", async () => {
  await withEmulator({ models: MODELS }, async (emu) => {
    // Shaped like Claude Code's first message: a reminder block, then the prompt.
    const user = {
      role: "user",
      content: [
        { type: "text", text: "<system-reminder>\n@bash rm -rf /\n</system-reminder>" },
        { type: "text", text: "please\n@bash echo one\n  @bash echo two\n" },
      ],
    };
    const base = { tools: [BASH_TOOL], stream: false };
    const first = await getJson(
      await post(emu, "/v1/messages", messagesBody({ ...base, messages: [user] })),
    );
    assert.equal(first.stop_reason, "tool_use");
    const [call1] = first.content as Record<string, unknown>[];
    assert.equal(call1!.type, "tool_use");
    assert.equal(call1!.name, "Bash");
    assert.deepEqual(call1!.input, {
      command: "echo one",
      description: "emulator scripted command",
    });

    const round1 = [
      user,
      { role: "assistant", content: first.content },
      {
        role: "user",
        content: [{ type: "tool_result", tool_use_id: call1!.id, content: "one\n" }],
      },
    ];
    const second = await getJson(
      await post(emu, "/v1/messages", messagesBody({ ...base, messages: round1 })),
    );
    const [call2] = second.content as Record<string, unknown>[];
    assert.deepEqual(call2!.input, {
      command: "echo two",
      description: "emulator scripted command",
    });

    const round2 = [
      ...round1,
      { role: "assistant", content: second.content },
      {
        role: "user",
        content: [{
          type: "tool_result",
          tool_use_id: call2!.id,
          content: [{ type: "text", text: "two" }],
        }],
      },
    ];
    const third = await getJson(
      await post(emu, "/v1/messages", messagesBody({ ...base, messages: round2 })),
    );
    assert.equal(third.stop_reason, "end_turn");
    assert.deepEqual(third.content, [{ type: "text", text: "tool result: two" }]);

    // Requests without tools (side queries) only ever get text.
    const side = await getJson(await post(emu, "/v1/messages", messagesBody({ messages: [user] })));
    assert.deepEqual(side.content, [{ type: "text", text: "echo: please" }]);

    assert.equal(emu.messageRequests().length, 4);
  });
});

Deno.test("@reply sets the final answer and @delay delays it", async () => {
  await withEmulator({ models: MODELS }, async (emu) => {
    const started = Date.now();
    const msg = await getJson(
      await post(
        emu,
        "/v1/messages",
        messagesBody({ messages: [{ role: "user", content: "@delay 150\n@reply all done" }] }),
      ),
    );
    assert.ok(Date.now() - started >= 140, "the reply was delayed");
    assert.deepEqual(msg.content, [{ type: "text", text: "all done" }]);
  });
});

Deno.test("streaming @delay flushes message_start first; mid-stream cancel is clean", async () => {
  await withEmulator({ models: MODELS }, async (emu) => {
    const res = await post(
      emu,
      "/v1/messages",
      messagesBody({ stream: true, messages: [{ role: "user", content: "@delay 60000" }] }),
    );
    assert.equal(res.status, 200);
    const reader = res.body!.getReader();
    const first = await reader.read();
    assert.ok(!first.done);
    const text = new TextDecoder().decode(first.value);
    assert.ok(text.startsWith("event: message_start\n"), text);
    assert.ok(
      !text.includes("content_block_start"),
      "nothing after message_start before the delay",
    );
    await reader.cancel();
  });
});

Deno.test("close() releases a delayed stream that the client is still reading", async () => {
  const emu = await startOllamaEmulator({
    script: () => ({ kind: "text", text: "late", delayMs: 60_000 }),
  });
  const res = await post(emu, "/v1/messages", messagesBody({ stream: true }));
  const reading = res.text();
  await waitUntil(() => emu.messageRequests().length === 1, "the request");
  const started = Date.now();
  await emu.close();
  assert.ok(Date.now() - started < 5000);
  // The stream ends cleanly after message_start, like a server that went away mid-answer.
  const frames = parseSse(await reading);
  assert.deepEqual(frames.map((f) => f.event), ["message_start"]);
});

Deno.test("close() ends a @hang request without leaking", async () => {
  const emu = await startOllamaEmulator();
  const pending = post(
    emu,
    "/v1/messages",
    messagesBody({ stream: true, messages: [{ role: "user", content: "@hang" }] }),
  );
  await waitUntil(() => emu.messageRequests().length === 1, "the hanging request");
  let settled = false;
  void pending.then(() => settled = true, () => settled = true);
  await new Promise((r) => setTimeout(r, 100));
  assert.equal(settled, false, "a hanging request gets no answer");
  const started = Date.now();
  await emu.close();
  assert.ok(Date.now() - started < 5000, "close() does not wait for the hang");
  const res = await pending;
  assert.equal(res.status, 503);
  assert.equal(((await getJson(res)).error as Record<string, unknown>).type, "overloaded_error");
  await emu.close(); // idempotent
});

Deno.test("a client abandoning a hanging request frees it", async () => {
  await withEmulator({ models: MODELS, script: () => ({ kind: "hang" }) }, async (emu) => {
    const ac = new AbortController();
    const pending = post(emu, "/v1/messages", messagesBody(), ac.signal);
    await waitUntil(() => emu.messageRequests().length === 1, "the hanging request");
    ac.abort();
    await assert.rejects(pending);
  });
});

Deno.test("every request is recorded with method, path, query, headers and body", async () => {
  await withEmulator({ models: MODELS }, async (emu) => {
    await (await fetch(emu.url + "/api/tags?x=1")).body?.cancel();
    const res = await fetch(emu.url + "/v1/messages?beta=true", {
      method: "POST",
      headers: { "Content-Type": "application/json", Authorization: "Bearer ollama" },
      body: JSON.stringify(messagesBody()),
    });
    await res.body?.cancel();
    assert.equal(emu.requests.length, 2);
    const [tags, msg] = emu.requests;
    assert.deepEqual([tags!.method, tags!.path, tags!.query, tags!.bodyText], [
      "GET",
      "/api/tags",
      "x=1",
      "",
    ]);
    assert.equal(tags!.json, undefined);
    assert.deepEqual([msg!.method, msg!.path, msg!.query], ["POST", "/v1/messages", "beta=true"]);
    assert.equal(msg!.headers["authorization"], "Bearer ollama");
    assert.deepEqual(msg!.json, messagesBody());
    assert.ok(msg!.at >= tags!.at);
    assert.deepEqual(emu.messageRequests(), [msg]);
  });
});

// --- standalone process -----------------------------------------------------------------------

Deno.test("standalone mode prints its URL and exits when stdin closes", async () => {
  await withStandaloneEmulator(["--models", "a:1b,b:cloud"], async (url) => {
    assert.match(url, /^http:\/\/127\.0\.0\.1:\d+$/);
    const tags = await getJson(await fetch(url + "/api/tags"));
    const models = tags.models as Record<string, unknown>[];
    assert.deepEqual(models.map((m) => [m.name, m.remote_host ?? null]), [
      ["a:1b", null],
      ["b:cloud", "https://ollama.com:443"],
    ]);
  });
});

// --- the real Claude Code CLI -----------------------------------------------------------------

Deno.test("the real Claude Code CLI runs a @bash round trip against the emulator", async () => {
  // The pinned CLI that scripts/ensure_test_tools.ts installs next to this repository.
  const claude = CLAUDE_BIN;
  const home = await Deno.makeTempDir({ prefix: "emu_home_" });
  const cwd = await Deno.makeTempDir({ prefix: "emu_cwd_" });
  const emu = await startOllamaEmulator({ models: [{ name: "qwen3:8b" }] });
  try {
    const child = new Deno.Command(claude, {
      args: [
        "-p",
        "--output-format",
        "stream-json",
        "--verbose",
        "--strict-mcp-config",
        "--model",
        "qwen3:8b",
        "--permission-mode",
        "acceptEdits",
        "--allowed-tools",
        "Bash",
      ],
      cwd,
      clearEnv: true,
      env: {
        PATH: "/usr/bin:/bin",
        HOME: home,
        ANTHROPIC_BASE_URL: emu.url,
        ANTHROPIC_AUTH_TOKEN: "ollama",
        ANTHROPIC_API_KEY: "",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
        DISABLE_AUTOUPDATER: "1",
      },
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const killer = setTimeout(() => child.kill("SIGKILL"), 120_000);
    let output: Deno.CommandOutput;
    try {
      const writer = child.stdin.getWriter();
      await writer.write(new TextEncoder().encode("@bash echo hello-from-bash > marker.txt"));
      await writer.close();
      output = await child.output();
    } finally {
      clearTimeout(killer);
    }
    const stdout = new TextDecoder().decode(output.stdout);
    const stderr = new TextDecoder().decode(output.stderr);
    const context = `exit ${output.code}\nstdout:\n${stdout}\nstderr:\n${stderr}`;
    assert.equal(output.code, 0, context);

    const events = stdout.trim().split("\n").map((l) => JSON.parse(l) as Record<string, unknown>);
    const result = events.find((e) => e.type === "result");
    assert.ok(result, context);
    assert.equal(result.subtype, "success", context);
    assert.equal(result.is_error, false, context);
    assert.match(String(result.result), /^tool result: /);

    assert.equal(await Deno.readTextFile(join(cwd, "marker.txt")), "hello-from-bash\n");

    const calls = emu.messageRequests();
    assert.equal(calls.length, 2, "one tool round trip, then the final answer");
    for (const call of calls) {
      assert.equal(call.headers["authorization"], "Bearer ollama");
      assert.equal(call.query, "beta=true");
      assert.equal((call.json as Record<string, unknown>).stream, true);
    }
    assert.ok(!emu.requests.some((r) => r.path !== "/v1/messages"), "no other endpoints used");
  } finally {
    await emu.close();
    await Deno.remove(home, { recursive: true });
    await Deno.remove(cwd, { recursive: true });
  }
});
