/** What the server believes of each endpoint of a pool, from probes and from jobs' failures. */
import assert from "node:assert/strict";
import {
  EndpointHealth,
  type HealthTiming,
  probeEndpoint,
} from "../../src/backends/endpoint_health.ts";
import { startOllamaEmulator } from "../support/emulator/emulator.ts";

const fast: HealthTiming = { probeTimeoutMs: 1000, everyMs: 50, freshMs: 200, holdDownMs: 400 };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const versionGets = (emu: { requests: Array<{ path: string }> }) =>
  emu.requests.filter((r) => r.path === "/api/version").length;

Deno.test("probeEndpoint: a GET per kind; any answer below 500 is up, no connection is down", async () => {
  const emu = await startOllamaEmulator();
  try {
    assert.equal(await probeEndpoint({ url: emu.url, kind: "ollama" }, 1000), undefined);
    assert.equal(
      await probeEndpoint({ url: emu.url, kind: "openai", apiKey: "sk-pool" }, 1000),
      undefined,
    );
    const models = emu.requests.find((r) => r.path === "/v1/models")!;
    assert.equal(models.headers.authorization, "Bearer sk-pool", "the key goes to its endpoint");
    assert.deepEqual(emu.requests.map((r) => r.path), ["/api/version", "/v1/models"]);
  } finally {
    await emu.close();
  }
  assert.equal(
    await probeEndpoint({ url: emu.url, kind: "ollama" }, 1000),
    "connection failed (ECONNREFUSED)",
  );
});

Deno.test("EndpointHealth: refresh probes only stale knowledge; a job's failure holds an endpoint down", async () => {
  const emu = await startOllamaEmulator();
  try {
    const health = new EndpointHealth(fast);
    const target = { url: emu.url, kind: "ollama" as const };
    assert.equal(health.isDown(emu.url), false, "never looked at counts as up");
    await health.refresh([target]);
    await health.refresh([target]);
    assert.equal(versionGets(emu), 1, "fresh knowledge is not probed again");
    health.markDown(emu.url, "HTTP 500: runner crashed");
    await sleep(250);
    await health.refresh([target]);
    assert.equal(versionGets(emu), 2);
    assert.equal(health.isDown(emu.url), true, "a probe that answers does not lift the hold");
    assert.equal(health.state(emu.url).reason, "HTTP 500: runner crashed");
    await sleep(450);
    await health.refresh([target]);
    assert.equal(health.isDown(emu.url), false, "up again once the hold is over");
    health.throttle(emu.url, 300);
    assert.equal(health.isThrottled(emu.url), true);
    assert.equal(health.isDown(emu.url), false, "a 429 is not down");
    await sleep(350);
    assert.equal(health.isThrottled(emu.url), false);
  } finally {
    await emu.close();
  }
});

Deno.test("EndpointHealth: watched endpoints are probed in the background until every watcher stops", async () => {
  const emu = await startOllamaEmulator();
  const target = { url: emu.url, kind: "ollama" as const };
  const health = new EndpointHealth(fast);
  try {
    const stopA = health.watch([target]);
    const stopB = health.watch([target]);
    await sleep(300);
    const during = versionGets(emu);
    assert.ok(during >= 3, `${during} probes in 300 ms at one per 50 ms`);
    stopA();
    stopA();
    await sleep(150);
    assert.ok(versionGets(emu) > during, "the other watcher keeps it probed");
    stopB();
    await sleep(100);
    const after = versionGets(emu);
    await sleep(200);
    assert.equal(versionGets(emu), after, "no probes once nobody watches");
    // The background probe is what finds a dead endpoint down.
    const stop = health.watch([target]);
    await emu.close();
    await sleep(200);
    stop();
    assert.equal(health.isDown(emu.url), true);
    assert.equal(health.state(emu.url).reason, "connection failed (ECONNREFUSED)");
  } finally {
    await emu.close();
  }
});
