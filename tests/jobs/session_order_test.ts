/** One turn per session, as one process sees it: a turn waits for the turns before it. */
import assert from "node:assert/strict";
import { liveJob, newRecord } from "../../src/jobs/live_job.ts";
import type { JobRecord } from "../../src/jobs/record.ts";
import { SessionOrder } from "../../src/jobs/session_order.ts";
import { selfIdentity } from "../../src/platform/process_identity.ts";
import { FakeEngine, managerWith, newTurn } from "./support/fake_engine.ts";

const SESSION = "aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee";
const jobId = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, "0")}`;

Deno.test("SessionOrder: turn 2 waits until turn 1 ends; records come in turn order", async () => {
  const { store } = managerWith(new FakeEngine());
  const self = await selfIdentity();
  const held = new Map<string, JobRecord>();
  const order = new SessionOrder(store, {
    liveRecord: (id) => held.get(id),
    reconcile: (r) => Promise.resolve(r),
  });
  const lives = [];
  for (const n of [1, 2]) {
    const id = jobId(n);
    const turn = await order.ticket(SESSION, 1, id, self);
    assert.equal(turn, n);
    const live = liveJob(newRecord(newTurn(`turn ${n}`), { sessionId: SESSION, turn }, id, self));
    held.set(id, live.record);
    order.claimed(id);
    await store.create(live.record, `turn ${n}`);
    await store.addSessionJob(SESSION, id);
    lives.push(live);
  }
  const [first, second] = lives as [ReturnType<typeof liveJob>, ReturnType<typeof liveJob>];
  assert.equal(await order.take(first), true);
  first.record.state = "running";
  let waited: boolean | undefined;
  const waiting = order.take(second).then((v) => (waited = v));
  await second.isPlaced;
  assert.deepEqual(second.activities, [{
    kind: "text",
    text: `Waiting for turn 1 of this session (job ${jobId(1)}) to end`,
  }]);
  assert.equal(waited, undefined);
  first.record.state = "completed";
  order.wakeAll();
  await waiting;
  assert.equal(waited, true);
  assert.deepEqual((await order.records(SESSION)).map((r) => r.turn), [1, 2]);
});

Deno.test("SessionOrder: a cancel takes a waiting turn out of the line", async () => {
  const { store } = managerWith(new FakeEngine());
  const self = await selfIdentity();
  const first = liveJob(newRecord(newTurn(), { sessionId: SESSION, turn: 1 }, jobId(1), self));
  first.record.state = "running";
  const order = new SessionOrder(store, {
    liveRecord: (id) => (id === jobId(1) ? first.record : undefined),
    reconcile: (r) => Promise.resolve(r),
  });
  await order.ticket(SESSION, 1, jobId(1), self);
  await order.ticket(SESSION, 1, jobId(2), self);
  const second = liveJob(newRecord(newTurn(), { sessionId: SESSION, turn: 2 }, jobId(2), self));
  const waiting = order.take(second);
  await second.isPlaced;
  second.sessionWait?.abort();
  assert.equal(await waiting, false);
  assert.equal(second.sessionWait, undefined);
});

Deno.test("SessionOrder: a turn that cannot be taken says where, and is not held", async () => {
  const { store } = managerWith(new FakeEngine());
  const order = new SessionOrder(store, {
    liveRecord: () => undefined,
    reconcile: (r) => Promise.resolve(r),
  });
  await assert.rejects(
    order.ticket("not-a-session", 1, jobId(3), await selfIdentity()),
    /^DelegateError: Cannot start job: cannot take a turn of session not-a-session in /,
  );
  assert.equal(order.isClaiming(jobId(3)), false);
});
