/**
 * OllamaChatClient against the Ollama emulator's native `/api/chat` (and bare servers for
 * what the emulator never does): the contract of ChatClient on the native wire.
 */
import { withEmulator } from "../../support/emulator/emulator.ts";
import assert from "node:assert/strict";
import { MAX_ATTEMPTS } from "../../../src/backends/chat_stream.ts";
import {
  ChatHttpError,
  type ChatMessage,
  type ChatRequest,
  ConnectionError,
} from "../../../src/backends/chat_types.ts";
import { BackendReplyError } from "../../../src/backends/bounded.ts";
import {
  keepAliveValue,
  nativeMessages,
  OllamaChatClient,
  type OllamaChatOptions,
  thinkValue,
} from "../../../src/backends/ollama/chat.ts";

type Json = Record<string, unknown>;

const READ_TOOL = {
  type: "function" as const,
  function: {
    name: "Read",
    description: "Read a file",
    parameters: { type: "object", properties: { file_path: { type: "string" } } },
  },
};

function client(url: string, extra: Partial<OllamaChatOptions> = {}): OllamaChatClient {
  return new OllamaChatClient({ baseUrl: url, label: "ollama", backoffMs: () => 10, ...extra });
}

function ask(content: string, extra: Partial<ChatRequest> = {}): ChatRequest {
  return { model: "qwen3:8b", messages: [{ role: "user", content }], ...extra };
}

const never = () => new AbortController().signal;

async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (e) {
    return e;
  }
  assert.fail("expected a rejection");
}

/** A bare NDJSON server; `respond` gets the 1-based request number and the body. */
async function withRawServer(
  respond: (n: number, body: string) => Response,
  fn: (url: string, count: () => number) => Promise<void>,
): Promise<void> {
  let n = 0;
  const server = Deno.serve(
    { port: 0, hostname: "127.0.0.1", onListen: () => {} },
    async (req) => respond(++n, await req.text()),
  );
  try {
    await fn(`http://127.0.0.1:${server.addr.port}`, () => n);
  } finally {
    await server.shutdown();
  }
}

const ndjson = (objects: readonly unknown[], tail = "") =>
  new Response(objects.map((o) => JSON.stringify(o) + "\n").join("") + tail, {
    headers: { "content-type": "application/x-ndjson" },
  });
const piece = (message: Json) => ({ model: "m", message: { role: "assistant", ...message } });
const final = { model: "m", message: { role: "assistant", content: "" }, done: true };

Deno.test("complete: streams text, reports each delta, usage from prompt_eval_count/eval_count and the timings", async () => {
  await withEmulator({}, async (emu) => {
    const deltas: string[] = [];
    const reply = await client(emu.url).complete(
      ask("@reply hello from the native api"),
      never(),
      (d) => deltas.push(d),
    );
    assert.equal(reply.content, "hello from the native api");
    assert.ok(deltas.length > 1, "text arrives in several deltas");
    assert.equal(deltas.join(""), reply.content);
    assert.equal(reply.finishReason, "stop");
    assert.deepEqual(reply.toolCalls, []);
    const record = emu.contextRecords.at(-1)!;
    assert.deepEqual(reply.usage, {
      promptTokens: record.estimatedTokens,
      completionTokens: Math.ceil(reply.content.length / 4),
    });
    assert.ok(reply.timings && reply.timings.totalMs > 0 && reply.timings.loadMs > 0);
    assert.equal(emu.nativeChatRequests().length, 1);
    assert.equal(emu.chatRequests().length, 0, "nothing went to /v1");
  });
});

