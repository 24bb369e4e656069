/** Waiting for a job's end (jobs/wait.ts): woken by the end, and nothing left running after. */
import assert from "node:assert/strict";
import process from "node:process";
import type { JobView } from "../../src/jobs/live_job.ts";
import type { JobRecord } from "../../src/jobs/record.ts";
import { waitForEnd } from "../../src/jobs/wait.ts";

const liveTimers = () => process.getActiveResourcesInfo().filter((r) => r === "Timeout").length;

function viewOf(state: JobRecord["state"]): JobView {
  return { record: { id: "j1", state } as JobRecord, activities: [], queuePosition: 0 };
}

Deno.test("a wait woken by its job's end returns at once and leaves no timer behind", async () => {
  let state: JobRecord["state"] = "running";
  let end!: () => void;
  const finished = new Promise<void>((resolve) => end = resolve);
  const jobs = { get: () => Promise.resolve(viewOf(state)), finished: () => finished };
  const before = liveTimers();
  const started = performance.now();
  setTimeout(() => {
    state = "completed";
    end();
  }, 20);
  const view = await waitForEnd("j1", 60, { tickMs: 30_000 }, jobs);
  assert.equal(view.record.state, "completed");
  assert.ok(performance.now() - started < 10_000, "woken by the end, not the step");
  // The step's 30 s timer held `review --gate` open for seconds after its answer.
  assert.equal(liveTimers(), before);
});

Deno.test("a wait ends at its deadline or when its signal aborts, also without a timer left", async () => {
  const jobs = {
    get: () => Promise.resolve(viewOf("running")),
    finished: () => new Promise<void>(() => {}),
  };
  const before = liveTimers();
  assert.equal((await waitForEnd("j1", 0.05, {}, jobs)).record.state, "running");
  const ac = new AbortController();
  setTimeout(() => ac.abort(), 20);
  const started = performance.now();
  await waitForEnd("j1", 60, { signal: ac.signal }, jobs);
  assert.ok(performance.now() - started < 10_000, "the abort ended the wait");
  assert.equal(liveTimers(), before);
});
