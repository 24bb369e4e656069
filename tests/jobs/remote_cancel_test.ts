/** Cancels across server processes: a request file one writes and the owner acts on. */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { isJobError } from "../../src/jobs/errors.ts";
import { type JobView, liveJob, newRecord } from "../../src/jobs/live_job.ts";
import { cancelElsewhere, watchForCancel } from "../../src/jobs/remote_cancel.ts";
import { selfIdentity } from "../../src/platform/process_identity.ts";
import { FakeEngine, managerWith, newTurn } from "./support/fake_engine.ts";

const SESSION = "aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee";
const ID = "11111111-2222-4333-8444-555555555555";

async function setup() {
  const { store } = managerWith(new FakeEngine());
  const live = liveJob(
    newRecord(newTurn(), { sessionId: SESSION, turn: 1 }, ID, await selfIdentity()),
  );
  live.record.state = "running";
  await store.create(live.record, "p");
  return { store, live };
}

Deno.test("watchForCancel: a request from a terminal reaches the owner's cancel", async () => {
  const { store, live } = await setup();
  const asked: string[] = [];
  const stop = watchForCancel(store, live, (id) => Promise.resolve(void asked.push(id)));
  try {
    await store.requestCancel(ID, await selfIdentity(), "terminal");
    const deadline = Date.now() + 5000;
    while (asked.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(asked, [ID]);
    assert.equal(live.cancelledFrom, "terminal");
  } finally {
    stop();
  }
});

Deno.test("cancelElsewhere: asks through the folder and waits for the owner's end", async () => {
  const { store, live } = await setup();
  let reads = 0;
  const get = (): Promise<JobView> => {
    reads++;
    const state = reads > 1 ? "cancelled" as const : "running" as const;
    return Promise.resolve({ record: { ...live.record, state }, activities: [], queuePosition: 0 });
  };
  const view: JobView = { record: live.record, activities: [], queuePosition: 0 };
  const done = await cancelElsewhere(store, get, view, 5000);
  assert.equal(done.wasRunning, true);
  assert.equal(done.view.record.state, "cancelled");
  const request = JSON.parse(readFileSync(join(store.dirOf(ID), "cancel.request"), "utf8"));
  assert.equal(request.from, "session");
});

Deno.test("cancelElsewhere: an owner that does not act is a JobError with the facts", async () => {
  const { store, live } = await setup();
  const view: JobView = { record: live.record, activities: [], queuePosition: 0 };
  await assert.rejects(cancelElsewhere(store, () => Promise.resolve(view), view, 300), (e) => {
    assert.ok(isJobError(e));
    assert.deepEqual(e.problem, {
      kind: "cancel-pending",
      id: ID,
      ownerPid: live.record.owner?.pid,
      state: "running",
      waitedMs: 300,
    });
    return true;
  });
});
