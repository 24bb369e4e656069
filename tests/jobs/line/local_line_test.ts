import assert from "node:assert/strict";
import { LocalGate, QueueLanes, SlotQueue } from "../../../src/jobs/line/endpoint_lines.ts";

/** Lets every settled promise run its callbacks. */
const tick = () => new Promise((r) => setTimeout(r, 0));

/** Acquires and records the order in which grants (or refusals) arrive. */
function track(q: SlotQueue, log: string[], key: string): Promise<boolean> {
  return q.acquire(key).then((granted) => {
    log.push(`${key}:${granted}`);
    return granted;
  });
}

Deno.test("SlotQueue: grants up to the limit at once, then waits", async () => {
  const q = new SlotQueue(2);
  const log: string[] = [];
  void track(q, log, "a");
  void track(q, log, "b");
  void track(q, log, "c");
  await tick();
  assert.deepEqual(log, ["a:true", "b:true"]);
  assert.equal(q.waiting, 1);
  assert.equal(q.position("c"), 1);
});

Deno.test("SlotQueue: FIFO: each release hands the slot to the oldest waiter", async () => {
  const q = new SlotQueue(1);
  const log: string[] = [];
  for (const k of ["a", "b", "c", "d"]) void track(q, log, k);
  await tick();
  assert.deepEqual(log, ["a:true"]);
  assert.deepEqual(["a", "b", "c", "d"].map((k) => q.position(k)), [0, 1, 2, 3]);
  q.release();
  await tick();
  assert.deepEqual(log, ["a:true", "b:true"]);
  assert.deepEqual(["c", "d"].map((k) => q.position(k)), [1, 2]);
  q.release();
  q.release();
  await tick();
  assert.deepEqual(log, ["a:true", "b:true", "c:true", "d:true"]);
  assert.equal(q.waiting, 0);
});

Deno.test("SlotQueue: never more holders than the limit", async () => {
  const q = new SlotQueue(3);
  let holders = 0;
  let peak = 0;
  const work = async (k: string) => {
    assert.equal(await q.acquire(k), true);
    holders++;
    peak = Math.max(peak, holders);
    await tick();
    holders--;
    q.release();
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

Deno.test("SlotQueue: leave() resolves the waiter with false and closes the gap", async () => {
  const q = new SlotQueue(1);
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
  q.release();
  q.release();
  await tick();
  assert.deepEqual(log, ["a:true", "c:false", "b:true", "d:true"]);
});

Deno.test("SlotQueue: a released slot with nobody waiting is free for the next caller", async () => {
  const q = new SlotQueue(1);
  assert.equal(await q.acquire("a"), true);
  q.release();
  assert.equal(await q.acquire("b"), true);
  // Extra releases never push the count below zero or above the limit.
  q.release();
  q.release();
  q.release();
  const log: string[] = [];
  void track(q, log, "c");
  void track(q, log, "d");
  await tick();
  assert.deepEqual(log, ["c:true"]);
  assert.equal(q.position("d"), 1);
});

Deno.test("QueueLanes: an endpoint's own limit comes first and holds no global slot", async () => {
  const lanes = new QueueLanes(2, new LocalGate());
  const placed: string[] = [];
  const lab = { url: "http://lab:8000", backend: "lab", limit: 1 };
  const enter = (id: string, backend?: string) =>
    lanes.enter(id, backend ? lab : undefined, () => placed.push(id));
  assert.equal(await enter("a", "lab"), true);
  const b = enter("b", "lab");
  await tick();
  assert.deepEqual(placed, ["b"]);
  assert.equal(lanes.position("b"), 1);
  // b waits for lab's slot, not a global one: c (another backend) still runs.
  assert.equal(await enter("c"), true);
  const d = enter("d");
  await tick();
  assert.equal(lanes.position("d"), 1);
  // a ends: its global slot goes to d, its lab slot to b, which then waits for a global one.
  lanes.exit("a");
  assert.equal(await d, true);
  await tick();
  assert.equal(lanes.position("b"), 1);
  assert.equal(lanes.leave("b"), true);
  assert.equal(await b, false);
  assert.equal(lanes.leave("b"), false);
  // b gave its lab slot back when it left: once c ends, e gets both at once.
  lanes.exit("c");
  assert.equal(await enter("e", "lab"), true);
});
