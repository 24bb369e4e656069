/**
 * A listing's page (jobs/list_page.ts) from real job folders, and its index
 * (jobs/list_index.ts): folders removed, changed, added or made up behind its back.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { JobManager } from "../../src/jobs/manager.ts";
import type { JobRecord } from "../../src/jobs/record.ts";
import { JobStore } from "../../src/jobs/store.ts";
import { identityOf } from "../../src/platform/process_identity.ts";
import { tempDir } from "../support/harness.ts";
import { baseRecord, writeJob } from "../cli/jobs_support.ts";

const T = Date.UTC(2026, 0, 1);
const id = (n: number) => `${String(n).padStart(8, "0")}-0000-4000-8000-000000000000`;
const SESSION = "5e55105e-0000-4000-8000-000000000000";
const INDEX = (stateDir: string) => join(stateDir, ".list", "index.json");
/** The index's file: the folders' names, and for each the creation time and a state letter. */
interface IndexFile {
  stamp: unknown;
  ids: string;
  created: number[];
  states: string;
}

/** `count` ended jobs; job n was created n seconds after T, every fifth failed. */
function stateWith(count: number): string {
  const stateDir = join(tempDir("od-list-page-"), "jobs");
  for (let n = 1; n <= count; n++) writeJob(stateDir, job(n));
  return stateDir;
}

function job(n: number, over: Partial<JobRecord> = {}): JobRecord {
  return baseRecord(id(n), SESSION, {
    createdAt: T + n * 1000,
    state: n % 5 === 0 ? "failed" : "completed",
    promptPreview: `prompt ${n}`,
    ...over,
  });
}

/** A new process's view: a store and manager as `ollama-delegate jobs` opens them. */
const managerOf = (stateDir: string) =>
  new JobManager(new JobStore(stateDir), {}, { jobTimeoutMs: 60_000, maxConcurrent: 1 });

/** The state dir as if its last change was a minute ago: its listing is trusted from then. */
const settle = (stateDir: string) => {
  const past = new Date(Date.now() - 60_000);
  utimesSync(stateDir, past, past);
};

const ids = (records: readonly JobRecord[]) => records.map((r) => r.id);

Deno.test("page: the newest of a state, how many match, the same from a new process", async () => {
  const stateDir = stateWith(30);
  settle(stateDir);
  const first = await managerOf(stateDir).page({ limit: 3 });
  assert.deepEqual(ids(first.records), [id(30), id(29), id(28)]);
  assert.equal(first.total, 30);
  assert.deepEqual(first.corrupt, []);
  const failed = await managerOf(stateDir).page({ state: "failed", limit: 2 });
  assert.deepEqual(ids(failed.records), [id(30), id(25)]);
  assert.equal(failed.total, 6);
  // The index the first process wrote names every folder.
  const written = JSON.parse(readFileSync(INDEX(stateDir), "utf8")) as IndexFile;
  assert.equal(written.ids.split(",").length, 30);
  assert.equal(written.states.replaceAll("c", "").length, 6, "six failed");
  const all = await managerOf(stateDir).page({ limit: Infinity });
  assert.equal(all.records.length, 30);
  assert.deepEqual(ids(all.records), Array.from({ length: 30 }, (_, i) => id(30 - i)));
});

Deno.test("page: a folder removed, a record changed or emptied behind the index's back", async () => {
  const stateDir = stateWith(10);
  settle(stateDir);
  const manager = managerOf(stateDir);
  assert.equal((await manager.page({ limit: 3 })).total, 10);
  // A whole folder goes (a prune by hand): the state dir changes, and is listed again.
  rmSync(join(stateDir, id(10)), { recursive: true });
  let page = await manager.page({ limit: 3 });
  assert.deepEqual(ids(page.records), [id(9), id(8), id(7)]);
  assert.equal(page.total, 9);
  settle(stateDir);
  await manager.page({ limit: 3 });
  // Inside a folder the state dir does not change: a shown row is read from its folder anyway.
  writeJob(stateDir, job(9, { state: "cancelled", promptPreview: "edited" }));
  rmSync(join(stateDir, id(8), "job.json"));
  page = await manager.page({ limit: 3 });
  assert.deepEqual(ids(page.records), [id(9), id(7), id(6)]);
  assert.equal(page.records[0]!.state, "cancelled");
  assert.equal(page.records[0]!.promptPreview, "edited");
  assert.equal(page.total, 8);
  // A new process, from the index on disk, sees the same.
  const again = await managerOf(stateDir).page({ limit: 3 });
  assert.deepEqual(ids(again.records), [id(9), id(7), id(6)]);
  assert.equal(again.total, 8);
  // The record comes back: shown again.
  writeJob(stateDir, job(8));
  assert.deepEqual(ids((await manager.page({ limit: 3 })).records), [id(9), id(8), id(7)]);
});

