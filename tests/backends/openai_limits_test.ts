/**
 * ChatClient against a hostile loopback backend: every cap ends the reply with an error that
 * names it, reading stops (the backend sees the hang-up long before its flood ends), and a
 * reply that is not a chat completion stream is reported as such, not as a dead server.
 */
import assert from "node:assert/strict";
import {
  BackendReplyError,
  ChatClient,
  type ChatClientOptions,
  ChatHttpError,
  ConnectionError,
  MAX_ATTEMPTS,
  REPLY_LIMITS,
} from "../../src/backends/openai.ts";
import {
  type HostileBackend,
  type HostileMode,
  startHostileBackend,
} from "../support/hostile_backend.ts";

const MiB = 1024 * 1024;
const never = () => new AbortController().signal;
const ask = { model: "qwen3:8b", messages: [{ role: "user" as const, content: "go" }] };

async function withHostile(
  mode: HostileMode,
  fn: (hostile: HostileBackend, client: (o?: Partial<ChatClientOptions>) => ChatClient) => Promise<
    void
  >,
  floodBytes = 1024 * MiB,
): Promise<void> {
  const hostile = await startHostileBackend({ mode, floodBytes });
  try {
    await fn(
      hostile,
      (o = {}) =>
        new ChatClient({ baseUrl: hostile.url, label: "flood", backoffMs: () => 10, ...o }),
    );
  } finally {
    await hostile.close();
  }
}

async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (e) {
    return e;
  }
  assert.fail("expected a rejection");
}

