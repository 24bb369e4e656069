/**
 * The native engine against a backend that floods, cuts or speaks another protocol: the real
 * server over stdio, a loopback backend from tests/support/hostile_backend.ts. A flood must
 * end the job with an error naming the backend and the cap while the server's memory stays
 * bounded and delegate_status stays prompt; other bad replies must be reported as what they
 * are, not as an unreachable server.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { field, startServer, tempDir, type TestServer, until } from "../support/harness.ts";
import {
  type HostileBackend,
  type HostileMode,
  peakMiB,
  startHostileBackend,
  watchJob,
} from "../support/hostile_backend.ts";

const MiB = 1024 * 1024;
/** The server's peak resident memory must stay under this while a backend floods it. */
const PEAK_LIMIT_MIB = 200;
/**
 * Huge replies turn after turn: the conversation rightly holds two replies near the turn's
 * 4,000,000-character cap and sends the first one back (about 8 million characters, encoded
 * again for the request), so it peaks higher (177-201 MiB measured on Deno and Node); without
 * the cap it would grow by 4 million characters for each of max_turns requests, past 1 GiB.
 */
const TURNS_PEAK_LIMIT_MIB = 256;
/**
 * A line without end: the line is held up to its 16 MiB cap, in pieces as they came, and the
 * flood's chunks already dropped wait for the collector, which lags further behind on a busy
 * machine: 157-161 MiB measured alone, 175-186 MiB beside three busy loops, 202 MiB once in a
 * whole-suite run on 2 cores. Unbounded, the 400 MiB flood would take the server past 450 MiB.
 */
const LINE_PEAK_LIMIT_MIB = 256;
/**
 * A bound for one delegate_status round trip while the backend floods the server, on a 2-core
 * machine that runs the whole suite at once (three jobs a core): a CI run measured 1,001 ms once
 * under Node at load 5. A server the flood starved would not answer within the 4 s of watching.
 */
const STATUS_LIMIT_MS = 2500;

async function withHostile(
  mode: HostileMode,
  fn: (server: TestServer, hostile: HostileBackend) => Promise<void>,
  floodBytes = 400 * MiB,
): Promise<void> {
  const hostile = await startHostileBackend({ mode, floodBytes });
  const server = await startServer({
    // The default Ollama is the hostile backend too, so nothing else is reachable.
    baseUrl: hostile.url,
    userConfig: {
      backends: { hostile: { url: hostile.url, kind: "openai" } },
      // A context that holds the floods, so that they reach the caps under test (a backend
      // that reports no context gets 100,000 tokens, and the job would stop before sending).
      maxContext: 10_000_000,
    },
  });
  try {
    // The measured pid must be the server itself, not a wrapper that started it.
    const cmdline = readFileSync(`/proc/${server.pid}/cmdline`, "utf8").split("\0");
    assert.match(cmdline[0] ?? "", /(^|\/)(deno|node)$/, `server pid runs ${cmdline.join(" ")}`);
    assert.ok(
      // From source, the Node bundle, or the npm package's bin link (run through its shebang).
      cmdline.some((a) => /(main\.ts|\/ollama-delegate(\.mjs)?)$/.test(a)),
      cmdline.join(" "),
    );
    await fn(server, hostile);
  } finally {
    await server.close();
    await hostile.close();
  }
}

async function startJob(server: TestServer, prompt: string): Promise<string> {
  const reply = await server.call("delegate_start", {
    engine: "native",
    backend: "hostile",
    model: "qwen3:8b",
    prompt,
    cwd: tempDir("od-hostile-"),
    wait_seconds: 0,
  });
  assert.equal(reply.isError, false, reply.text);
  return field(reply.text, "job_id")!;
}

const chatRequests = (hostile: HostileBackend) =>
  hostile.requests.filter((r) => r.path === "/v1/chat/completions");

Deno.test("hostile backend: 400 MB of streamed content ends the job with an error naming the backend and the cap; memory stays bounded and status prompt", async () => {
  await withHostile("content", async (server, hostile) => {
    const id = await startJob(server, "write a lot");
    const watch = await watchJob(server, id, 180_000, 50);
    assert.equal(watch.state, "failed", JSON.stringify(watch));
    assert.match(watch.error, /backend "hostile" \(http:\/\/127\.0\.0\.1:\d+\)/);
    assert.match(watch.error, /over 4,000,000 characters of text in one reply \(the cap\)/);
    assert.doesNotMatch(watch.error, /Cannot reach/);
    assert.ok(watch.peakMiB < PEAK_LIMIT_MIB, `server peak RSS ${watch.peakMiB.toFixed(0)} MiB`);
    // The cap is reached within about a second, so only a few calls fall within the flood.
    assert.ok(watch.statusMs.length >= 1, "delegate_status was asked during the flood");
    const slowest = Math.max(...watch.statusMs);
    assert.ok(slowest < STATUS_LIMIT_MS, `slowest delegate_status: ${slowest.toFixed(0)} ms`);
    // Reading stopped: one attempt (a flood is not retried), cut off far before its end.
    const [chat, ...more] = chatRequests(hostile);
    assert.equal(more.length, 0, "not retried");
    // The hang-up reaches the backend a moment after the job failed; under load, later.
    await until(() => chat!.cancelled, 5000, "the client to hang up on the flooding backend");
    assert.ok(chat!.sentBytes < 64 * MiB, `backend sent ${chat!.sentBytes} bytes`);
  });
});

