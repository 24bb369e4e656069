/**
 * OllamaChatClient against a hostile loopback server speaking Ollama's NDJSON: the same caps as
 * ChatClient's (openai_limits_test.ts), each ending the reply with an error that names it while
 * reading stops (the server sees the hang-up long before its flood ends), and a reply that is
 * not an Ollama chat stream is reported as such.
 */
import assert from "node:assert/strict";
import {
  BackendReplyError,
  ChatHttpError,
  ConnectionError,
  MAX_ATTEMPTS,
} from "../../src/backends/openai.ts";
import { OllamaChatClient, type OllamaChatOptions } from "../../src/backends/ollama_chat.ts";

const MiB = 1024 * 1024;
const never = () => new AbortController().signal;
const ask = { model: "qwen3:8b", messages: [{ role: "user" as const, content: "go" }] };
const encoder = new TextEncoder();

type Mode =
  | "content"
  | "thinking"
  | "empty"
  | "tool-calls"
  | "arguments"
  | "endless-line"
  | "error500"
  | "garbage"
  | "html"
  | "json"
  | "cut"
  | "truncated";

interface Hostile {
  url: string;
  requests: Array<{ sentBytes: number; cancelled: boolean; ended: boolean }>;
  sentBytes(): number;
  close(): Promise<void>;
}

const line = (message: Record<string, unknown>) =>
  JSON.stringify({ model: "qwen3:8b", message: { role: "assistant", ...message }, done: false }) +
  "\n";
const DONE = JSON.stringify({ model: "qwen3:8b", done: true, done_reason: "stop" }) + "\n";

/** A server whose every answer to /api/chat is `mode`, produced on demand (a pull stream). */
function startHostile(mode: Mode, floodBytes = Infinity): Hostile {
  const requests: Hostile["requests"] = [];
  const closing = new AbortController();
  const filler = "x".repeat(16 * 1024);

  function flood(
    record: Hostile["requests"][number],
    status: number,
    type: string,
    head: string,
    next: () => string | Uint8Array,
    tail: string,
  ): Response {
    let started = head === "";
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (closing.signal.aborted) return controller.close();
        let out: Uint8Array;
        if (!started) {
          started = true;
          out = encoder.encode(head);
        } else if (sent < floodBytes) {
          const value = next();
          out = typeof value === "string" ? encoder.encode(value) : value;
          sent += out.length;
        } else {
          out = encoder.encode(tail);
          record.ended = true;
          record.sentBytes += out.length;
          controller.enqueue(out);
          return controller.close();
        }
        record.sentBytes += out.length;
        controller.enqueue(out);
      },
      cancel() {
        if (!record.ended) record.cancelled = true;
      },
    }, { highWaterMark: 0 });
    return new Response(stream, { status, headers: { "content-type": type } });
  }

  function fixed(
    record: Hostile["requests"][number],
    status: number,
    type: string,
    text: string,
    cut = false,
  ): Response {
    let done = false;
    const stream = new ReadableStream<Uint8Array>({
      async pull(controller) {
        if (!done) {
          done = true;
          const bytes = encoder.encode(text);
          record.sentBytes += bytes.length;
          return controller.enqueue(bytes);
        }
        if (cut) {
          await new Promise((r) => setTimeout(r, 50));
          return controller.error(new Error("hostile: connection cut on purpose"));
        }
        record.ended = true;
        controller.close();
      },
      cancel() {
        if (!record.ended) record.cancelled = true;
      },
    }, { highWaterMark: 0 });
    return new Response(stream, { status, headers: { "content-type": type } });
  }

  const NDJSON = "application/x-ndjson";
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {}, signal: closing.signal },
    async (req) => {
      await req.arrayBuffer().catch(() => {});
      const record = { sentBytes: 0, cancelled: false, ended: false };
      requests.push(record);
      let index = 0;
      let seed = 12345;
      switch (mode) {
        case "content":
          return flood(record, 200, NDJSON, "", () => line({ content: filler }), DONE);
        case "thinking":
          return flood(
            record,
            200,
            NDJSON,
            "",
            () => line({ content: "", thinking: filler }),
            DONE,
          );
        case "empty":
          return flood(record, 200, NDJSON, "", () => line({ content: "" }).repeat(200), DONE);
        case "tool-calls":
          return flood(record, 200, NDJSON, "", () =>
            line({
              content: "",
              tool_calls: [{
                function: { index: index++, name: "Read", arguments: { file_path: "a" } },
              }],
            }), DONE);
        case "arguments":
          return flood(record, 200, NDJSON, "", () =>
            line({
              content: "",
              tool_calls: [{
                function: {
                  index: index++,
                  name: "Write",
                  arguments: { file_path: "x", content: "y".repeat(MiB) },
                },
              }],
            }), DONE);
        case "endless-line":
          return flood(
            record,
            200,
            NDJSON,
            '{"message":{"role":"assistant","content":"',
            () => filler,
            '"}}\n',
          );
        case "error500":
          return flood(
            record,
            500,
            "application/json",
            '{"error":"',
            () => filler,
            '"}',
          );
        case "garbage": {
          const bytes = new Uint8Array(16 * 1024);
          return flood(record, 200, NDJSON, "", () => {
            for (let i = 0; i < bytes.length; i++) {
              seed = (seed * 1103515245 + 12345) >>> 0;
              bytes[i] = seed >>> 24;
            }
            return bytes.slice();
          }, "");
        }
        case "html":
          return fixed(
            record,
            200,
            "text/html",
            "<!DOCTYPE html>\n<html><body><h1>502 Bad Gateway</h1></body></html>\n",
          );
        case "json":
          return fixed(
            record,
            200,
            "application/json; charset=utf-8",
            JSON.stringify({ error: "model is still loading" }),
          );
        case "cut":
        case "truncated":
          return fixed(
            record,
            200,
            NDJSON,
            line({ content: "half " }) + line({ content: "a rep" }),
            mode === "cut",
          );
      }
    },
  );
  server.finished.catch(() => {});
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    requests,
    sentBytes: () => requests.reduce((n, r) => n + r.sentBytes, 0),
    async close() {
      closing.abort();
      await server.finished.catch(() => {});
    },
  };
}

