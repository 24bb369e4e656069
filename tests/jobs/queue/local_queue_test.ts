import assert from "node:assert/strict";
import { LocalEndpointQueues } from "../../../src/jobs/queue/endpoint_queues.ts";
import { JobQueues } from "../../../src/jobs/queue/job_queues.ts";
import { LocalQueue } from "../../../src/jobs/queue/local_queue.ts";

/** Lets every settled promise run its callbacks. */
const tick = () => new Promise((r) => setTimeout(r, 0));

/** Takes a place and records the order in which grants (or refusals) arrive. */
function track(q: LocalQueue, log: string[], key: string): Promise<boolean> {
  return q.take(key).then((granted) => {
    log.push(`${key}:${granted}`);
    return granted;
  });
}

Deno.test("LocalQueue: grants up to the limit at once, then waits", async () => {
  const q = new LocalQueue(2);
  const log: string[] = [];
  void track(q, log, "a");
  void track(q, log, "b");
  void track(q, log, "c");
  await tick();
  assert.deepEqual(log, ["a:true", "b:true"]);
  assert.equal(q.waiting, 1);
  assert.equal(q.position("c"), 1);
});

Deno.test("LocalQueue: FIFO: each place given back goes to the oldest waiter", async () => {
  const q = new LocalQueue(1);
  const log: string[] = [];
  for (const k of ["a", "b", "c", "d"]) void track(q, log, k);
  await tick();
  assert.deepEqual(log, ["a:true"]);
  assert.deepEqual(["a", "b", "c", "d"].map((k) => q.position(k)), [0, 1, 2, 3]);
  q.giveBack();
  await tick();
  assert.deepEqual(log, ["a:true", "b:true"]);
  assert.deepEqual(["c", "d"].map((k) => q.position(k)), [1, 2]);
  q.giveBack();
  q.giveBack();
  await tick();
  assert.deepEqual(log, ["a:true", "b:true", "c:true", "d:true"]);
  assert.equal(q.waiting, 0);
});

Deno.test("LocalQueue: never more holders than the limit", async () => {
  const q = new LocalQueue(3);
  let holders = 0;
  let peak = 0;
  const work = async (k: string) => {
    assert.equal(await q.take(k), true);
    holders++;
    peak = Math.max(peak, holders);
    await tick();
    holders--;
    q.giveBack();
  };
  await Promise.all(Array.from({ length: 20 }, (_, i) => work(`j${i}`)));
  assert.equal(peak, 3);
  assert.equal(holders, 0);
  // All slots are free again: three immediate grants, the fourth waits.
  const log: string[] = [];
  for (const k of ["w", "x", "y", "z"]) void track(q, log, k);
  await tick();
  assert.deepEqual(log, ["w:true", "x:true", "y:true"]);
});

Deno.test("LocalQueue: leave() resolves the waiter with false and closes the gap", async () => {
  const q = new LocalQueue(1);
  const log: string[] = [];
  for (const k of ["a", "b", "c", "d"]) void track(q, log, k);
  await tick();
  assert.equal(q.leave("c"), true);
  await tick();
  assert.deepEqual(log, ["a:true", "c:false"]);
  assert.equal(q.position("c"), 0);
  assert.equal(q.position("d"), 2);
  assert.equal(q.waiting, 2);
  // Leaving twice, or leaving as the holder, does nothing.
  assert.equal(q.leave("c"), false);
  assert.equal(q.leave("a"), false);
  assert.equal(q.leave("nobody"), false);
  q.giveBack();
  q.giveBack();
  await tick();
  assert.deepEqual(log, ["a:true", "c:false", "b:true", "d:true"]);
});

Deno.test("LocalQueue: a place given back with nobody waiting is free for the next caller", async () => {
  const q = new LocalQueue(1);
  assert.equal(await q.take("a"), true);
  q.giveBack();
  assert.equal(await q.take("b"), true);
  // Extra give-backs never push the count below zero or above the limit.
  q.giveBack();
  q.giveBack();
  q.giveBack();
  const log: string[] = [];
  void track(q, log, "c");
  void track(q, log, "d");
  await tick();
  assert.deepEqual(log, ["c:true"]);
  assert.equal(q.position("d"), 1);
});

Deno.test("JobQueues: an endpoint's own limit comes first and holds no global slot", async () => {
  const queues = new JobQueues(2, new LocalEndpointQueues());
  const placed: string[] = [];
  const lab = { url: "http://lab:8000", backend: "lab", limit: 1 };
  const take = (id: string, backend?: string) =>
    queues.take(id, backend ? lab : undefined, () => placed.push(id));
  assert.equal(await take("a", "lab"), true);
  const b = take("b", "lab");
  await tick();
  assert.deepEqual(placed, ["b"]);
  assert.equal(queues.position("b"), 1);
  // b waits for lab's slot, not a global one: c (another backend) still runs.
  assert.equal(await take("c"), true);
  const d = take("d");
  await tick();
  assert.equal(queues.position("d"), 1);
  // a ends: its global slot goes to d, its lab slot to b, which then waits for a global one.
  queues.giveBack("a");
  assert.equal(await d, true);
  await tick();
  assert.equal(queues.position("b"), 1);
  assert.equal(queues.leave("b"), true);
  assert.equal(await b, false);
  assert.equal(queues.leave("b"), false);
  // b gave its lab slot back when it left: once c ends, e gets both at once.
  queues.giveBack("c");
  assert.equal(await take("e", "lab"), true);
});
