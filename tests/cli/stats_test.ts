/**
 * `ollama-delegate stats` as a user runs it, and the ledger it reads surviving `jobs prune`.
 */
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { appendLedger } from "../../src/jobs/ledger/ledger.ts";
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

/** A job that ended on `day` (UTC noon) with known token counts. */
function spentJob(
  model: string,
  day: string,
  tokensIn: number,
  tokensOut: number,
  passed: boolean | undefined,
  repo: string,
): JobRecord {
  const at = Date.parse(`${day}T12:00:00Z`);
  return baseRecord(crypto.randomUUID(), crypto.randomUUID(), {
    model,
    repo,
    createdAt: at - 60_000,
    startedAt: at - 60_000,
    endedAt: at,
    ...(passed === undefined ? {} : {
      checks: { verify: ["npm test"] },
      verification: { verdict: passed ? "passed" : "failed", rounds: [{ passed, runs: [] }] },
    }),
    usage: {
      inputTokens: tokensIn,
      outputTokens: tokensOut,
      cacheReadTokens: 0,
      cacheCreationTokens: 0,
      numTurns: 1,
      durationMs: 1000,
    },
  });
}

Deno.test("stats: what delegation saved per day and per model, at the orchestrator's price, next to the verified rate, with a chart and in --json", async () => {
  const pricing = { "qwen3-coder:30b": { inputPerMillion: 1, outputPerMillion: 1 } };
  const ctx = cliEnv({ userConfig: { pricing } });
  const here = await repoIdOf(ctx.cwd);
  const jobs = [
    // Priced at 1/1: $1.10 delegated; at opus's list price (4/20 per M): 4 + 2 = $6.00.
    spentJob("qwen3-coder:30b", "2026-12-01", 1_000_000, 100_000, true, here),
    // A local model without a price: its cost is unknown; at opus: 2 + 1 = $3.00.
    spentJob("llama3.2:3b", "2026-12-02", 500_000, 50_000, false, here),
    // $0.22 delegated, $1.20 at opus; no check.
    spentJob("qwen3-coder:30b", "2026-12-02", 200_000, 20_000, undefined, here),
  ];
  for (const job of jobs) await appendLedger(ctx.stateDir, job, pricing);

  const json = JSON.parse((await runCli(ctx, ["stats", "--json"])).stdout);
  const s = json.savings;
  assert.equal(s.estimate, true);
  assert.deepEqual(s.orchestrator, {
    label: "opus (Claude Opus 5.5, list price)",
    short: "opus",
    inputPerMillion: 4,
    outputPerMillion: 20,
  });
  const pick = (r: Record<string, number | string | null>) => [
    r.key,
    r.jobs,
    Math.round((r.delegatedCost as number) * 100) / 100,
    r.unpricedJobs,
    Math.round((r.orchestratorCost as number) * 100) / 100,
    Math.round((r.saved as number) * 100) / 100,
    r.checked,
    r.passed,
  ];
  assert.deepEqual(s.byDay.map(pick), [
    ["2026-12-02", 2, 0.22, 1, 4.2, 3.98, 1, 0],
    ["2026-12-01", 1, 1.1, 0, 6, 4.9, 1, 1],
  ]);
  assert.deepEqual(s.byModel.map(pick), [
    ["qwen3-coder:30b", 2, 1.32, 0, 7.2, 5.88, 1, 1],
    ["llama3.2:3b", 1, 0, 1, 3, 3, 1, 0],
  ]);
  assert.deepEqual(pick(s.total), ["total", 3, 1.32, 1, 10.2, 8.88, 2, 1]);

  const text = (await runCli(ctx, ["stats"])).stdout;
  assert.match(
    text,
    /What delegation saved \(an estimate\): .*opus \(Claude Opus 5\.5, list price\), \$4\/\$20 per million/,
  );
  assert.match(text, /upper bound/);
  assert.match(
    text,
    /2026-12-01 +1 +1\.0M \/ 100\.0k +\$1\.10 +\$6\.00 +\$4\.90 +1 of 1 \(100%\)/,
  );
  assert.match(
    text,
    /2026-12-02 +2 +700\.0k \/ 70\.0k +\$0\.2200 \+ unknown +\$4\.20 +≤\$3\.98 +0 of 1 \(0%\)/,
  );
  assert.match(text, /llama3\.2:3b +1 +500\.0k \/ 50\.0k +unknown +\$3\.00 +≤\$3\.00 +0 of 1/);
  // The chart: the widest day fills 30 cells; ▓ what the day cost delegated.
  assert.match(text, /\n {2}2026-12-01 {2}▓{6}░{24} {2}\$6\.00 at opus, \$1\.10 delegated\n/);
  assert.match(
    text,
    /\n {2}2026-12-02 {2}▓{1}░{20} {11}\$4\.20 at opus, \$0\.2200 \+ unknown delegated\n/,
  );
  assert.match(text, /1 job\(s\) ran on models without a price/);

  // The user's own price for their orchestrator.
  const own = cliEnv({
    userConfig: { pricing, orchestratorPrice: "3/15" },
    stateDir: ctx.stateDir,
  });
  const mine = JSON.parse((await runCli(own, ["stats", "--all", "--json"])).stdout).savings;
  assert.equal(mine.orchestrator.label, "your price");
  assert.equal(Math.round(mine.total.orchestratorCost * 100) / 100, 7.65);
  const bad = cliEnv({ userConfig: { orchestratorPrice: "gpt-5" }, stateDir: ctx.stateDir });
  const refused = await runCli(bad, ["stats", "--json"]);
  assert.match(
    refused.stderr,
    /orchestratorPrice .*"gpt-5" is not valid: is fable, opus, sonnet, haiku or <input>\/<output>/,
  );
  assert.equal(JSON.parse(refused.stdout).savings.orchestrator.short, "opus");
});
