/**
 * Both chat clients against the same hostile loopback backend (tests/support/hostile_backend.ts),
 * each in its own protocol: ChatClient (OpenAI-compatible, server-sent events) and
 * OllamaChatClient (Ollama's /api/chat, NDJSON). Every cap ends the reply with an error that
 * names it while reading stops (the backend sees the hang-up long before its flood ends), and a
 * reply that is not a chat stream is reported as such, not as a dead server. One table, one
 * suite: a cap or a protocol error added to one client is asked of the other.
 */
import assert from "node:assert/strict";
import {
  BackendReplyError,
  ChatClient,
  ChatHttpError,
  ConnectionError,
  MAX_ATTEMPTS,
  REPLY_LIMITS,
  type ReplyLimits,
} from "../../src/backends/openai/chat.ts";
import { OllamaChatClient } from "../../src/backends/ollama/chat.ts";
import {
  type HostileBackend,
  type HostileMode,
  type Protocol,
  startHostileBackend,
} from "../support/hostile_backend.ts";

const MiB = 1024 * 1024;
const never = () => new AbortController().signal;
const ask = { model: "qwen3:8b", messages: [{ role: "user" as const, content: "go" }] };

interface ClientOptions {
  baseUrl: string;
  label: string;
  backoffMs?: () => number;
  limits?: Partial<ReplyLimits>;
}

/** One chat client and what differs in its words; everything else is asked of both. */
interface ChatKind {
  name: string;
  protocol: Protocol;
  client(o: ClientOptions): { complete: ChatClient["complete"] };
  /** The error's words when a reply is not a stream of this protocol. */
  notAStream: RegExp;
  /** The reason for random bytes. */
  garbage: RegExp;
  /** The reason for a line that never ends. */
  longLine: string;
  /** Whether the protocol has thinking text, counted against the text cap. */
  thinking: boolean;
}

const KINDS: ChatKind[] = [
  {
    name: "openai-compatible",
    protocol: "openai",
    client: (o) => new ChatClient(o),
    notAStream: /^flood did not send a chat completion stream: /,
    garbage: /^a line that is not server-sent events: binary data, not text$/,
    longLine: "a line or event over 16 MiB (the cap for one)",
    thinking: true,
  },
  {
    name: "ollama",
    protocol: "ollama",
    client: (o) => new OllamaChatClient(o),
    notAStream: /^flood did not send an Ollama chat stream: /,
    garbage: /^a line that is not JSON: binary data, not text$/,
    longLine: "a line over 16 MiB (the cap for one)",
    thinking: true,
  },
];