/** Each flood on a fresh server, so that each peak is its own. */
const floods: Array<[HostileMode, RegExp, number, string]> = [
  [
    "arguments",
    /over 10,000,000 characters of tool-call arguments in one reply/,
    1,
    "endless tool-call arguments",
  ],
  ["tool-calls", /over 256 tool calls in one reply/, 1, "endless tool calls"],
  ["endless-line", /a line or event over 16 MiB/, 1, "a line without end"],
  // A 500 is retried: each attempt reads only the start of the body.
  [
    "error500",
    /HTTP 500: .*\[error body over 64 KiB, not read\]/,
    3,
    "an endless HTTP 500 body",
  ],
  // Replies of 3.9 million characters, each with a new tool call: the turn stops at the
  // second instead of going on for max_turns (25) requests that resend all of it.
  [
    "turns",
    /passed 4,000,000 characters \(the cap for one turn/,
    2,
    "huge replies turn after turn",
  ],
];

for (const [mode, expected, attempts, what] of floods) {
  Deno.test(`hostile backend: ${what} ends the job with a clear error, memory bounded`, async () => {
    await withHostile(mode, async (server, hostile) => {
      const watch = await watchJob(server, await startJob(server, mode), 180_000);
      assert.equal(watch.state, "failed", JSON.stringify(watch));
      assert.match(watch.error, /backend "hostile"/);
      assert.match(watch.error, expected);
      const limit = mode === "turns"
        ? TURNS_PEAK_LIMIT_MIB
        : mode === "endless-line"
        ? LINE_PEAK_LIMIT_MIB
        : PEAK_LIMIT_MIB;
      assert.ok(watch.peakMiB < limit, `server peak RSS ${watch.peakMiB.toFixed(0)} MiB`);
      const requests = chatRequests(hostile);
      assert.equal(requests.length, attempts);
      for (const r of requests) {
        // The huge turns are whole replies; every other flood is cut off by the client.
        assert.equal(r.cancelled || mode === "turns", true, "the client hung up");
        assert.ok(r.sentBytes < 64 * MiB, `backend sent ${r.sentBytes} bytes`);
      }
    });
  });
}

Deno.test("hostile backend: garbage, a cut stream, an HTML page and a JSON body are reported as what they are, not as an unreachable server", async () => {
  await withHostile("garbage", async (server, hostile) => {
    const cases: Array<[HostileMode, RegExp]> = [
      [
        "garbage",
        /did not answer "qwen3:8b" with an OpenAI-compatible chat completion stream: a line that is not server-sent events/,
      ],
      ["cut", /broke off its reply for "qwen3:8b" \(3 attempts\): the stream broke: /],
      [
        "truncated",
        /broke off its reply .*: the stream ended before the reply was complete/,
      ],
      ["html", /it answered with text\/html instead of an event stream, ".*502 Bad Gateway/],
      [
        "json",
        /it answered with application\/json instead of an event stream, an error: model is still loading/,
      ],
    ];
    for (const [mode, expected] of cases) {
      hostile.setMode(mode);
      const watch = await watchJob(server, await startJob(server, mode), 120_000);
      assert.equal(watch.state, "failed", `${mode}: ${JSON.stringify(watch)}`);
      assert.match(watch.error, /backend "hostile"/, mode);
      assert.match(watch.error, expected, mode);
      assert.doesNotMatch(watch.error, /Cannot reach|ollama serve/, mode);
    }
  }, 4 * MiB);
});

Deno.test("hostile backend: while a backend streams empty deltas without end, status stays prompt and cancel stops the flood", async () => {
  await withHostile("empty-deltas", async (server, hostile) => {
    const id = await startJob(server, "stall");
    const statusMs: number[] = [];
    const watchUntil = Date.now() + 4000;
    while (Date.now() < watchUntil) {
      const t0 = performance.now();
      const reply = await server.call("delegate_status", { job_id: id });
      statusMs.push(performance.now() - t0);
      assert.match(field(reply.text, "state") ?? "", /^(queued|running)/, reply.text);
      await new Promise((r) => setTimeout(r, 100));
    }
    const flowing = hostile.sentBytes();
    assert.ok(flowing > 4 * MiB, `the flood was on: ${flowing} bytes`);
    const slowest = Math.max(...statusMs);
    assert.ok(slowest < STATUS_LIMIT_MS, `slowest of ${statusMs.length}: ${slowest.toFixed(0)} ms`);
    await server.call("delegate_cancel", { job_id: id });
    const after = await server.call("delegate_status", { job_id: id });
    assert.equal(field(after.text, "state"), "cancelled", after.text);
    const [chat] = chatRequests(hostile);
    // The hang-up reaches the backend a moment after the cancel returns; under load, later.
    await until(() => chat!.cancelled, 5000, "the client to hang up on the flooding backend");
    const stopped = hostile.sentBytes();
    await new Promise((r) => setTimeout(r, 500));
    assert.ok(hostile.sentBytes() - stopped < MiB, "no more bytes after the cancel");
    assert.ok(peakMiB(server.pid) < PEAK_LIMIT_MIB);
  }, Infinity);
});
