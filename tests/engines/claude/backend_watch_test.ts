import assert from "node:assert/strict";
import {
  BackendWatch,
  ollamaEndpoint,
  type WatchTiming,
} from "../../../src/engines/claude/backend_watch.ts";

const FAST: WatchTiming = { probeTimeoutMs: 300, probeEveryMs: 50, downForMs: 400 };

/** A free loopback port: nothing listens on it until a test serves there. */
function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

function serve(port: number, status = 200) {
  let probes = 0;
  const server = Deno.serve({ hostname: "127.0.0.1", port, onListen: () => {} }, () => {
    probes++;
    return new Response("{}", { status });
  });
  return { server, probes: () => probes };
}

const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

Deno.test("watch: a backend that answers, even 503, is left to Claude Code's retries", async () => {
  const port = freePort();
  const { server, probes } = serve(port, 503);
  const gone: string[] = [];
  const watch = new BackendWatch(
    ollamaEndpoint(`http://127.0.0.1:${port}`),
    (t) => gone.push(t),
    FAST,
  );
  try {
    watch.retried();
    await wait(FAST.downForMs * 2);
    watch.retried();
    await wait(FAST.downForMs * 2);
    assert.deepEqual(gone, []);
    assert.equal(probes(), 2, "one probe per reported retry");
  } finally {
    await watch.close();
    await server.shutdown();
  }
});

Deno.test("watch: a backend that does not answer for downForMs is gone, in the native engine's words", async () => {
  const url = `http://127.0.0.1:${freePort()}`;
  const gone: { text: string; at: number }[] = [];
  const watch = new BackendWatch(
    ollamaEndpoint(url),
    (text) => gone.push({ text, at: performance.now() }),
    FAST,
  );
  const t0 = performance.now();
  watch.retried();
  watch.retried(); // a second retry while the first check runs starts no second one
  await wait(FAST.downForMs + 500);
  await watch.close();
  assert.equal(gone.length, 1);
  assert.match(
    gone[0]!.text,
    /^backend_unreachable: Cannot reach Ollama at http:\/\/127\.0\.0\.1:\d+: connection failed \(.+\)\. Start it with "ollama serve" or the Ollama app$/,
  );
  assert.ok(gone[0]!.text.includes(url));
  const after = gone[0]!.at - t0;
  assert.ok(after >= FAST.downForMs, `declared gone after ${Math.round(after)} ms`);
});

Deno.test("watch: a backend back within downForMs keeps the turn", async () => {
  const port = freePort();
  const gone: string[] = [];
  const watch = new BackendWatch(
    ollamaEndpoint(`http://127.0.0.1:${port}`),
    (t) => gone.push(t),
    FAST,
  );
  watch.retried();
  await wait(FAST.downForMs / 2);
  const { server, probes } = serve(port);
  try {
    await wait(FAST.downForMs * 2);
    assert.deepEqual(gone, []);
    assert.equal(probes(), 1, "probing stopped once it answered");
  } finally {
    await watch.close();
    await server.shutdown();
  }
});

Deno.test("watch: closed, it probes no more and reports nothing", async () => {
  const gone: string[] = [];
  const watch = new BackendWatch(
    ollamaEndpoint(`http://127.0.0.1:${freePort()}`),
    (t) => gone.push(t),
    FAST,
  );
  watch.retried();
  await wait(FAST.downForMs / 2);
  await watch.close();
  watch.retried();
  await wait(FAST.downForMs * 2);
  assert.deepEqual(gone, []);
});
