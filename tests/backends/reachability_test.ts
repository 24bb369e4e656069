import assert from "node:assert/strict";
import { ConnectionError } from "../../src/backends/chat_types.ts";
import { probeBackend } from "../../src/backends/reachability.ts";

/** A loopback URL on which nothing listens: connections are refused. */
function refusedUrl(): string {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const url = `http://127.0.0.1:${(listener.addr as Deno.NetAddr).port}`;
  listener.close();
  return url;
}

Deno.test("probe: any HTTP answer counts, an error status too", async () => {
  const paths: string[] = [];
  for (const status of [200, 404, 503]) {
    await using server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (r) => {
      paths.push(new URL(r.url).pathname);
      return new Response("x".repeat(100_000), { status });
    });
    const url = `http://127.0.0.1:${server.addr.port}`;
    assert.equal(await probeBackend(url, { timeoutMs: 2000 }), undefined, `HTTP ${status}`);
  }
  assert.deepEqual(paths, ["/api/version", "/api/version", "/api/version"]);
});

Deno.test("probe: a refused connection is unreachable, with the system's reason", async () => {
  const failure = await probeBackend(refusedUrl(), { timeoutMs: 2000 });
  assert.ok(failure instanceof ConnectionError);
  assert.equal(failure.kind, "unreachable");
  assert.match(failure.reason, /^connection failed \(.*(refused|ECONNREFUSED).*\)$/i);
});

Deno.test("probe: a server that accepts but never answers is unreachable once the timeout passes", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const held: Deno.Conn[] = [];
  const accepting = (async () => {
    for await (const conn of listener) held.push(conn);
  })();
  try {
    const t0 = performance.now();
    const failure = await probeBackend(
      `http://127.0.0.1:${(listener.addr as Deno.NetAddr).port}`,
      { timeoutMs: 300 },
    );
    const took = performance.now() - t0;
    assert.equal(failure?.reason, "connection failed (no answer in time)");
    assert.ok(took >= 250 && took < 2000, `the probe took ${Math.round(took)} ms`);
  } finally {
    listener.close();
    await accepting.catch(() => {});
    for (const conn of held) conn.close();
  }
});

Deno.test("probe: the caller's abort ends it at once", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const held: Deno.Conn[] = [];
  const accepting = (async () => {
    for await (const conn of listener) held.push(conn);
  })();
  try {
    const stop = new AbortController();
    setTimeout(() => stop.abort(), 100);
    const t0 = performance.now();
    const failure = await probeBackend(
      `http://127.0.0.1:${(listener.addr as Deno.NetAddr).port}`,
      { timeoutMs: 10_000, signal: stop.signal },
    );
    assert.ok(failure instanceof ConnectionError);
    assert.ok(performance.now() - t0 < 2000);
  } finally {
    listener.close();
    await accepting.catch(() => {});
    for (const conn of held) conn.close();
  }
});