Deno.test("complete: the body carries model, native messages, tools, a stream, and num_ctx in options", async () => {
  await withEmulator({}, async (emu) => {
    await client(emu.url).complete(
      ask("@reply ok", { tools: [READ_TOOL], numCtx: 16384, temperature: 0.2, max_tokens: 50 }),
      never(),
    );
    const [req] = emu.nativeChatRequests();
    assert.equal(req!.headers["content-type"], "application/json");
    assert.deepEqual(req!.json, {
      model: "qwen3:8b",
      messages: [{ role: "user", content: "@reply ok" }],
      tools: [READ_TOOL],
      stream: true,
      options: { num_ctx: 16384, temperature: 0.2, num_predict: 50 },
    });
    assert.equal(emu.contextRecords.at(-1)!.contextLength, 16384);
    assert.equal(emu.contextRecords.at(-1)!.source, "request");
  });
});

Deno.test("nativeMessages: arguments as objects, tool results with tool_name and the call's id", () => {
  const history: ChatMessage[] = [
    { role: "system", content: "sys" },
    { role: "user", content: "go" },
    {
      role: "assistant",
      content: null,
      tool_calls: [
        { id: "c1", type: "function", function: { name: "Read", arguments: '{"file_path":"a"}' } },
        { id: "c2", type: "function", function: { name: "Bash", arguments: "{not json" } },
      ],
    },
    { role: "tool", tool_call_id: "c1", name: "Read", content: "A" },
    { role: "tool", tool_call_id: "c2", content: "Error: bad arguments" },
  ];
  assert.deepEqual(nativeMessages(history), [
    { role: "system", content: "sys" },
    { role: "user", content: "go" },
    {
      role: "assistant",
      content: "",
      tool_calls: [
        { id: "c1", function: { name: "Read", arguments: { file_path: "a" } } },
        { id: "c2", function: { name: "Bash", arguments: {} } },
      ],
    },
    { role: "tool", content: "A", tool_name: "Read", tool_call_id: "c1" },
    // A result without a name gets the name of the call it answers.
    { role: "tool", content: "Error: bad arguments", tool_name: "Bash", tool_call_id: "c2" },
  ]);
});

Deno.test("complete: a tool round trip on the native wire; ids are made when Ollama sends none", async () => {
  for (const version of ["0.12.6", "0.33.0"]) {
    await withEmulator({ version }, async (emu) => {
      const c = client(emu.url);
      const prompt = '@tool Read {"file_path":"src/a.ts"}\n@reply read it';
      const first = await c.complete(ask(prompt, { tools: [READ_TOOL] }), never());
      assert.equal(first.toolCalls.length, 1);
      const call = first.toolCalls[0]!;
      assert.equal(call.function.name, "Read");
      assert.deepEqual(JSON.parse(call.function.arguments), { file_path: "src/a.ts" });
      assert.match(call.id, version === "0.12.6" ? /^call_[0-9a-f-]{36}$/ : /^call_[a-z0-9]{8}$/);
      const history: ChatMessage[] = [
        { role: "user", content: prompt },
        { role: "assistant", content: first.content, tool_calls: first.toolCalls },
        { role: "tool", tool_call_id: call.id, name: "Read", content: "export const a = 1;" },
      ];
      const second = await c.complete({ model: "qwen3:8b", messages: history }, never());
      assert.equal(second.content, "read it");
      const sent = emu.nativeChatRequests()[1]!.json as { messages: Json[] };
      assert.deepEqual(sent.messages[2], {
        role: "tool",
        content: "export const a = 1;",
        tool_name: "Read",
        tool_call_id: call.id,
      });
    });
  }
});

Deno.test("thinkValue: off is false; levels only for gpt-oss, true for other thinking models; max is high", () => {
  assert.equal(thinkValue(undefined, "qwen3:8b"), undefined);
  assert.equal(thinkValue("off", "qwen3:8b"), false);
  assert.equal(thinkValue("low", "qwen3:8b"), true);
  assert.equal(thinkValue("max", "deepseek-r1:8b"), true);
  assert.equal(thinkValue("low", "gpt-oss:20b"), "low");
  assert.equal(thinkValue("high", "gpt-oss:120b-cloud"), "high");
  assert.equal(thinkValue("max", "library/gpt-oss:20b"), "high");
  assert.equal(thinkValue("off", "gpt-oss:20b"), false);
});

