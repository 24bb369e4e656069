/**
 * Running one turn: what the engine reports through its sink lands in the record (bounded
 * and without duplicates), and the end is written and announced.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import type { TurnOutcome } from "../../src/engines/types.ts";
import { liveJob, newRecord } from "../../src/jobs/live_job.ts";
import { JobQueues } from "../../src/jobs/queue/job_queues.ts";
import type { JobRecord } from "../../src/jobs/record.ts";
import { SessionOrder } from "../../src/jobs/session_order.ts";
import { runJob, type TurnRunDeps } from "../../src/jobs/turn_run.ts";
import { selfIdentity } from "../../src/platform/process_identity.ts";
import { FakeEngine, managerWith, newTurn } from "./support/fake_engine.ts";

Deno.test("runJob: the sink's reports land in the record; the end is written and announced", async () => {
  const engine = new FakeEngine();
  const { store } = managerWith(engine);
  const self = await selfIdentity();
  const sessionId = "aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee";
  const id = "11111111-2222-4333-8444-555555555555";
  const live = liveJob(newRecord(newTurn("task"), { sessionId, turn: 1 }, id, self));
  await store.create(live.record, "task");
  const sessions = new SessionOrder(store, {
    liveRecord: (jobId) => (jobId === id ? live.record : undefined),
    reconcile: (r) => Promise.resolve(r),
  });
  await sessions.ticket(sessionId, 1, id, self);
  sessions.claimed(id);
  const finished: Array<[JobRecord, TurnOutcome]> = [];
  let ended = 0;
  const deps: TurnRunDeps = {
    store,
    engine: () => engine,
    queues: new JobQueues(1),
    sessions,
    config: {
      jobTimeoutMs: 60_000,
      maxConcurrent: 1,
      onFinished: (record, outcome) => void finished.push([structuredClone(record), outcome]),
    },
    shutdownReason: () => "the server shut down",
    ended: () => void ended++,
  };
  const run = runJob(live, deps);
  const turn = await engine.turn(0);
  assert.equal(live.record.state, "running");
  const { sink } = turn;
  for (let i = 0; i < 150; i++) sink.activity({ kind: "text", text: `step ${i}` });
  sink.toolCall();
  sink.toolCall({ recovered: true });
  sink.warning?.("the backend cut the prompt");
  sink.warning?.("the backend cut the prompt");
  sink.fileChanged?.("/w/a.ts");
  sink.fileChanged?.("/w/a.ts");
  sink.contextElided?.(2);
  sink.contextElided?.(1);
  sink.commandRun?.({ command: "make", exitCode: 2, durationMs: 5 });
  sink.sessionStarted({ permissionMode: "acceptEdits" });
  const child = spawn("sleep", ["30"]);
  sink.childStarted(child.pid!);
  try {
    const deadline = Date.now() + 5000;
    while (!live.record.child && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    assert.equal(live.record.child?.pid, child.pid);
  } finally {
    child.kill();
  }
  assert.equal(live.activities.length, 100);
  assert.deepEqual(live.activities[0], { kind: "text", text: "step 50" });
  // Finished jobs stay in memory: an activity keeps at most 1,000 characters of a long text.
  sink.activity({ kind: "text", text: "y".repeat(4_000_000) });
  sink.activity({ kind: "tool", name: "Write", detail: "d".repeat(5000) });
  assert.deepEqual(live.activities.slice(-2), [
    { kind: "text", text: "y".repeat(1000) },
    { kind: "tool", name: "Write", detail: "d".repeat(1000) },
  ]);
  turn.end({ resultText: "answer" });
  await run;
  assert.equal(
    live.turn,
    undefined,
    "a finished job drops its turn, whose outcome holds the answer",
  );
  const r = live.record;
  assert.equal(r.state, "completed");
  assert.equal(r.toolCalls, 2);
  assert.equal(r.toolCallsRecovered, 1);
  assert.deepEqual(r.warnings, ["the backend cut the prompt"]);
  assert.deepEqual(r.changedFiles, ["/w/a.ts"]);
  assert.equal(r.contextElisions, 3);
  assert.deepEqual(r.commands, [{ command: "make", exitCode: 2, durationMs: 5 }]);
  assert.equal(r.sessionCreated, true);
  assert.equal(r.effectivePermissionMode, "acceptEdits");
  assert.equal(r.child, undefined);
  const disk = await store.read(id);
  assert.equal(disk.kind === "ok" && disk.record.state, "completed");
  assert.equal((await store.readResultText(id, 100)).text, "answer");
  assert.equal(finished.length, 1);
  assert.equal(finished[0]![0].state, "completed");
  assert.equal(finished[0]![1].resultText, "answer");
  assert.equal(ended, 1);
});