async function withHostile(
  mode: Mode,
  fn: (hostile: Hostile, client: (o?: Partial<OllamaChatOptions>) => OllamaChatClient) => Promise<
    void
  >,
  floodBytes = 1024 * MiB,
): Promise<void> {
  const hostile = startHostile(mode, floodBytes);
  try {
    await fn(
      hostile,
      (o = {}) =>
        new OllamaChatClient({ baseUrl: hostile.url, label: "flood", backoffMs: () => 10, ...o }),
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

async function settled(hostile: Hostile): Promise<void> {
  const deadline = Date.now() + 5000;
  while (hostile.requests.some((r) => !r.cancelled && !r.ended) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** One request, hung up by the client after little of the flood. */
async function assertStopped(hostile: Hostile, maxBytes: number): Promise<void> {
  await settled(hostile);
  assert.equal(hostile.requests.length, 1, "not retried");
  assert.equal(hostile.requests[0]!.cancelled, true, "the client hung up");
  assert.ok(hostile.requests[0]!.sentBytes < maxBytes, `sent ${hostile.requests[0]!.sentBytes}`);
}

Deno.test("ndjson limits: endless content stops at the text cap; one attempt", async () => {
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

Deno.test("ndjson limits: endless thinking is counted against the same cap", async () => {
  await withHostile("thinking", async (hostile, client) => {
    const err = await rejection(
      client({ limits: { contentChars: 100_000 } }).complete(ask, never()),
    );
    assert.ok(err instanceof BackendReplyError, String(err));
    assert.match(err.reason, /^over 100,000 characters of text/);
    await assertStopped(hostile, 8 * MiB);
  });
});

Deno.test("ndjson limits: endless tool calls stop at the count cap, huge ones at the size cap", async () => {
  await withHostile("tool-calls", async (hostile, client) => {
    const err = await rejection(client().complete(ask, never()));
    assert.ok(err instanceof BackendReplyError, String(err));
    assert.equal(err.reason, "over 256 tool calls in one reply (the cap)");
    await assertStopped(hostile, 16 * MiB);
  });
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

Deno.test("ndjson limits: a line without end stops at the line cap", async () => {
  await withHostile("endless-line", async (hostile, client) => {
    const started = performance.now();
    const err = await rejection(client().complete(ask, never()));
    assert.ok(err instanceof BackendReplyError, String(err));
    assert.equal(err.reason, "a line over 16 MiB (the cap for one)");
    await assertStopped(hostile, 64 * MiB);
    assert.ok(performance.now() - started < 20_000);
  });
});

Deno.test("ndjson limits: an endless HTTP 500 body is read to 64 KiB on each attempt", async () => {
  await withHostile("error500", async (hostile, client) => {
    const err = await rejection(client().complete(ask, never()));
    assert.ok(err instanceof ChatHttpError, String(err));
    assert.equal(err.status, 500);
    assert.match(err.detail, /\[error body over 64 KiB, not read\]$/);
    await settled(hostile);
    assert.equal(hostile.requests.length, MAX_ATTEMPTS, "a 500 is still retried");
    for (const r of hostile.requests) {
      assert.equal(r.cancelled, true);
      assert.ok(r.sentBytes < 16 * MiB);
    }
  });
});

Deno.test("ndjson limits: aborting during a flood stops the reading at once", async () => {
  await withHostile("empty", async (hostile, client) => {
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

Deno.test("ndjson protocol: garbage, an HTML page, a JSON body are protocol errors, not retried", async () => {
  const cases: Array<[Mode, RegExp]> = [
    ["garbage", /^a line that is not JSON: binary data, not text$/],
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
      assert.match(err.message, /^flood did not send an Ollama chat stream: /);
      assert.equal(hostile.requests.length, 1, `${mode}: not retried`);
    }, 4 * MiB);
  }
});

Deno.test("ndjson protocol: a cut or truncated stream is a retried ConnectionError of kind cut", async () => {
  const cases: Array<[Mode, RegExp]> = [
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