Deno.test("complete: effort reaches the wire as think, which a thinking model honours", async () => {
  await withEmulator({
    models: [
      { name: "deepseek-r1:8b", capabilities: ["completion", "tools", "thinking"] },
      { name: "gpt-oss:20b", capabilities: ["completion", "tools", "thinking"] },
    ],
  }, async (emu) => {
    const c = client(emu.url);
    await c.complete(ask("@reply a", { model: "deepseek-r1:8b", effort: "high" }), never());
    await c.complete(ask("@reply b", { model: "gpt-oss:20b", effort: "low" }), never());
    await c.complete(ask("@reply c", { model: "deepseek-r1:8b", effort: "off" }), never());
    await c.complete(ask("@reply d", { model: "deepseek-r1:8b" }), never());
    const thinks = emu.nativeChatRequests().map((r) => (r.json as Json).think);
    assert.deepEqual(thinks, [true, "low", false, undefined]);
  });
});

Deno.test("keepAliveValue: Go durations as strings, bare numbers as seconds, empty as absent", () => {
  assert.equal(keepAliveValue(undefined), undefined);
  assert.equal(keepAliveValue(" "), undefined);
  assert.equal(keepAliveValue("30m"), "30m");
  assert.equal(keepAliveValue("1h30m"), "1h30m");
  // time.ParseDuration refuses these without a unit; api.Duration reads numbers as seconds.
  assert.equal(keepAliveValue("0"), 0);
  assert.equal(keepAliveValue("-1"), -1);
  assert.equal(keepAliveValue("300"), 300);
});

Deno.test("complete: keepAlive is sent as keep_alive and Ollama keeps the model that long", async () => {
  await withEmulator({}, async (emu) => {
    await client(emu.url, { keepAlive: "-1" }).complete(ask("@reply x"), never());
    assert.equal((emu.nativeChatRequests()[0]!.json as Json).keep_alive, -1);
    const [loaded] = emu.loadedModels().models;
    const years = (Date.parse(String(loaded!.expires_at)) - Date.now()) / (365 * 86_400_000);
    assert.ok(years > 200, "kept loaded for good");
    await client(emu.url, { keepAlive: "0" }).complete(ask("@reply y"), never());
    assert.equal(emu.loadedModels().models.length, 0, "unloaded after the request");
  });
});

Deno.test("complete: 503 twice, then success, after two retries with the backoff", async () => {
  await withEmulator({}, async (emu) => {
    const retries: string[] = [];
    const reply = await client(emu.url, {
      onRetry: ({ attempt, reason }) => retries.push(`${attempt}:${reason}`),
    }).complete(ask("@fail 503 2\n@reply recovered"), never());
    assert.equal(reply.content, "recovered");
    assert.deepEqual(retries, ["1:HTTP 503", "2:HTTP 503"]);
    assert.equal(emu.nativeChatRequests().length, 3);
  });
});

Deno.test("complete: Retry-After is honoured; client errors are not retried and name the path", async () => {
  await withEmulator({}, async (emu) => {
    const waits: number[] = [];
    await client(emu.url, { onRetry: ({ waitMs }) => waits.push(waitMs) })
      .complete(ask("@fail 429 1\n@retry-after 0.2\n@reply ok"), never());
    assert.deepEqual(waits, [200]);
    const err = await rejection(client(emu.url).complete(ask("x", { model: "nope:1b" }), never()));
    assert.ok(err instanceof ChatHttpError, String(err));
    assert.equal(err.status, 404);
    assert.equal(err.message, "ollama answered /api/chat with HTTP 404: model 'nope:1b' not found");
    assert.equal(emu.nativeChatRequests().length, 3, "two for the 429, one for the 404");
  });
});

