/**
 * `ollama-delegate stats` as a user runs it, and the ledger it reads surviving `jobs prune`.
 */
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { appendLedger } from "../../src/jobs/ledger.ts";
import type { JobRecord } from "../../src/jobs/record.ts";
import { repoIdOf } from "../../src/jobs/repo_id.ts";
import { baseRecord, cliEnv, runCli, writeJob } from "./jobs_support.ts";

function verifiedJob(model: string, passed: boolean, repo: string, rounds = 0): JobRecord {
  return baseRecord(crypto.randomUUID(), crypto.randomUUID(), {
    model,
    agent: "tester",
    repo,
    checks: { verify: ["npm test"] },
    verification: {
      verdict: passed ? "passed" : "failed",
      rounds: Array.from({ length: rounds + 1 }, () => ({ passed, runs: [] })),
    },
    usage: {
      inputTokens: 900,
      outputTokens: 100,
      cacheReadTokens: 0,
      cacheCreationTokens: 0,
      numTurns: 1,
      durationMs: 2500,
    },
  });
}

Deno.test("stats: per model and agent in this repository, after jobs prune removed the folders", async () => {
  const ctx = cliEnv({
    userConfig: { pricing: { "qwen3-coder:30b": { inputPerMillion: 1, outputPerMillion: 1 } } },
  });
  const here = await repoIdOf(ctx.cwd);
  const jobs = [
    ...Array.from({ length: 10 }, (_, i) => verifiedJob("qwen3-coder:30b", i < 9, here, i % 2)),
    ...Array.from({ length: 6 }, (_, i) => verifiedJob("llama3.2:3b", i < 2, here)),
    verifiedJob("elsewhere:1b", true, "git:ffffffffffffffff"),
  ];
  const pricing = { "qwen3-coder:30b": { inputPerMillion: 1, outputPerMillion: 1 } };
  for (const job of jobs) {
    writeJob(ctx.stateDir, job);
    await appendLedger(ctx.stateDir, job, pricing);
  }
  const pruned = await runCli(ctx, ["jobs", "prune", "--older-than", "1d"]);
  assert.equal(pruned.code, 0, pruned.stderr);
  assert.match(pruned.stdout, /Removed 17 finished jobs/);
  assert.equal(existsSync(join(ctx.stateDir, jobs[0]!.id)), false, "the job folders are gone");
  assert.equal(
    readFileSync(join(ctx.stateDir, "ledger.jsonl"), "utf8").trim().split("\n").length,
    17,
  );

  const run = await runCli(ctx, ["stats"]);
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stdout, new RegExp(`Verified work in this repository \\(${here}\\): 16 jobs`));
  assert.match(
    run.stdout,
    /qwen3-coder:30b +tester +10 +█{18}░{2} 9 of 10 \(90%\) +0\.5 +1\.1k +\$0\.0011 +3s \/ 3s/,
  );
  assert.match(run.stdout, /llama3\.2:3b +tester +6 +█{7}░{13} 2 of 6 \(33%\) +0 +3\.0k +unknown/);
  assert.doesNotMatch(run.stdout, /elsewhere/);
  assert.match(run.stdout, /Other repositories: ollama-delegate stats --all/);

  const all = await runCli(ctx, ["stats", "--all", "--json"]);
  const report = JSON.parse(all.stdout);
  assert.equal(report.repo, null);
  assert.equal(report.jobs, 17);
  assert.deepEqual(
    report.groups.map((g: { model: string; passed: number }) => [g.model, g.passed]),
    [["qwen3-coder:30b", 9], ["llama3.2:3b", 2], ["elsewhere:1b", 1]],
  );
  const bad = await runCli(ctx, ["stats", "--days", "x"]);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /Cannot use --days "x"/);
});
