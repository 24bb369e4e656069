/** Which endpoint of a pool a turn is placed on, against real endpoints (emulators). */
import assert from "node:assert/strict";
import { EndpointHealth } from "../../../src/backends/endpoint_health.ts";
import { EndpointPlacer, type Placement } from "../../../src/jobs/endpoints/endpoint_pool.ts";
import { LocalEndpointQueues } from "../../../src/jobs/queue/endpoint_queues.ts";
import { startOllamaEmulator } from "../../support/emulator/emulator.ts";

const timing = { probeTimeoutMs: 1000, everyMs: 60_000, freshMs: 0, holdDownMs: 60_000 };

async function withPool(
  n: number,
  fn: (
    urls: [string, string],
    placer: EndpointPlacer,
    close: (i: number) => Promise<void>,
  ) => Promise<void>,
  limits: Array<number | undefined> = [],
): Promise<void> {
  const emus = await Promise.all(Array.from({ length: n }, () => startOllamaEmulator()));
  const urls = emus.map((e) => e.url);
  const placer = new EndpointPlacer(
    {
      baseUrl: "http://127.0.0.1:9",
      baseUrls: urls.map((url, i) =>
        limits[i] !== undefined ? { url, maxConcurrent: limits[i] } : { url }
      ),
      defaultLimit: 4,
      backends: { solo: { url: urls[0]!, kind: "openai" } },
      env: {},
    },
    new LocalEndpointQueues(),
    new EndpointHealth(timing),
  );
  try {
    await fn([urls[0]!, urls[1]!], placer, (i) => emus[i]!.close());
  } finally {
    await Promise.all(emus.map((e) => e.close()));
  }
}

const urlOf = (p: Placement | { refused: string }) => {
  assert.ok("queue" in p, JSON.stringify(p));
  return p.queue.url;
};

Deno.test("placer: new sessions spread by load; a session keeps its endpoint while it is up", async () => {
  await withPool(2, async ([a, b], placer) => {
    const pool = placer.backendOf("claude", undefined)!;
    assert.deepEqual(pool.endpoints.map((e) => e.url), [a, b]);
    const first = await placer.place(pool);
    assert.deepEqual("queue" in first && first.queue, {
      url: a,
      backend: "ollama",
      limit: 4,
      pooled: true,
    });
    assert.equal(urlOf(await placer.place(pool)), b, "the idle one");
    assert.equal(urlOf(await placer.place(pool)), a);
    // Affinity wins over load: a has 2, b has 1, and a session of a's stays there.
    const kept = await placer.place(pool, { affinity: a });
    assert.equal(urlOf(kept), a);
    assert.equal("moved" in kept, false);
    for (const url of [a, a, a, b]) placer.release(url);
    assert.deepEqual(placer.states(pool).map((s) => s.jobsHere), [0, 0]);
    // Placed at once, by one process: each sees the others' choices.
    const together = await Promise.all([1, 2, 3, 4].map(() => placer.place(pool)));
    assert.deepEqual(together.map(urlOf).sort(), [a, a, b, b].sort());
  });
});

Deno.test("placer: load is counted against each endpoint's own limit; a 429 sends new sessions elsewhere", async () => {
  await withPool(2, async ([a, b], placer) => {
    const pool = placer.backendOf("native", undefined)!;
    // a takes 1 at once, b 3: b is the less busy until it holds 3 to a's 1.
    const placed = [];
    for (let i = 0; i < 4; i++) placed.push(urlOf(await placer.place(pool)));
    assert.deepEqual(placed, [a, b, b, b]);
    for (const url of placed) placer.release(url);
    placer.health.throttle(a, 60_000);
    assert.equal(urlOf(await placer.place(pool)), b);
    assert.equal(urlOf(await placer.place(pool)), b, "still avoided, while b is not full");
    assert.equal(urlOf(await placer.place(pool, { affinity: a })), a, "a 429 is no move");
  }, [1, 3]);
});

