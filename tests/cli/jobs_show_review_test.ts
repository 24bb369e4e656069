/**
 * `jobs show` lists a review's review.json with the folder's other files, by the record's
 * kind: a task's folder is not looked at for one, and a record written before `kind` was
 * recorded shows one only when it may be a review (it ran as an agent) and the file is there.
 */
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { baseRecord, cliEnv, runCli, writeJob } from "./jobs_support.ts";

const S = "53000000-0000-4000-8000-000000000003";
const REVIEW = "d4000000-0000-4000-8000-000000000004";
const MISSING = "d5000000-0000-4000-8000-000000000005";
const TASK = "e5000000-0000-4000-8000-000000000005";
const OLD_REVIEW = "f6000000-0000-4000-8000-000000000006";
const OLD_TASK = "a7000000-0000-4000-8000-000000000007";

Deno.test("jobs show: a review's review.json is listed with its files; a task's is not", async () => {
  const ctx = cliEnv();
  const jobs = [
    baseRecord(REVIEW, S, { kind: "review", agent: "reviewer" }),
    baseRecord(MISSING, S, { kind: "review", agent: "reviewer" }),
    // A task that ran as an agent, with a review.json that is not its own.
    baseRecord(TASK, S, { kind: "task", agent: "tester" }),
    baseRecord(OLD_REVIEW, S, { agent: "reviewer" }),
    baseRecord(OLD_TASK, S),
  ];
  for (const r of jobs) {
    const dir = writeJob(ctx.stateDir, r, { result: "{}" });
    if (r.id !== MISSING) writeFileSync(join(dir, "review.json"), "{}");
  }
  const reviewLine = async (id: string) => {
    const run = await runCli(ctx, ["jobs", "show", id]);
    assert.equal(run.code, 0, run.stderr);
    return run.stdout.split("\n").find((l) => l.startsWith("review "));
  };
  assert.equal(
    await reviewLine(REVIEW),
    `review      ${join(ctx.stateDir, REVIEW, "review.json")}`,
  );
  assert.equal(
    await reviewLine(MISSING),
    `review      ${join(ctx.stateDir, MISSING, "review.json")}  (not there)`,
  );
  assert.equal(await reviewLine(TASK), undefined);
  assert.equal(
    await reviewLine(OLD_REVIEW),
    `review      ${join(ctx.stateDir, OLD_REVIEW, "review.json")}`,
  );
  assert.equal(await reviewLine(OLD_TASK), undefined);
  const json = JSON.parse((await runCli(ctx, ["jobs", "show", REVIEW, "--json"])).stdout);
  assert.equal(json.files.review, join(ctx.stateDir, REVIEW, "review.json"));
  assert.equal(json.record.kind, "review");
});
