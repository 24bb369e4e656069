/**
 * The usage ledger of pruned jobs: what pruning appends, what the usage report reads back,
 * each job counted once, and a ledger damaged by a crash still read line by line.
 */
import assert from "node:assert/strict";
import { appendFileSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { pruneJobs } from "../../../src/jobs/retention.ts";
import { JobStore } from "../../../src/jobs/store.ts";
import { defaultSettings } from "../../../src/settings/fields.ts";
import {
  keepUsage,
  ledgerPath,
  readPrunedUsage,
  usageHistory,
} from "../../../src/jobs/ledger/usage_ledger.ts";
import { renderUsage } from "../../../src/jobs/ledger/usage_report.ts";
import { tempDir } from "../../support/harness.ts";
import { baseRecord, writeJob } from "../../cli/jobs_support.ts";

const T = Date.UTC(2024, 2, 10, 12);
const A = "a1000000-0000-4000-8000-000000000001";
const B = "b2000000-0000-4000-8000-000000000002";
const S1 = "51000000-0000-4000-8000-000000000001";
const S2 = "52000000-0000-4000-8000-000000000002";
const usage = (input: number, output: number) => ({
  inputTokens: input,
  outputTokens: output,
  cacheReadTokens: 0,
  cacheCreationTokens: 0,
  numTurns: 1,
  durationMs: 1000,
});
const PRICING = { "qwen3:8b": { inputPerMillion: 1, outputPerMillion: 2 } };

function store(): JobStore {
  const s = new JobStore(join(tempDir("od-ledger-"), "state"));
  s.init();
  return s;
}

Deno.test("pruneJobs keeps the usage of what it removes; the report is the same after", async () => {
  const s = store();
  writeJob(s.stateDir, baseRecord(A, S1, { usage: usage(1000, 100) }));
  writeJob(s.stateDir, baseRecord(B, S2, { model: "glm-5:cloud", createdAt: T + 60_000 }));
  const report = async () => {
    const { records } = await listed(s);
    const { entries } = await usageHistory(s, records);
    return renderUsage(entries, PRICING, { days: 0 });
  };
  const before = await report();
  const settings = { ...defaultSettings(), claudeConfigDir: join(s.stateDir, "..", "claude") };
  const dry = await pruneJobs(s, { olderThanMs: 0, dryRun: true, settings });
  assert.equal(dry.removed.length, 2);
  assert.equal((await readPrunedUsage(s.stateDir)).entries.length, 0, "a dry run keeps nothing");
  const done = await pruneJobs(s, { olderThanMs: 0, settings });
  assert.equal(done.removed.length, 2);
  assert.deepEqual(await s.ids(), []);
  const after = await report();
  assert.equal(
    after.split("\n")[0],
    "Usage over all recorded jobs: 2 jobs (2 of them pruned: their folders are gone, their " +
      "usage is kept)",
  );
  assert.equal(after.split("\n").slice(1).join("\n"), before.split("\n").slice(1).join("\n"));
  // Private to the user, like the rest of the state dir.
  assert.equal(statSync(ledgerPath(s.stateDir)).mode & 0o777, 0o600);
  assert.equal(statSync(join(s.stateDir, ".usage")).mode & 0o777, 0o700);
});

Deno.test("usageHistory: a job whose folder is still there counts once, from its record", async () => {
  const s = store();
  const record = baseRecord(A, S1, { usage: usage(1000, 100) });
  writeJob(s.stateDir, record);
  // As when the folder's removal failed after its line was written.
  await keepUsage(s.stateDir, [record]);
  await keepUsage(s.stateDir, [record]);
  const { records } = await listed(s);
  const { entries } = await usageHistory(s, records);
  assert.equal(entries.length, 1);
  assert.equal(entries[0]!.pruned, undefined);
});

Deno.test("readPrunedUsage: a line cut by a crash is skipped and counted; the next append is whole", async () => {
  const s = store();
  await keepUsage(s.stateDir, [baseRecord(A, S1, { usage: usage(10, 1) })]);
  appendFileSync(ledgerPath(s.stateDir), '{"id":"b2000000-0000-4000-8000-0000');
  await keepUsage(s.stateDir, [baseRecord(B, S2, { usage: usage(20, 2) })]);
  const lines = readFileSync(ledgerPath(s.stateDir), "utf8").split("\n");
  assert.equal(lines.length, 4, "the cut line ends where the next append starts a line");
  appendFileSync(
    ledgerPath(s.stateDir),
    "not json\n" + `{"id":"../x","model":"m"}\n` + "x".repeat(5000) + "\n",
  );
  const { entries, unreadable } = await readPrunedUsage(s.stateDir);
  assert.deepEqual(entries.map((e) => e.id), [A, B]);
  assert.deepEqual(entries[1]!.usage, usage(20, 2));
  assert.equal(unreadable, 4);
  // No ledger yet is no usage, not an error.
  assert.deepEqual(await readPrunedUsage(tempDir("od-ledger-none-")), {
    entries: [],
    unreadable: 0,
  });
});

/** The records on disk, as the usage report reads them. */
async function listed(s: JobStore) {
  const records = [];
  for (const id of await s.ids()) {
    const read = await s.read(id);
    if (read.kind === "ok") records.push(read.record);
  }
  return { records };
}

Deno.test("a record or pruned line with negative usage from before it was counted reads as 0, not a credit", async () => {
  const s = store();
  const negative = { ...usage(-1_000_000_000, -5), numTurns: -1, durationMs: -1 };
  writeJob(s.stateDir, baseRecord(A, S1, { usage: negative }));
  writeJob(s.stateDir, baseRecord(B, S2, { usage: usage(1000, 100) }));
  await keepUsage(s.stateDir, [baseRecord("c3000000-0000-4000-8000-000000000003", S2, {
    usage: { ...usage(0.5, -1), cacheReadTokens: -7 },
  })]);
  const { records } = await listed(s);
  const read = records.find((r) => r.id === A)!;
  assert.deepEqual(read.usage, { ...usage(0, 0), numTurns: 0, durationMs: 0 });
  const { entries } = await usageHistory(s, records);
  assert.deepEqual(entries.find((e) => e.pruned)!.usage, { ...usage(1, 0) });
  const report = renderUsage(entries, PRICING, { days: 0 });
  assert.match(report, /\n {2}total +3 jobs {2}in +1001 {2}out +100 /);
});
