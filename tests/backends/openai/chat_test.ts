import { withEmulator } from "../../support/emulator/emulator.ts";
import assert from "node:assert/strict";
import {
  ChatClient,
  type ChatClientOptions,
  ChatHttpError,
  type ChatRequest,
  ConnectionError,
  MAX_ATTEMPTS,
  parseRetryAfter,
} from "../../../src/backends/openai/chat.ts";
import { sseEvents } from "../../../src/backends/sse.ts";
import { startOllamaEmulator } from "../../support/emulator/emulator.ts";

type Json = Record<string, unknown>;

const READ_TOOL = {
  type: "function" as const,
  function: {
    name: "Read",
    description: "Read a file",
    parameters: { type: "object", properties: { file_path: { type: "string" } } },
  },
};

function client(url: string, extra: Partial<ChatClientOptions> = {}): ChatClient {
  return new ChatClient({ baseUrl: url, label: "ollama", backoffMs: () => 10, ...extra });
}

function ask(content: string, extra: Partial<ChatRequest> = {}): ChatRequest {
  return { model: "qwen3:8b", messages: [{ role: "user", content }], ...extra };
}

const never = () => new AbortController().signal;

/** The emulator's prompt-token estimate (chars/4 of messages and tools JSON). */
function emulatedPromptTokens(body: Json): number {
  const tools = Array.isArray(body.tools) && body.tools.length > 0
    ? JSON.stringify(body.tools).length
    : 0;
  return Math.max(1, Math.ceil((JSON.stringify(body.messages).length + tools) / 4));
}

/**
 * A bare SSE server for what the Ollama emulator never does but other OpenAI-compatible
 * servers (vLLM, OpenAI) do: fragmented tool calls, error chunks, connections cut mid-stream.
 * `respond` gets the 1-based request number.
 */
async function withRawServer(
  respond: (n: number) => Response,
  fn: (url: string, count: () => number) => Promise<void>,
): Promise<void> {
  let n = 0;
  const server = Deno.serve(
    { port: 0, hostname: "127.0.0.1", onListen: () => {} },
    async (req) => {
      await req.text();
      return respond(++n);
    },
  );
  try {
    await fn(`http://127.0.0.1:${server.addr.port}`, () => n);
  } finally {
    await server.shutdown();
  }
}

function sseResponse(frames: readonly unknown[], opts: { done?: boolean } = {}): Response {
  const text = frames.map((f) => `data: ${typeof f === "string" ? f : JSON.stringify(f)}\n\n`)
    .join("") + (opts.done === false ? "" : "data: [DONE]\n\n");
  return new Response(text, { headers: { "content-type": "text/event-stream" } });
}

const chunk = (delta: Json, finish: string | null = null) => ({
  object: "chat.completion.chunk",
  choices: [{ index: 0, delta, finish_reason: finish }],
});

function bytesStream(parts: readonly (string | Uint8Array)[]): ReadableStream<Uint8Array> {
  const enc = new TextEncoder();
  return ReadableStream.from(parts.map((p) => (typeof p === "string" ? enc.encode(p) : p)));
}

const sseOptions = (maxBytes = 1024) => ({
  maxBytes,
  tooLong: () => new RangeError("too long"),
  notSse: (what: string) => new SyntaxError(what),
});

