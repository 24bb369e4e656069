/**
 * The job manager's lifecycle against a fake engine: what a job's record says on disk and
 * in its view as it starts, waits its turn, runs, times out, is cancelled or is interrupted;
 * and how many jobs a pool of emulated endpoints admits at once.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { LEDGER_FILE } from "../../src/jobs/ledger/ledger.ts";
import { isJobError, type JobProblem } from "../../src/jobs/errors.ts";
import { startOllamaEmulator } from "../support/emulator/emulator.ts";
import { FakeEngine, managerWith, newTurn } from "./support/fake_engine.ts";

Deno.test("start: the job runs on its engine and its end is on disk", async () => {
  const { manager, store, engine } = managerWith(new FakeEngine());
  const view = await manager.start(newTurn("write the tests"));
  assert.equal(view.record.state, "running");
  const turn = await engine.turn(0);
  assert.equal(readFileSync(turn.spec.promptPath, "utf8"), "write the tests");
  assert.equal(turn.spec.dir, store.dirOf(view.record.id));
  turn.sink.activity({ kind: "tool", name: "Bash", detail: "ls" });
  turn.sink.toolCall();
  turn.end({ resultText: "all green" });
  const end = await manager.wait(view.record.id, 10);
  assert.equal(end.record.state, "completed");
  assert.equal(end.record.toolCalls, 1);
  const disk = await store.read(view.record.id);
  assert.equal(disk.kind === "ok" && disk.record.state, "completed");
  assert.equal((await store.readResultText(view.record.id, 100)).text, "all green");
  assert.deepEqual(end.activities, [{ kind: "tool", name: "Bash", detail: "ls" }]);
});

Deno.test("a job over its timeout is stopped and fails with the limit in its error", async () => {
  const { manager, engine } = managerWith(new FakeEngine(), { jobTimeoutMs: 200 });
  const view = await manager.start(newTurn());
  const turn = await engine.turn(0);
  const end = await manager.wait(view.record.id, 10);
  assert.equal(turn.stopped, true);
  assert.equal(end.record.state, "failed");
  assert.equal(end.record.errorText, "Timed out after 0s");
});

Deno.test("cancel: a running job is stopped; a queued one never reaches its engine", async () => {
  const { manager, engine } = managerWith(new FakeEngine(), { maxConcurrent: 1 });
  const first = await manager.start(newTurn("first"));
  const second = await manager.start(newTurn("second"));
  assert.equal(second.record.state, "queued");
  assert.equal(second.queuePosition, 1);
  const queued = await manager.cancel(second.record.id);
  assert.equal(queued.wasRunning, true);
  assert.equal(queued.view.record.state, "cancelled");
  assert.equal(queued.view.record.errorText, "Cancelled by caller");
  const running = await manager.cancel(first.record.id);
  assert.equal(running.view.record.state, "cancelled");
  assert.equal((await engine.turn(0)).stopped, true);
  assert.equal(engine.turns.length, 1);
  const again = await manager.cancel(first.record.id);
  assert.equal(again.wasRunning, false);
});

Deno.test("followup: the next turn waits for the one before, then resumes its session", async () => {
  const { manager, engine } = managerWith(new FakeEngine());
  const first = await manager.start(newTurn("one"));
  const turn1 = await engine.turn(0);
  turn1.sink.sessionStarted({});
  const previous = await manager.latestTurn({ jobId: first.record.id });
  const second = await manager.followup(previous, "two", {});
  assert.equal(second.record.turn, 2);
  assert.equal(second.record.state, "queued");
  assert.deepEqual(second.activities.at(-1), {
    kind: "text",
    text: `Waiting for turn 1 of this session (job ${first.record.id}) to end`,
  });
  assert.equal(engine.turns.length, 1);
  turn1.end();
  const turn2 = await engine.turn(1);
  assert.equal(turn2.spec.resume, true);
  assert.equal(turn2.spec.previousDir, manager.store.dirOf(first.record.id));
  turn2.end();
  assert.equal((await manager.wait(second.record.id, 10)).record.state, "completed");
});

Deno.test("shutdown: running and queued jobs are interrupted with the reason", async () => {
  const { manager, store } = managerWith(new FakeEngine(), { maxConcurrent: 1 });
  const running = await manager.start(newTurn());
  const queued = await manager.start(newTurn());
  await manager.shutdown("the client closed stdin");
  for (const id of [running.record.id, queued.record.id]) {
    const read = await store.read(id);
    assert.ok(read.kind === "ok");
    assert.equal(read.record.state, "interrupted");
    assert.equal(
      read.record.errorText,
      "Stopped because the client closed stdin before the job finished; follow up to continue",
    );
  }
  await assert.rejects(manager.start(newTurn()), /shutting down/);
});

Deno.test("unknown ids are JobErrors that carry the id, not advice", async () => {
  const { manager } = managerWith(new FakeEngine());
  const cases: Array<[string, JobProblem]> = [
    ["33333333-2222-4333-8444-555555555555", {
      kind: "unknown-job",
      id: "33333333-2222-4333-8444-555555555555",
    }],
    ["../etc/passwd", { kind: "bad-job-ref", ref: "../etc/passwd", why: "not-an-id" }],
    ["333", { kind: "bad-job-ref", ref: "333", why: "too-short" }],
  ];
  for (const [id, problem] of cases) {
    await assert.rejects(manager.get(id), (e: unknown) => {
      assert.ok(isJobError(e));
      assert.deepEqual(e.problem, problem);
      assert.match(e.message, /^Unknown job id/);
      assert.doesNotMatch(e.message, /delegate_/);
      return true;
    });
  }
  await assert.rejects(manager.latestTurn({ sessionId: "nope" }), (e: unknown) => {
    assert.ok(isJobError(e));
    assert.equal(e.problem.kind, "unknown-session");
    return true;
  });
});

Deno.test("a job whose engine is missing fails with why", async () => {
  const { manager } = managerWith(new FakeEngine("native"));
  const view = await manager.start(newTurn());
  const end = await manager.wait(view.record.id, 10);
  assert.equal(end.record.state, "failed");
  assert.match(end.record.errorText ?? "", /the claude engine is not available/);
});

Deno.test("once its end is on disk, a job reads as ended here too, whatever comes after", async () => {
  // Another server that cancelled a job answers "cancelled" as soon as job.json says so; the
  // owner went on showing "running" until its quality ledger line was appended, which can take
  // long on a loaded disk. Here the ledger is a FIFO nobody reads: the append waits until the
  // test opens it.
  const { manager, store, engine } = managerWith(new FakeEngine());
  const fifo = join(store.stateDir, LEDGER_FILE);
  const made = new Deno.Command("mkfifo", { args: [fifo] }).outputSync();
  assert.equal(made.success, true, new TextDecoder().decode(made.stderr));
  // And the write of job.json returns late (a loaded machine runs the rename's continuation
  // after another reader of the file has seen it): the end is on disk before this process
  // hears so. A reader polling in that window saw "running" (seen once in CI).
  const write = store.write.bind(store);
  store.write = async (record) => {
    await write(record);
    if (record.state === "completed") await new Promise((r) => setTimeout(r, 400));
  };
  const view = await manager.start(newTurn());
  const turn = await engine.turn(0);
  turn.end({ resultText: "done" });
  const onDisk = async () => {
    const r = await store.read(view.record.id);
    return r.kind === "ok" && r.record.state === "completed";
  };
  const deadline = Date.now() + 10_000;
  while (!(await onDisk())) {
    assert.ok(Date.now() < deadline, "the end never reached job.json");
    await new Promise((r) => setTimeout(r, 10));
  }
  try {
    assert.equal((await manager.get(view.record.id)).record.state, "completed");
  } finally {
    // Lets the ledger append finish.
    const reader = await Deno.open(fifo, { read: true });
    await new Response(reader.readable).text();
  }
  await manager.wait(view.record.id, 10);
});

Deno.test("a reader never sees a job ended before its answer is on disk", async () => {
  // The record in memory takes its end state before the answer is written; a poll in that
  // window read an empty answer ("produced no text output") for a job that had one.
  const { manager, store, engine } = managerWith(new FakeEngine());
  const view = await manager.start(newTurn());
  const turn = await engine.turn(0);
  const answer = "x".repeat(8 * 1024 * 1024);
  turn.end({ resultText: answer });
  let polls = 0;
  while (true) {
    const seen = await manager.get(view.record.id);
    polls++;
    if (seen.record.state === "completed") {
      const { length } = await store.readResultText(view.record.id, 10);
      assert.equal(length, answer.length, `the job read as ended after ${polls} polls`);
      break;
    }
    assert.equal(seen.record.state, "running");
    await new Promise((r) => setTimeout(r, 0));
  }
  assert.ok(polls > 1, "the end was written before the first poll: the window was not tested");
});

Deno.test("a pool of the default Ollama: each endpoint's own limit, and maxConcurrent for all of a server's jobs (docs/scale.md's recipe)", async () => {
  const emus = [await startOllamaEmulator(), await startOllamaEmulator()];
  /** Which endpoints the jobs of 6 new sessions run on, once `expected` of them have started. */
  const running = async (expected: number, maxConcurrent: number, own?: number) => {
    const engine = new FakeEngine();
    const { manager } = managerWith(engine, {
      maxConcurrent,
      pools: {
        baseUrl: "http://127.0.0.1:9",
        baseUrls: emus.map((e) => own ? { url: e.url, maxConcurrent: own } : { url: e.url }),
        defaultLimit: maxConcurrent,
        backends: {},
        env: {},
      },
    });
    for (let i = 0; i < 6; i++) await manager.start(newTurn(`session ${i}`));
    await engine.turn(expected - 1);
    // No other may start while these run.
    await new Promise((r) => setTimeout(r, 500));
    const per = emus.map((e) => engine.turns.filter((t) => t.spec.endpoint?.url === e.url).length);
    await manager.shutdown();
    return per;
  };
  try {
    // The recipe: 2 per GPU, and one session may fill both.
    assert.deepEqual(await running(4, 4, 2), [2, 2]);
    // --max-concurrent 2 alone: each endpoint may take 2, but this server runs 2 in all.
    assert.deepEqual(await running(2, 2), [1, 1]);
    // The endpoint's own limit wins over maxConcurrent there.
    assert.deepEqual(await running(2, 4, 1), [1, 1]);
  } finally {
    for (const e of emus) await e.close();
  }
});