Deno.test("page: a new job folder is listed at once, by this process and a new one", async () => {
  const stateDir = stateWith(5);
  settle(stateDir);
  const manager = managerOf(stateDir);
  await manager.page({ limit: 2 });
  // Another server process runs job 6.
  const server = spawn("sleep", ["60"], { stdio: "ignore" });
  try {
    const owner = await identityOf(server.pid!);
    assert.ok(owner);
    writeJob(stateDir, job(6, { state: "running", owner }));
    for (const m of [manager, managerOf(stateDir)]) {
      const page = await m.page({ limit: 2 });
      assert.deepEqual(ids(page.records), [id(6), id(5)]);
      assert.equal(page.records[0]!.state, "running");
      assert.equal(page.total, 6);
    }
    settle(stateDir);
    await manager.page({ limit: 2 });
    // A job that has not ended is read on every listing: its end shows once it is written.
    writeJob(stateDir, job(6, { state: "completed", endedAt: T + 7000 }));
    assert.equal((await manager.page({ limit: 1 })).records[0]!.state, "completed");
    assert.equal((await managerOf(stateDir).page({ limit: 1 })).records[0]!.state, "completed");
  } finally {
    server.kill();
  }
});

Deno.test("page: an index that names folders that do not exist shows none of them", async () => {
  const stateDir = stateWith(4);
  await managerOf(stateDir).page({ limit: 2 });
  // Listed once the state dir had settled: the index says which state dir it lists.
  settle(stateDir);
  await managerOf(stateDir).page({ limit: 2 });
  // The index as written, with the state dir's current stamp, plus made-up jobs newer than
  // every real one: a job that never existed, and one whose folder has no record.
  const index = JSON.parse(readFileSync(INDEX(stateDir), "utf8")) as IndexFile;
  assert.ok(index.stamp, "the listing was trusted");
  index.ids += `,${id(99)},${id(98)}`;
  index.created.push(T + 99_000, 0);
  index.states += "c-";
  writeFileSync(INDEX(stateDir), JSON.stringify(index));
  const page = await managerOf(stateDir).page({ limit: 2 });
  assert.deepEqual(ids(page.records), [id(4), id(3)]);
  assert.equal(page.total, 4);
  assert.deepEqual(page.corrupt, []);
  // An unreadable index is no index: the folders are listed and read.
  writeFileSync(INDEX(stateDir), "{ not json");
  const rebuilt = await managerOf(stateDir).page({ limit: 2 });
  assert.deepEqual(ids(rebuilt.records), [id(4), id(3)]);
  assert.equal(rebuilt.total, 4);
});

Deno.test("page: a name in the index that is not a lower-case id is left out, the rest kept", async () => {
  const stateDir = stateWith(4);
  const lettered = "abcdef00-0000-4000-8000-000000000000";
  writeJob(stateDir, baseRecord(lettered, SESSION, { createdAt: T + 5000 }));
  // The first listing makes the index's folder, which changes the state dir.
  await managerOf(stateDir).page({ limit: 2 });
  settle(stateDir);
  await managerOf(stateDir).page({ limit: 2 });
  // The index with the state dir's stamp, plus the upper-case name of a real job, newer than
  // every job: taken as a name, it would show and count that job twice.
  const index = JSON.parse(readFileSync(INDEX(stateDir), "utf8")) as IndexFile;
  assert.ok(index.stamp, "the listing was trusted");
  index.ids += `,${lettered.toUpperCase()}`;
  index.created.push(T + 99_000);
  index.states += "c";
  writeFileSync(INDEX(stateDir), JSON.stringify(index));
  const page = await managerOf(stateDir).page({ limit: 3 });
  assert.deepEqual(ids(page.records), [lettered, id(4), id(3)]);
  assert.equal(page.total, 5);
});

Deno.test("page: an unreadable record is reported on every listing, shown or not", async () => {
  const stateDir = stateWith(6);
  writeFileSync(join(stateDir, id(2), "job.json"), "{ half written");
  settle(stateDir);
  for (const m of [managerOf(stateDir), managerOf(stateDir)]) {
    const page = await m.page({ limit: 2 });
    assert.deepEqual(ids(page.records), [id(6), id(5)]);
    assert.equal(page.total, 5);
    assert.deepEqual(page.corrupt.map((c) => c.id), [id(2)]);
    assert.match(page.corrupt[0]!.reason, /job\.json is not valid JSON/);
  }
});

Deno.test("page: more shown rows gone than were chosen to spare, the next ones are found", async () => {
  const stateDir = stateWith(40);
  settle(stateDir);
  const manager = managerOf(stateDir);
  await manager.page({ limit: 3 });
  // The records of the 12 newest jobs go; their folders stay, so the state dir is unchanged.
  for (let n = 29; n <= 40; n++) rmSync(join(stateDir, id(n), "job.json"));
  const page = await manager.page({ limit: 3 });
  assert.deepEqual(ids(page.records), [id(28), id(27), id(26)]);
  assert.equal(page.total, 28);
  const failed = await managerOf(stateDir).page({ state: "failed", limit: 2 });
  assert.deepEqual(ids(failed.records), [id(25), id(20)]);
  assert.equal(failed.total, 5);
});