/** Waits (up to 5 s) for the backend to see every request hung up or ended. */
async function settled(hostile: HostileBackend): Promise<void> {
  const deadline = Date.now() + 5000;
  while (hostile.requests.some((r) => !r.cancelled && !r.ended) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The one chat request: the client hung up, after reading little of the flood. */
async function assertStopped(hostile: HostileBackend, maxBytes: number): Promise<void> {
  await settled(hostile);
  const chats = hostile.requests.filter((r) => r.path === "/v1/chat/completions");
  assert.equal(chats.length, 1, "not retried");
  assert.equal(chats[0]!.cancelled, true, "the client hung up");
  assert.ok(chats[0]!.sentBytes < maxBytes, `backend sent ${chats[0]!.sentBytes} bytes`);
}

Deno.test("limits: the defaults and why they fit together", () => {
  // A whole tool call (Ollama sends each in one event) fits in one line, escapes included.
  assert.ok(REPLY_LIMITS.lineBytes >= REPLY_LIMITS.toolCallChars * 1.5);
  // The Write tool's 8 MiB content fits in the tool-call arguments.
  assert.ok(REPLY_LIMITS.toolCallChars > 8 * MiB);
  assert.equal(REPLY_LIMITS.errorBodyBytes, 64 * 1024);
});

Deno.test("limits: endless content stops at the text cap with the default limits; one attempt", async () => {
  await withHostile("content", async (hostile, client) => {
    const err = await rejection(client().complete(ask, never()));
    assert.ok(err instanceof BackendReplyError, String(err));
    assert.equal(err.kind, "limit");
    assert.equal(err.reason, "over 4,000,000 characters of text in one reply (the cap)");
    assert.equal(
      err.message,
      "flood sent over 4,000,000 characters of text in one reply (the cap); reading stopped",
    );
    await assertStopped(hostile, 64 * MiB);
  });
});

Deno.test("limits: a smaller text cap is honoured, and text under it is whole", async () => {
  await withHostile("content", async (hostile, client) => {
    const err = await rejection(
      client({ limits: { contentChars: 100_000 } }).complete(ask, never()),
    );
    assert.ok(err instanceof BackendReplyError);
    assert.match(err.reason, /^over 100,000 characters of text/);
    await assertStopped(hostile, 8 * MiB);
  });
  // 64 KiB of flood fits under a 100,000 cap: the reply ends normally.
  await withHostile("content", async (_hostile, client) => {
    const reply = await client({ limits: { contentChars: 100_000 } }).complete(ask, never());
    assert.equal(reply.content.length, 64 * 1024);
    assert.equal(reply.finishReason, "stop");
  }, 64 * 1024);
});

Deno.test("limits: endless tool-call arguments stop at the tool-call cap", async () => {
  await withHostile("arguments", async (hostile, client) => {
    const err = await rejection(client().complete(ask, never()));
    assert.ok(err instanceof BackendReplyError, String(err));
    assert.equal(
      err.reason,
      "over 10,000,000 characters of tool-call arguments in one reply (the cap)",
    );
    await assertStopped(hostile, 64 * MiB);
  });
});

Deno.test("limits: endless distinct tool calls stop at the count cap", async () => {
  await withHostile("tool-calls", async (hostile, client) => {
    const err = await rejection(client().complete(ask, never()));
    assert.ok(err instanceof BackendReplyError, String(err));
    assert.equal(err.reason, "over 256 tool calls in one reply (the cap)");
    await assertStopped(hostile, 16 * MiB);
  });
});

Deno.test("limits: a line without end stops at the line cap, without scanning it again per chunk", async () => {
  await withHostile("endless-line", async (hostile, client) => {
    const started = performance.now();
    const err = await rejection(client().complete(ask, never()));
    const ms = performance.now() - started;
    assert.ok(err instanceof BackendReplyError, String(err));
    assert.equal(err.reason, "a line or event over 16 MiB (the cap for one)");
    await assertStopped(hostile, 64 * MiB);
    // Rescanning the whole pending line on each 16 KiB chunk (quadratic) takes minutes here.
    assert.ok(ms < 20_000, `took ${ms.toFixed(0)} ms`);
  });
});

Deno.test("limits: an endless HTTP 500 body is read to 64 KiB on each attempt, then dropped", async () => {
  await withHostile("error500", async (hostile, client) => {
    const err = await rejection(client().complete(ask, never()));
    assert.ok(err instanceof ChatHttpError, String(err));
    assert.equal(err.status, 500);
    assert.match(err.detail, /\[error body over 64 KiB, not read\]$/);
    assert.ok(err.detail.length < 1000, `detail of ${err.detail.length} chars`);
    await settled(hostile);
    const chats = hostile.requests.filter((r) => r.path === "/v1/chat/completions");
    assert.equal(chats.length, MAX_ATTEMPTS, "a 500 is still retried");
    for (const r of chats) {
      assert.equal(r.cancelled, true);
      assert.ok(r.sentBytes < 16 * MiB, `backend sent ${r.sentBytes} bytes`);
    }
  });
});

Deno.test("limits: an endless /v1/models answer stops at the JSON cap", async () => {
  await withHostile("error500", async (hostile, client) => {
    hostile.setMode("garbage");
    const err = await rejection(client().models());
    assert.ok(err instanceof BackendReplyError, String(err));
    assert.equal(err.reason, "over 8 MiB in answer to /v1/models");
    await settled(hostile);
    assert.equal(hostile.requests[0]!.cancelled, true);
  });
});

Deno.test("limits: aborting during a flood stops the reading at once", async () => {
  await withHostile("empty-deltas", async (hostile, client) => {
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 300);
    const started = performance.now();
    await rejection(client().complete(ask, ac.signal));
    assert.ok(performance.now() - started < 3000);
    await settled(hostile);
    assert.equal(hostile.requests[0]!.cancelled, true);
    const sent = hostile.sentBytes();
    assert.ok(sent > 0);
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(hostile.sentBytes(), sent, "no bytes after the hang-up");
  }, Infinity);
});

Deno.test("protocol: garbage, an HTML page, a JSON body are protocol errors, not retried", async () => {
  const cases: Array<[HostileMode, RegExp]> = [
    ["garbage", /^a line that is not server-sent events: binary data, not text$/],
    ["html", /^it answered with text\/html instead of an event stream, "<!DOCTYPE html>/],
    [
      "json",
      /^it answered with application\/json instead of an event stream, an error: model is still loading$/,
    ],
  ];
  for (const [mode, reason] of cases) {
    await withHostile(mode, async (hostile, client) => {
      const err = await rejection(client().complete(ask, never()));
      assert.ok(err instanceof BackendReplyError, `${mode}: ${err}`);
      assert.equal(err.kind, "protocol", mode);
      assert.match(err.reason, reason, mode);
      assert.match(err.message, /^flood did not send a chat completion stream: /);
      assert.equal(hostile.requests.length, 1, `${mode}: not retried`);
    }, 4 * MiB);
  }
});

Deno.test("protocol: a cut or truncated stream is a retried ConnectionError of kind cut", async () => {
  const cases: Array<[HostileMode, RegExp]> = [
    ["cut", /^the stream broke: /],
    ["truncated", /^the stream ended before the reply was complete$/],
  ];
  for (const [mode, reason] of cases) {
    await withHostile(mode, async (hostile, client) => {
      const err = await rejection(client().complete(ask, never()));
      assert.ok(err instanceof ConnectionError, `${mode}: ${err}`);
      assert.equal(err.kind, "cut");
      assert.match(err.reason, reason);
      assert.match(err.message, /^flood broke off its reply: /);
      assert.equal(hostile.requests.length, MAX_ATTEMPTS, mode);
    });
  }
});

Deno.test("protocol: an event whose data is not JSON is named, with a sample", async () => {
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    () =>
      new Response("data: {oops this is not json\n\n", {
        headers: { "content-type": "text/event-stream" },
      }),
  );
  try {
    const client = new ChatClient({ baseUrl: `http://127.0.0.1:${server.addr.port}`, label: "x" });
    const err = await rejection(client.complete(ask, never()));
    assert.ok(err instanceof BackendReplyError, String(err));
    assert.equal(err.reason, 'an event whose data is not JSON: "{oops this is not json"');
  } finally {
    await server.shutdown();
  }
});

Deno.test("protocol: llama.cpp's `error:` line is the server's error, retried like a 500", async () => {
  let n = 0;
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    () => {
      n++;
      return new Response('error: {"code":500,"message":"context overflow"}\n\n', {
        headers: { "content-type": "text/event-stream" },
      });
    },
  );
  try {
    const client = new ChatClient({
      baseUrl: `http://127.0.0.1:${server.addr.port}`,
      label: "llama",
      backoffMs: () => 10,
    });
    const err = await rejection(client.complete(ask, never()));
    assert.ok(err instanceof ChatHttpError, String(err));
    assert.equal(err.detail, "context overflow");
    assert.equal(n, MAX_ATTEMPTS);
  } finally {
    await server.shutdown();
  }
});