Deno.test("complete: an unreachable server is a ConnectionError, retried MAX_ATTEMPTS times", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const url = `http://127.0.0.1:${(listener.addr as Deno.NetAddr).port}`;
  listener.close();
  const retries: number[] = [];
  const err = await rejection(
    client(url, { onRetry: ({ attempt }) => retries.push(attempt) }).complete(ask("x"), never()),
  );
  assert.ok(err instanceof ConnectionError, String(err));
  assert.equal(err.kind, "unreachable");
  assert.deepEqual(retries, [1, 2]);
});

Deno.test("complete: aborting mid-stream stops reading and is not retried; an aborted call sends nothing", async () => {
  await withEmulator({}, async (emu) => {
    const ac = new AbortController();
    const deltas: string[] = [];
    const pending = client(emu.url).complete(
      ask(`@chunk-delay 100\n@reply ${"slow words ".repeat(40)}`),
      ac.signal,
      (d) => {
        deltas.push(d);
        if (deltas.length === 2) ac.abort();
      },
    );
    await rejection(pending);
    assert.equal(deltas.length, 2);
    assert.equal(emu.nativeChatRequests().length, 1);
    await rejection(client(emu.url).complete(ask("@reply x"), AbortSignal.abort()));
    assert.equal(emu.nativeChatRequests().length, 1);
  });
});

Deno.test("complete: an error line mid-stream is the server's error, retried like a 500", async () => {
  await withRawServer(
    () => ndjson([piece({ content: "par" }), { error: "model runner has unexpectedly stopped" }]),
    async (url, count) => {
      const err = await rejection(client(url).complete(ask("x"), never()));
      assert.ok(err instanceof ChatHttpError, String(err));
      assert.equal(err.detail, "model runner has unexpectedly stopped");
      assert.equal(count(), MAX_ATTEMPTS);
    },
  );
});

Deno.test("complete: a stream that ends without done is a cut, retried, then the whole reply", async () => {
  await withRawServer(
    (n) =>
      n === 1
        ? ndjson([piece({ content: "half a rep" })])
        : ndjson([piece({ content: "whole" }), { ...final, done_reason: "stop" }]),
    async (url, count) => {
      const reply = await client(url).complete(ask("x"), never());
      assert.equal(reply.content, "whole");
      assert.equal(count(), 2);
    },
  );
});

Deno.test("complete: tool calls arrive whole, each its own call, in order; thinking is not content", async () => {
  await withRawServer(
    () =>
      ndjson([
        piece({ content: "", thinking: "let me see" }),
        piece({
          content: "",
          tool_calls: [{ function: { index: 0, name: "Read", arguments: { file_path: "a" } } }],
        }),
        piece({
          content: "",
          tool_calls: [{ function: { index: 1, name: "Read", arguments: { file_path: "b" } } }],
        }),
        { ...final, done_reason: "stop", prompt_eval_count: 12, eval_count: 7 },
      ]),
    async (url) => {
      const reply = await client(url).complete(ask("x", { tools: [READ_TOOL] }), never());
      assert.equal(reply.content, "");
      assert.deepEqual(
        reply.toolCalls.map((c) => [c.function.name, c.function.arguments]),
        [["Read", '{"file_path":"a"}'], ["Read", '{"file_path":"b"}']],
      );
      assert.notEqual(reply.toolCalls[0]!.id, reply.toolCalls[1]!.id);
      assert.deepEqual(reply.usage, { promptTokens: 12, completionTokens: 7 });
    },
  );
});

Deno.test("complete: a line that is not JSON is a protocol error naming the stream, not retried", async () => {
  await withRawServer(
    () => ndjson([piece({ content: "a" })], "data: {oops\n"),
    async (url, count) => {
      const err = await rejection(client(url).complete(ask("x"), never()));
      assert.ok(err instanceof BackendReplyError, String(err));
      assert.equal(err.kind, "protocol");
      assert.equal(err.reason, 'a line that is not JSON: "data: {oops"');
      assert.equal(
        err.message,
        'ollama did not send an Ollama chat stream: a line that is not JSON: "data: {oops"',
      );
      assert.equal(count(), 1);
    },
  );
});
