/**
 * resolveJobRef, the one resolver of job ids and their prefixes behind the tools and the
 * terminal: what it finds among the job folders, and the candidates its refusals name.
 */
import assert from "node:assert/strict";
import { mkdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { isJobError, type JobProblem } from "../../src/jobs/errors.ts";
import { candidateText, resolveJobRef } from "../../src/jobs/job_ref.ts";
import { JobStore } from "../../src/jobs/store.ts";
import { tempDir } from "../support/harness.ts";
import { baseRecord, writeJob } from "../cli/jobs_support.ts";

const T = Date.UTC(2024, 2, 10, 12);
const S = "51000000-0000-4000-8000-000000000001";

function storeWith(ids: Array<[string, number]>): JobStore {
  const store = new JobStore(join(tempDir("od-ref-"), "state"));
  store.init();
  for (const [id, minute] of ids) {
    writeJob(store.stateDir, baseRecord(id, S, { createdAt: T + minute * 60_000 }));
  }
  return store;
}

async function problem(work: Promise<unknown>): Promise<JobProblem> {
  try {
    await work;
  } catch (e) {
    assert.ok(isJobError(e), String(e));
    return e.problem;
  }
  throw new Error("resolved, but a JobError was expected");
}

Deno.test("resolveJobRef: a unique prefix, any case, names its job; a whole id is taken as it is", async () => {
  const a = "a1b2c3d4-0000-4000-8000-000000000001";
  const store = storeWith([[a, 0], ["a1b2ffff-0000-4000-8000-000000000002", 1]]);
  assert.equal(await resolveJobRef(store, "a1b2c3d4"), a);
  assert.equal(await resolveJobRef(store, " A1B2C3 "), a);
  assert.equal(await resolveJobRef(store, "a1b2c3d4-0000"), a);
  // A whole id is the caller's to look up: no folder is needed to accept its form.
  const absent = "99999999-0000-4000-8000-000000000009";
  assert.equal(await resolveJobRef(store, absent.toUpperCase()), absent);
  // A job this process holds before its folder is written.
  const live = "77777777-0000-4000-8000-000000000007";
  assert.equal(await resolveJobRef(store, "7777", [live]), live);
});

Deno.test("resolveJobRef: ambiguous and unknown prefixes name the newest candidates", async () => {
  const ids: Array<[string, number]> = [];
  for (let i = 0; i < 7; i++) ids.push([`abcd000${i}-0000-4000-8000-00000000000${i}`, i]);
  const store = storeWith([...ids, ["12345678-0000-4000-8000-000000000000", 30]]);
  const ambiguous = await problem(resolveJobRef(store, "abcd"));
  assert.equal(ambiguous.kind, "ambiguous-job-prefix");
  if (ambiguous.kind !== "ambiguous-job-prefix") return;
  assert.equal(ambiguous.count, 7);
  assert.deepEqual(ambiguous.matches.map((m) => m.id.slice(0, 8)), [
    "abcd0006",
    "abcd0005",
    "abcd0004",
    "abcd0003",
    "abcd0002",
  ]);
  assert.equal(
    candidateText(ambiguous.matches[0]!),
    "abcd0006-0000-4000-8000-000000000006 (completed, qwen3:8b, created 2024-03-10 12:06 UTC)",
  );

  const unknown = await problem(resolveJobRef(store, "fedc"));
  assert.equal(unknown.kind, "unmatched-job-prefix");
  if (unknown.kind !== "unmatched-job-prefix") return;
  assert.equal(unknown.jobs, 8);
  assert.equal(unknown.stateDir, store.stateDir);
  assert.deepEqual(unknown.newest.map((m) => m.id.slice(0, 8)), [
    "12345678",
    "abcd0006",
    "abcd0005",
    "abcd0004",
    "abcd0003",
  ]);
  const empty = await problem(resolveJobRef(storeWith([]), "fedcba98"));
  assert.deepEqual(empty.kind === "unmatched-job-prefix" && empty.newest, []);
});

Deno.test("resolveJobRef: text that is no id nor prefix is refused before any folder is read", async () => {
  const store = storeWith([["abcd0000-0000-4000-8000-000000000000", 0]]);
  // A folder named like a prefix, and a link out of the state dir: neither is ever a job.
  mkdirSync(join(store.stateDir, "abcd"));
  symlinkSync("/etc", join(store.stateDir, "abcd0"));
  const cases: Array<[string, JobProblem["kind"], string?]> = [
    ["", "bad-job-ref", "empty"],
    ["abc", "bad-job-ref", "too-short"],
    ["../etc", "bad-job-ref", "not-an-id"],
    ["abcd/../..", "bad-job-ref", "not-an-id"],
    ["abcd0000-0000-4000-8000-0000000000000", "bad-job-ref", "not-an-id"],
    ["abcg", "bad-job-ref", "not-an-id"],
  ];
  for (const [ref, kind, why] of cases) {
    const p = await problem(resolveJobRef(store, ref));
    assert.equal(p.kind, kind, ref);
    assert.equal(p.kind === "bad-job-ref" && p.why, why, ref);
  }
  // Only the real job folder counts; the planted names do not make "abcd" ambiguous.
  assert.equal(await resolveJobRef(store, "abcd"), "abcd0000-0000-4000-8000-000000000000");
});
