/**
 * The one abortable wait. It replaced the job layer's (an optional signal: waits for a job's
 * end and admission polls) and the chat clients' (a required one: retry backoff); `jobs`
 * commands and the claude engine now wait with node:timers/promises itself.
 */
import assert from "node:assert/strict";
import { sleep } from "../../src/platform/sleep.ts";

Deno.test("sleep: resolves after its time, with or without a signal", async () => {
  let started = performance.now();
  await sleep(60);
  assert.ok(performance.now() - started >= 55, "waited");
  started = performance.now();
  await sleep(60, new AbortController().signal);
  assert.ok(performance.now() - started >= 55, "waited with a signal that never aborts");
  await sleep(-5);
});

Deno.test("sleep: an abort ends the wait at once, without an error", async () => {
  const ac = new AbortController();
  const started = performance.now();
  setTimeout(() => ac.abort(new Error("woken")), 20);
  await sleep(10_000, ac.signal);
  assert.ok(performance.now() - started < 5_000, "woke on the abort");
  // Already aborted: no wait at all.
  const again = performance.now();
  await sleep(10_000, ac.signal);
  assert.ok(performance.now() - again < 1_000);
});
