/**
 * The job store's end of a job: whoever reads an ended record on disk finds its result there.
 */
import assert from "node:assert/strict";
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { liveJob, newRecord } from "../../src/jobs/live_job.ts";
import { JobStore } from "../../src/jobs/store.ts";
import { selfIdentity } from "../../src/platform/process_identity.ts";
import { tempDir } from "../support/harness.ts";
import { newTurn } from "./support/fake_engine.ts";

/** A store in a folder of its own, holding one new task job. */
async function storedJob() {
  const store = new JobStore(tempDir("od-store-"));
  store.init();
  const id = "11111111-2222-4333-8444-555555555555";
  const sessionId = "aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee";
  const { record } = liveJob(
    newRecord(newTurn("task"), { sessionId, turn: 1 }, id, await selfIdentity()),
  );
  await store.create(record, "task");
  return { store, id, record };
}

Deno.test("writeFinal: job.json says ended only once the result is on disk", async () => {
  const { store, id, record } = await storedJob();
  const onDisk = () => JSON.parse(readFileSync(join(store.dirOf(id), "job.json"), "utf8")).state;
  const before = onDisk();
  // The result cannot be written (a folder sits where result.txt goes), as on a full disk.
  mkdirSync(join(store.dirOf(id), "result.txt"));
  const ended = { ...record, state: "completed" as const, endedAt: Date.now() };
  await assert.rejects(store.writeFinal(ended, "the answer"));
  assert.equal(onDisk(), before, "an ended record without its result was written");
  // Meanwhile this process serves the end from memory.
  const read = await store.read(id);
  assert.equal(read.kind === "ok" && read.record.state, "completed");
  assert.equal((await store.readResultText(id, 100)).text, "the answer");
});

Deno.test("write: a write queued behind another writes the record as it was when asked", async () => {
  // A running job's callbacks write its record without waiting; one still queued when the job
  // ended wrote the end state (read at its turn) before the answer: another server then said
  // "cancelled" while the owner, still writing the result, said "running".
  const { store, id, record } = await storedJob();
  record.state = "running";
  const first = store.write(record);
  const queued = store.write(record);
  record.state = "cancelled";
  await Promise.all([first, queued]);
  const onDisk = JSON.parse(readFileSync(join(store.dirOf(id), "job.json"), "utf8"));
  assert.equal(onDisk.state, "running");
});