async function collect(stream: ReadableStream<Uint8Array>, maxBytes?: number): Promise<string[]> {
  const out: string[] = [];
  for await (const e of sseEvents(stream, sseOptions(maxBytes))) {
    out.push(e.event === "message" ? e.data : `${e.event}: ${e.data}`);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// sseEvents and parseRetryAfter

Deno.test("sseEvents: events split across chunks, CRLF, multi-line data, comments, no final blank", async () => {
  const euro = new TextEncoder().encode("data: €uro\n\n");
  const parts = [
    'data: {"a"',
    ":1}\r\n\r\n",
    ": a comment line\n\n",
    "event: ignored\ndata:first\ndata: second\n\n",
    euro.slice(0, 7), // splits the 3-byte "€"
    euro.slice(7),
    "data: [DONE]",
  ];
  assert.deepEqual(await collect(bytesStream(parts)), [
    '{"a":1}',
    "ignored: first\nsecond",
    "€uro",
    "[DONE]",
  ]);
});

Deno.test("sseEvents: blank lines without data yield nothing", async () => {
  assert.deepEqual(await collect(bytesStream(["\n\n\r\n", "id: 3\n\n"])), []);
});

Deno.test("parseRetryAfter: delay-seconds, HTTP-date, absent and unreadable values", () => {
  const now = Date.parse("Wed, 21 Oct 2015 07:28:00 GMT");
  assert.equal(parseRetryAfter(null, now), undefined);
  assert.equal(parseRetryAfter("0", now), 0);
  assert.equal(parseRetryAfter(" 2 ", now), 2000);
  assert.equal(parseRetryAfter("1.5", now), 1500);
  assert.equal(parseRetryAfter("Wed, 21 Oct 2015 07:28:30 GMT", now), 30_000);
  // A date in the past means "now", not a negative wait.
  assert.equal(parseRetryAfter("Wed, 21 Oct 2015 07:00:00 GMT", now), 0);
  assert.equal(parseRetryAfter("soon", now), undefined);
  assert.equal(parseRetryAfter("", now), undefined);
});

Deno.test("parseRetryAfter: values that are neither delay-seconds nor an HTTP-date are unreadable (RFC 9110 10.2.3)", () => {
  // V8's lenient Date.parse reads these as dates in 2001, which would turn garbage into "retry
  // at once" instead of falling back to the backoff.
  const now = Date.parse("Wed, 21 Oct 2015 07:28:00 GMT");
  assert.equal(parseRetryAfter("-1", now), undefined);
  assert.equal(parseRetryAfter("in 2", now), undefined);
});

// ---------------------------------------------------------------------------------------------
// complete(): against the Ollama emulator

Deno.test("complete: streams text, reports each delta and the usage the server sent", async () => {
  await withEmulator({}, async (emu) => {
    const deltas: string[] = [];
    const reply = await client(emu.url).complete(
      ask("@reply The quick brown fox jumps over the lazy dog"),
      never(),
      (d) => deltas.push(d),
    );
    assert.equal(reply.content, "The quick brown fox jumps over the lazy dog");
    assert.ok(deltas.length > 1, `streamed in pieces: ${JSON.stringify(deltas)}`);
    assert.equal(deltas.join(""), reply.content);
    assert.equal(reply.finishReason, "stop");
    assert.deepEqual(reply.toolCalls, []);
    const [req] = emu.chatRequests();
    const body = req!.json as Json;
    assert.deepEqual(reply.usage, {
      promptTokens: emulatedPromptTokens(body),
      completionTokens: Math.ceil(reply.content.length / 4),
    });
  });
});

Deno.test("complete: the request body asks for a stream with usage and carries model, messages, tools", async () => {
  await withEmulator({}, async (emu) => {
    const request = ask("@reply ok", { tools: [READ_TOOL], temperature: 0.2, max_tokens: 50 });
    await client(emu.url).complete(request, never());
    const [req] = emu.chatRequests();
    assert.equal(req!.headers["content-type"], "application/json");
    assert.deepEqual(req!.json, {
      ...request,
      stream: true,
      stream_options: { include_usage: true },
    });
  });
});

Deno.test("complete: a tool call delivered whole becomes one ChatToolCall", async () => {
  await withEmulator({}, async (emu) => {
    const reply = await client(emu.url).complete(
      ask('@tool Read {"file_path":"src/a.ts","limit":3}', { tools: [READ_TOOL] }),
      never(),
    );
    assert.equal(reply.finishReason, "tool_calls");
    assert.equal(reply.content, "");
    assert.equal(reply.toolCalls.length, 1);
    const call = reply.toolCalls[0]!;
    assert.match(call.id, /^call_/);
    assert.equal(call.type, "function");
    assert.equal(call.function.name, "Read");
    assert.deepEqual(JSON.parse(call.function.arguments), { file_path: "src/a.ts", limit: 3 });
  });
});

Deno.test("complete: several calls in one reply keep their order and their text", async () => {
  await withEmulator({
    chatScript: () => ({
      kind: "tool_calls",
      text: "Reading both.",
      calls: [
        { name: "Read", arguments: { file_path: "a" } },
        { name: "Read", arguments: { file_path: "b" } },
      ],
    }),
  }, async (emu) => {
    const reply = await client(emu.url).complete(ask("go", { tools: [READ_TOOL] }), never());
    assert.equal(reply.content, "Reading both.");
    assert.deepEqual(
      reply.toolCalls.map((c) => [c.function.name, JSON.parse(c.function.arguments)]),
      [["Read", { file_path: "a" }], ["Read", { file_path: "b" }]],
    );
    assert.notEqual(reply.toolCalls[0]!.id, reply.toolCalls[1]!.id);
  });
});

Deno.test("complete: the API key goes in the Authorization header, and no header without one", async () => {
  await withEmulator({}, async (emu) => {
    await client(emu.url, { apiKey: "sk-test-123" }).complete(ask("@reply a"), never());
    // A key in the server's environment is not picked up on its own.
    const saved = Deno.env.get("OPENAI_API_KEY");
    Deno.env.set("OPENAI_API_KEY", "sk-poison-env");
    try {
      await client(emu.url).complete(ask("@reply b"), never());
    } finally {
      if (saved === undefined) Deno.env.delete("OPENAI_API_KEY");
      else Deno.env.set("OPENAI_API_KEY", saved);
    }
    const [withKey, without] = emu.chatRequests();
    assert.equal(withKey!.headers.authorization, "Bearer sk-test-123");
    assert.equal(without!.headers.authorization, undefined);
    assert.doesNotMatch(JSON.stringify(without), /sk-poison-env/);
  });
});

Deno.test("complete: 503 twice, then success, after two retries with the backoff", async () => {
  await withEmulator({}, async (emu) => {
    const retries: Array<{ attempt: number; waitMs: number; reason: string }> = [];
    const reply = await client(emu.url, {
      backoffMs: (n) => 10 * n,
      onRetry: (info) => retries.push(info),
    }).complete(ask("@fail 503 2\n@retry-after none\n@reply finally"), never());
    assert.equal(reply.content, "finally");
    assert.equal(emu.chatRequests().length, 3);
    assert.deepEqual(retries, [
      { attempt: 1, waitMs: 10, reason: "HTTP 503", status: 503 },
      { attempt: 2, waitMs: 20, reason: "HTTP 503", status: 503 },
    ]);
  });
});

Deno.test("complete: every retryable status (429, 500, 502, 503, 504) is retried", async () => {
  await withEmulator({}, async (emu) => {
    for (const status of [429, 500, 502, 503, 504]) {
      const before = emu.chatRequests().length;
      const reply = await client(emu.url).complete(
        ask(`@fail ${status} 1\n@reply ok ${status}`),
        never(),
      );
      assert.equal(reply.content, `ok ${status}`);
      assert.equal(emu.chatRequests().length - before, 2, `HTTP ${status} retried once`);
    }
  });
});

Deno.test("complete: Retry-After is honoured instead of the backoff", async () => {
  await withEmulator({}, async (emu) => {
    const retries: number[] = [];
    const started = performance.now();
    await client(emu.url, {
      backoffMs: () => 5000,
      onRetry: (info) => retries.push(info.waitMs),
    }).complete(ask("@fail 429 1\n@retry-after 0.3\n@reply ok"), never());
    const elapsed = performance.now() - started;
    assert.deepEqual(retries, [300]);
    assert.ok(elapsed >= 290 && elapsed < 3000, `waited ${elapsed} ms`);
    const [first, second] = emu.chatRequests();
    assert.ok(second!.at - first!.at >= 290, "the second attempt came after Retry-After");
  });
});

Deno.test("complete: gives up after MAX_ATTEMPTS with the server's error", async () => {
  await withEmulator({}, async (emu) => {
    const err = await assertRejects(
      client(emu.url).complete(ask("@fail 503 10\n@retry-after none"), never()),
    );
    assert.ok(err instanceof ChatHttpError);
    assert.equal(err.status, 503);
    assert.match(err.detail, /server busy/);
    assert.equal(emu.chatRequests().length, MAX_ATTEMPTS);
    assert.equal(MAX_ATTEMPTS, 3);
  });
});

Deno.test("complete: a Retry-After over a minute fails at once instead of waiting", async () => {
  await withEmulator({}, async (emu) => {
    const started = performance.now();
    const err = await assertRejects(
      client(emu.url).complete(ask("@fail 429 1\n@retry-after 120\n@reply late"), never()),
    );
    assert.ok(err instanceof ChatHttpError);
    assert.equal(err.status, 429);
    assert.equal(err.retryAfterMs, 120_000);
    assert.equal(emu.chatRequests().length, 1);
    assert.ok(performance.now() - started < 2000);
  });
});

Deno.test("complete: client errors are not retried and name the backend, path, status and detail", async () => {
  await withEmulator({}, async (emu) => {
    const c = new ChatClient({ baseUrl: emu.url, label: "my-vllm", backoffMs: () => 10 });
    const unknown = await assertRejects(
      c.complete({ model: "nope:1b", messages: [{ role: "user", content: "hi" }] }, never()),
    );
    assert.ok(unknown instanceof ChatHttpError);
    assert.equal(unknown.status, 404);
    assert.equal(unknown.detail, 'model "nope:1b" not found');
    assert.equal(
      unknown.message,
      'my-vllm answered /v1/chat/completions with HTTP 404: model "nope:1b" not found',
    );
    const bad = await assertRejects(c.complete(ask("@fail 401 5"), never()));
    assert.ok(bad instanceof ChatHttpError);
    assert.equal(bad.status, 401);
    assert.equal(emu.chatRequests().length, 2, "one request each, no retry");
  });
});

Deno.test("complete: a retired cloud model's plain-string error (410) is kept verbatim", async () => {
  const retired = "glm-4.7 was retired at 2026-07-15";
  const emu = await startOllamaEmulator({
    models: [{ name: "glm-4.7:cloud", retiredText: retired }],
  });
  try {
    const err = await assertRejects(
      client(emu.url).complete(
        { model: "glm-4.7:cloud", messages: [{ role: "user", content: "hi" }] },
        never(),
      ),
    );
    assert.ok(err instanceof ChatHttpError);
    assert.equal(err.status, 410);
    assert.equal(err.detail, retired);
    assert.equal(emu.chatRequests().length, 1);
  } finally {
    await emu.close();
  }
});

Deno.test("complete: an unreachable server is a ConnectionError, retried MAX_ATTEMPTS times", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  const reasons: string[] = [];
  const err = await assertRejects(
    client(`http://127.0.0.1:${port}`, { onRetry: (i) => reasons.push(i.reason) })
      .complete(ask("hi"), never()),
  );
  assert.ok(err instanceof ConnectionError, String(err));
  assert.equal(err.kind, "unreachable");
  assert.match(err.message, new RegExp(`^Cannot reach ollama at http://127\\.0\\.0\\.1:${port}: `));
  assert.match(err.reason, /^connection failed \(/);
  assert.equal(reasons.length, MAX_ATTEMPTS - 1);
});

Deno.test("complete: aborting a hanging request rejects at once and is not retried", async () => {
  await withEmulator({}, async (emu) => {
    const ac = new AbortController();
    const started = performance.now();
    setTimeout(() => ac.abort(), 100);
    await assertRejects(client(emu.url).complete(ask("@hang"), ac.signal));
    assert.ok(performance.now() - started < 2000);
    assert.equal(emu.chatRequests().length, 1);
  });
});

Deno.test("complete: aborting mid-stream stops reading and is not retried", async () => {
  await withEmulator({}, async (emu) => {
    const ac = new AbortController();
    const deltas: string[] = [];
    const started = performance.now();
    await assertRejects(
      client(emu.url).complete(
        ask("@chunk-delay 300\n@reply one two three four five six seven eight"),
        ac.signal,
        (d) => {
          deltas.push(d);
          ac.abort();
        },
      ),
    );
    assert.ok(performance.now() - started < 1500, "did not wait for the rest of the stream");
    assert.equal(deltas.length, 1);
    assert.equal(emu.chatRequests().length, 1);
  });
});

Deno.test("complete: aborting during the backoff stops waiting", async () => {
  await withEmulator({}, async (emu) => {
    const ac = new AbortController();
    const started = performance.now();
    await assertRejects(
      client(emu.url, { onRetry: () => setTimeout(() => ac.abort(), 50) })
        .complete(ask("@fail 503 5\n@retry-after 30"), ac.signal),
    );
    assert.ok(performance.now() - started < 2000, "did not sleep the 30 s");
    assert.equal(emu.chatRequests().length, 1);
  });
});

Deno.test("complete: an already aborted signal sends nothing", async () => {
  await withEmulator({}, async (emu) => {
    await assertRejects(client(emu.url).complete(ask("@reply x"), AbortSignal.abort()));
    assert.equal(emu.chatRequests().length, 0);
  });
});

Deno.test("models: lists the backend's model ids", async () => {
  await withEmulator({}, async (emu) => {
    assert.deepEqual(await client(emu.url).models(), ["qwen3:8b", "gpt-oss:120b-cloud"]);
  });
});

// ---------------------------------------------------------------------------------------------
// complete(): what OpenAI-style servers do beyond Ollama

Deno.test("complete: tool calls fragmented by index are merged in index order", async () => {
  const frames = [
    chunk({ role: "assistant", content: "" }),
    chunk({
      tool_calls: [{
        index: 1,
        id: "call_b",
        type: "function",
        function: { name: "Grep", arguments: "" },
      }],
    }),
    chunk({
      tool_calls: [{
        index: 0,
        id: "call_a",
        type: "function",
        function: { name: "Read", arguments: '{"file_' },
      }],
    }),
    chunk({ tool_calls: [{ index: 0, function: { arguments: 'path":"a.ts"}' } }] }),
    chunk({ tool_calls: [{ index: 1, function: { arguments: '{"pattern":"x"}' } }] }),
    chunk({}, "tool_calls"),
    { object: "chat.completion.chunk", choices: [], usage: { prompt_tokens: 7 } },
  ];
  await withRawServer(() => sseResponse(frames), async (url) => {
    const reply = await client(url).complete(ask("go"), never());
    assert.deepEqual(reply.toolCalls, [
      {
        id: "call_a",
        type: "function",
        function: { name: "Read", arguments: '{"file_path":"a.ts"}' },
      },
      { id: "call_b", type: "function", function: { name: "Grep", arguments: '{"pattern":"x"}' } },
    ]);
    assert.equal(reply.finishReason, "tool_calls");
    // A field the server left out counts as 0 rather than breaking the sum.
    assert.deepEqual(reply.usage, { promptTokens: 7, completionTokens: 0 });
  });
});

Deno.test("complete: a tool call without an id gets one, object arguments become JSON", async () => {
  const frames = [
    chunk({
      tool_calls: [{ index: 0, function: { name: "Read", arguments: { file_path: "x" } } }],
    }),
    chunk({}, "tool_calls"),
  ];
  await withRawServer(() => sseResponse(frames), async (url) => {
    const reply = await client(url).complete(ask("go"), never());
    assert.equal(reply.toolCalls.length, 1);
    assert.ok(reply.toolCalls[0]!.id !== "", "a non-empty id");
    assert.deepEqual(JSON.parse(reply.toolCalls[0]!.function.arguments), { file_path: "x" });
  });
});

Deno.test("complete: an error chunk mid-stream is an error (retried like a 500)", async () => {
  await withRawServer(
    () =>
      sseResponse([chunk({ content: "par" }), { error: { message: "model crashed" } }], {
        done: false,
      }),
    async (url, count) => {
      const err = await assertRejects(client(url).complete(ask("go"), never()));
      assert.ok(err instanceof ChatHttpError);
      assert.equal(err.detail, "model crashed");
      assert.match(err.message, /ollama reported an error mid-stream: model crashed/);
      assert.equal(count(), MAX_ATTEMPTS);
    },
  );
});

Deno.test("complete: a stream cut before the finish is retried, then the whole reply returned", async () => {
  await withRawServer(
    (n) =>
      n === 1
        ? sseResponse([chunk({ content: "half" })], { done: false })
        : sseResponse([chunk({ content: "whole" }), chunk({}, "stop")]),
    async (url, count) => {
      const reasons: string[] = [];
      const reply = await client(url, { onRetry: (i) => reasons.push(i.reason) })
        .complete(ask("go"), never());
      assert.equal(reply.content, "whole", "the cut attempt's text is not kept");
      assert.equal(count(), 2);
      assert.deepEqual(reasons, ["the stream ended before the reply was complete"]);
    },
  );
});

Deno.test("complete: a stream that gave a finish reason is whole without [DONE]", async () => {
  // Some servers close the stream after the finishing chunk; the reply is complete then.
  await withRawServer(
    () => sseResponse([chunk({ content: "all" }), chunk({}, "length")], { done: false }),
    async (url, count) => {
      const reply = await client(url).complete(ask("go"), never());
      assert.equal(reply.content, "all");
      assert.equal(reply.finishReason, "length");
      assert.equal(count(), 1);
    },
  );
});

Deno.test("complete: a connection that breaks mid-stream is a retried ConnectionError", async () => {
  // A raw socket, so that the connection can be dropped in the middle of a chunked body.
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  let accepted = 0;
  const serving = (async () => {
    for await (const conn of listener) {
      accepted++;
      await conn.read(new Uint8Array(65536));
      const frame = `data: ${JSON.stringify(chunk({ content: "x" }))}\n\n`;
      const head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n" +
        "transfer-encoding: chunked\r\n\r\n";
      const body = `${frame.length.toString(16)}\r\n${frame}\r\n`;
      await conn.write(new TextEncoder().encode(head + body));
      conn.close();
    }
  })();
  try {
    const reasons: string[] = [];
    const err = await assertRejects(
      client(`http://127.0.0.1:${port}`, { onRetry: (i) => reasons.push(i.reason) })
        .complete(ask("go"), never()),
    );
    assert.ok(err instanceof ConnectionError, String(err));
    assert.equal(err.kind, "cut");
    assert.match(err.reason, /^the stream broke: /);
    assert.equal(accepted, MAX_ATTEMPTS);
    assert.equal(reasons.length, MAX_ATTEMPTS - 1);
  } finally {
    listener.close();
    await serving.catch(() => {});
  }
});

Deno.test("complete: a non-JSON error body becomes the detail, trimmed", async () => {
  await withRawServer(
    () => new Response("  upstream exploded \n", { status: 400 }),
    async (url) => {
      const err = await assertRejects(client(url).complete(ask("go"), never()));
      assert.ok(err instanceof ChatHttpError);
      assert.equal(err.detail, "upstream exploded");
    },
  );
});

async function assertRejects(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (e) {
    return e;
  }
  assert.fail("expected a rejection");
}

Deno.test("complete: effort reaches the wire as reasoning_effort; off sends none, max is high", async () => {
  await withEmulator({}, async (emu) => {
    const c = client(emu.url);
    for (const effort of ["low", "high", "max", "off"] as const) {
      await c.complete(ask("@reply x", { effort, numCtx: 65536 }), never());
    }
    await c.complete(ask("@reply y"), never());
    const bodies = emu.chatRequests().map((r) => r.json as Json);
    assert.deepEqual(bodies.map((b) => b.reasoning_effort), [
      "low",
      "high",
      "high",
      undefined,
      undefined,
    ]);
    // num_ctx is Ollama's native option: nothing of it goes to an OpenAI-compatible server.
    for (const b of bodies) {
      assert.equal(JSON.stringify(b).includes("65536"), false);
      assert.equal("effort" in b || "numCtx" in b || "options" in b, false);
    }
  });
});

Deno.test("contextLength: vLLM's max_model_len or OpenRouter's context_length, else undefined", async () => {
  const listing = {
    object: "list",
    data: [
      { id: "qwen/qwen3-coder", object: "model", max_model_len: 32768 },
      { id: "openai/gpt-oss-120b", context_length: 131072 },
      { id: "plain", object: "model" },
    ],
  };
  await withRawServer(
    () =>
      new Response(JSON.stringify(listing), { headers: { "content-type": "application/json" } }),
    async (url) => {
      const c = client(url);
      assert.equal(await c.contextLength("qwen/qwen3-coder"), 32768);
      assert.equal(await c.contextLength("openai/gpt-oss-120b"), 131072);
      assert.equal(await c.contextLength("plain"), undefined);
      assert.equal(await c.contextLength("missing"), undefined);
    },
  );
});