async function withHostile(
  kind: ChatKind,
  mode: HostileMode,
  fn: (
    hostile: HostileBackend,
    client: (limits?: Partial<ReplyLimits>) => { complete: ChatClient["complete"] },
  ) => Promise<void>,
  floodBytes = 1024 * MiB,
): Promise<void> {
  const hostile = await startHostileBackend({ mode, floodBytes, protocol: kind.protocol });
  try {
    await fn(hostile, (limits) =>
      kind.client({
        baseUrl: hostile.url,
        label: "flood",
        backoffMs: () => 10,
        ...(limits ? { limits } : {}),
      }));
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
  const chats = hostile.chats();
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

for (const kind of KINDS) {
  const name = (what: string) => `${kind.name}: ${what}`;

  Deno.test(
    name("endless content stops at the text cap with the default limits; one attempt"),
    async () => {
      await withHostile(kind, "content", async (hostile, client) => {
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
    },
  );

  Deno.test(name("a smaller text cap is honoured, and text under it is whole"), async () => {
    await withHostile(kind, "content", async (hostile, client) => {
      const err = await rejection(client({ contentChars: 100_000 }).complete(ask, never()));
      assert.ok(err instanceof BackendReplyError, String(err));
      assert.match(err.reason, /^over 100,000 characters of text/);
      await assertStopped(hostile, 8 * MiB);
    });
    // 64 KiB of flood fits under a 100,000 cap: the reply ends normally.
    await withHostile(kind, "content", async (_hostile, client) => {
      const reply = await client({ contentChars: 100_000 }).complete(ask, never());
      assert.equal(reply.content.length, 64 * 1024);
      assert.equal(reply.finishReason, "stop");
    }, 64 * 1024);
  });

  if (kind.thinking) {
    Deno.test(name("endless thinking is counted against the same cap"), async () => {
      await withHostile(kind, "thinking", async (hostile, client) => {
        const err = await rejection(client({ contentChars: 100_000 }).complete(ask, never()));
        assert.ok(err instanceof BackendReplyError, String(err));
        assert.match(err.reason, /^over 100,000 characters of text/);
        await assertStopped(hostile, 8 * MiB);
      });
    });
  }

  Deno.test(name("endless tool-call arguments stop at the tool-call cap"), async () => {
    await withHostile(kind, "arguments", async (hostile, client) => {
      const err = await rejection(client().complete(ask, never()));
      assert.ok(err instanceof BackendReplyError, String(err));
      assert.equal(
        err.reason,
        "over 10,000,000 characters of tool-call arguments in one reply (the cap)",
      );
      await assertStopped(hostile, 64 * MiB);
    });
  });

  Deno.test(name("endless distinct tool calls stop at the count cap"), async () => {
    await withHostile(kind, "tool-calls", async (hostile, client) => {
      const err = await rejection(client().complete(ask, never()));
      assert.ok(err instanceof BackendReplyError, String(err));
      assert.equal(err.reason, "over 256 tool calls in one reply (the cap)");
      await assertStopped(hostile, 16 * MiB);
    });
  });

  Deno.test(
    name("a line without end stops at the line cap, without scanning it again per chunk"),
    async () => {
      await withHostile(kind, "endless-line", async (hostile, client) => {
        const started = performance.now();
        const err = await rejection(client().complete(ask, never()));
        const ms = performance.now() - started;
        assert.ok(err instanceof BackendReplyError, String(err));
        assert.equal(err.reason, kind.longLine);
        await assertStopped(hostile, 64 * MiB);
        // Rescanning the whole pending line on each 16 KiB chunk (quadratic) takes minutes here.
        assert.ok(ms < 20_000, `took ${ms.toFixed(0)} ms`);
      });
    },
  );

  Deno.test(
    name("an endless HTTP 500 body is read to 64 KiB on each attempt, then dropped"),
    async () => {
      await withHostile(kind, "error500", async (hostile, client) => {
        const err = await rejection(client().complete(ask, never()));
        assert.ok(err instanceof ChatHttpError, String(err));
        assert.equal(err.status, 500);
        assert.match(err.detail, /\[error body over 64 KiB, not read\]$/);
        assert.ok(err.detail.length < 1000, `detail of ${err.detail.length} chars`);
        await settled(hostile);
        const chats = hostile.chats();
        assert.equal(chats.length, MAX_ATTEMPTS, "a 500 is still retried");
        for (const r of chats) {
          assert.equal(r.cancelled, true);
          assert.ok(r.sentBytes < 16 * MiB, `backend sent ${r.sentBytes} bytes`);
        }
      });
    },
  );

  Deno.test(name("aborting during a flood stops the reading at once"), async () => {
    await withHostile(kind, "empty-deltas", async (hostile, client) => {
      const ac = new AbortController();
      setTimeout(() => ac.abort(), 300);
      const started = performance.now();
      await rejection(client().complete(ask, ac.signal));
      assert.ok(performance.now() - started < 3000);
      await settled(hostile);
      assert.equal(hostile.chats()[0]!.cancelled, true);
      const sent = hostile.sentBytes();
      assert.ok(sent > 0);
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(hostile.sentBytes(), sent, "no bytes after the hang-up");
    }, Infinity);
  });

  Deno.test(
    name("garbage, an HTML page, a JSON body are protocol errors, not retried"),
    async () => {
      const cases: Array<[HostileMode, RegExp]> = [
        ["garbage", kind.garbage],
        ["html", /^it answered with text\/html instead of an event stream, "<!DOCTYPE html>/],
        [
          "json",
          /^it answered with application\/json instead of an event stream, an error: model is still loading$/,
        ],
      ];
      for (const [mode, reason] of cases) {
        await withHostile(kind, mode, async (hostile, client) => {
          const err = await rejection(client().complete(ask, never()));
          assert.ok(err instanceof BackendReplyError, `${mode}: ${err}`);
          assert.equal(err.kind, "protocol", mode);
          assert.match(err.reason, reason, mode);
          assert.match(err.message, kind.notAStream);
          assert.equal(hostile.requests.length, 1, `${mode}: not retried`);
        }, 4 * MiB);
      }
    },
  );

  Deno.test(
    name("a cut or truncated stream is a retried ConnectionError of kind cut"),
    async () => {
      const cases: Array<[HostileMode, RegExp]> = [
        ["cut", /^the stream broke: /],
        ["truncated", /^the stream ended before the reply was complete$/],
      ];
      for (const [mode, reason] of cases) {
        await withHostile(kind, mode, async (hostile, client) => {
          const err = await rejection(client().complete(ask, never()));
          assert.ok(err instanceof ConnectionError, `${mode}: ${err}`);
          assert.equal(err.kind, "cut");
          assert.match(err.reason, reason);
          assert.match(err.message, /^flood broke off its reply: /);
          assert.equal(hostile.requests.length, MAX_ATTEMPTS, mode);
        });
      }
    },
  );
}

// What only server-sent events have: events, a models listing of its own, llama.cpp's `error:`.

Deno.test("openai-compatible: an endless /v1/models answer stops at the JSON cap", async () => {
  const hostile = await startHostileBackend({ mode: "garbage", floodBytes: 1024 * MiB });
  try {
    const client = new ChatClient({ baseUrl: hostile.url, label: "flood", backoffMs: () => 10 });
    const err = await rejection(client.models());
    assert.ok(err instanceof BackendReplyError, String(err));
    assert.equal(err.reason, "over 8 MiB in answer to /v1/models");
    await settled(hostile);
    assert.equal(hostile.requests[0]!.cancelled, true);
  } finally {
    await hostile.close();
  }
});

Deno.test("openai-compatible: an event whose data is not JSON is named, with a sample", async () => {
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

Deno.test("openai-compatible: llama.cpp's `error:` line is the server's error, retried like a 500", async () => {
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