Deno.test("placer: a session whose endpoint is down moves and says why; none up is one refusal", async () => {
  await withPool(2, async ([a, b], placer, close) => {
    const pool = placer.backendOf("claude", undefined)!;
    await close(0);
    const moved = await placer.place(pool, { affinity: a });
    assert.equal(urlOf(moved), b);
    assert.deepEqual("moved" in moved && moved.moved, {
      from: a,
      reason: "it is down: connection failed (ECONNREFUSED)",
    });
    await close(1);
    const none = await placer.place(pool, { affinity: b });
    assert.deepEqual(none, {
      refused: `backend_unreachable: Cannot run job: every endpoint of backend "ollama" is ` +
        `down: ${a} (connection failed (ECONNREFUSED)), ${b} (connection failed ` +
        `(ECONNREFUSED)). Start them, or fix the URLs (ollama-delegate doctor checks each one)`,
    });
    // A backend of one endpoint is never probed: its turns go there, as they always did.
    const solo = placer.backendOf("native", "solo")!;
    assert.deepEqual("queue" in (await placer.place(solo)) && (await placer.place(solo)), {
      backend: solo,
      queue: { url: a, backend: "solo" },
    });
  });
});

Deno.test("placer: where servers say their queues, new sessions go to the least waiting; affinity yields only to a far shorter one", async () => {
  const vllm = () => startOllamaEmulator({ flavour: "vllm", models: [{ name: "m" }] });
  const [a, b, lite] = await Promise.all([
    vllm(),
    vllm(),
    startOllamaEmulator({ flavour: "litellm", models: [{ name: "m" }] }),
  ]);
  const placerOf = (urls: string[]) =>
    new EndpointPlacer(
      {
        baseUrl: "http://127.0.0.1:9",
        backends: {
          gpus: { url: urls[0]!, urls: urls.map((url) => ({ url })), kind: "anthropic" },
        },
        env: {},
      },
      new LocalEndpointQueues(),
      new EndpointHealth(timing),
    );
  try {
    const placer = placerOf([a.url, b.url]);
    const pool = placer.backendOf("claude", "gpus")!;
    const place = async (affinity?: string) => {
      const p = await placer.place(pool, affinity !== undefined ? { affinity } : {});
      assert.ok("queue" in p, JSON.stringify(p));
      placer.release(p.queue.url);
      return p;
    };
    // Other clients' work waits at a: a new session goes to b, first in the list or not.
    a.setQueue({ waiting: 3, running: 8 });
    assert.equal((await place()).queue.url, b.url);
    b.setQueue({ waiting: 5 });
    assert.equal((await place()).queue.url, a.url);
    // A session keeps its endpoint while the other's queue is not far shorter...
    const kept = await place(b.url);
    assert.equal(kept.queue.url, b.url);
    assert.equal(kept.moved, undefined);
    // ...and leaves it when its own holds 4 more and twice as many, saying why.
    b.setQueue({ waiting: 7 });
    const moved = await place(b.url);
    assert.equal(moved.queue.url, a.url);
    assert.deepEqual(moved.moved, {
      from: b.url,
      reason: `it had 7 requests waiting, ${a.url} 3`,
    });
    a.setQueue({ waiting: 6 });
    b.setQueue({ waiting: 11 });
    assert.equal((await place(b.url)).queue.url, b.url, "11 is not twice 6");
    assert.ok(a.requests.some((r) => r.path === "/metrics"));

    // One endpoint that does not say its queue (a LiteLLM proxy): placement is by load alone,
    // as before, whatever the other says.
    const mixed = placerOf([a.url, lite.url]);
    const both = mixed.backendOf("claude", "gpus")!;
    a.setQueue({ waiting: 50 });
    const first = await mixed.place(both);
    assert.ok("queue" in first && first.queue.url === a.url, JSON.stringify(first));
    assert.equal(urlOf(await mixed.place(both, { affinity: a.url })), a.url);
  } finally {
    for (const e of [a, b, lite]) await e.close();
  }
});
