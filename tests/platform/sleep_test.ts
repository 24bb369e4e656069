/**
 * The one abortable wait. It replaced the job layer's (an optional signal: waits for a job's
 * end and admission polls) and the chat clients' (a required one: retry backoff); `jobs`
 * commands and the claude engine now wait with node:timers/promises itself.
 */
import assert from "node:assert/strict";
import process from "node:process";
import { runCommand, shellCommand } from "../../src/platform/command_run.ts";
import { settleWithin, sleep } from "../../src/platform/sleep.ts";

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

/** Timers that keep this process alive: what a command-line run waits for before it exits. */
const liveTimers = () => process.getActiveResourcesInfo().filter((r) => r === "Timeout").length;

Deno.test("settleWithin: the promise's value, or the fallback at the deadline; no timer is left", async () => {
  const before = liveTimers();
  assert.equal(await settleWithin(Promise.resolve("done"), 10_000, "late"), "done");
  assert.equal(liveTimers(), before, "the deadline's timer went with the answer");
  assert.equal(await settleWithin(new Promise(() => {}), 20, "late"), "late");
  await assert.rejects(settleWithin(Promise.reject(new Error("no")), 10_000, "late"), /no/);
  assert.equal(liveTimers(), before);
});

Deno.test("a command that ended leaves no timer holding the process (doctor waited 2 s to exit)", async () => {
  const before = liveTimers();
  const result = await runCommand({
    ...shellCommand("echo hi"),
    cwd: Deno.cwd(),
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
    timeoutMs: 30_000,
    signal: new AbortController().signal,
    keepChars: 100,
  });
  assert.equal(result.output.trim(), "hi");
  assert.equal(liveTimers(), before);
});
