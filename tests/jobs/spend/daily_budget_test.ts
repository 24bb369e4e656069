import { tempDir } from "../../support/temp_dir.ts";
import assert from "node:assert/strict";
import { join } from "node:path";
import { appendFile } from "node:fs/promises";
import {
  checkDailyBudget,
  dailyBudgetLines,
  utcDayBounds,
} from "../../../src/jobs/spend/daily_budget.ts";
import { untilText } from "../../../src/jobs/spend/daily_budget_text.ts";
import { isJobError } from "../../../src/jobs/errors.ts";
import type { LedgerEntry } from "../../../src/jobs/ledger/ledger.ts";
import { jobProblemText } from "../../../src/server/job_errors.ts";

const NOW = Date.UTC(2025, 5, 1, 20, 48);

function entry(over: Partial<LedgerEntry>): LedgerEntry {
  return {
    v: 1,
    at: NOW - 60_000,
    job: crypto.randomUUID(),
    model: "m:latest",
    engine: "native",
    backend: "ollama",
    agent: "adhoc",
    repo: "",
    verified: null,
    rounds: 0,
    toolCalls: 1,
    tokensIn: 400,
    tokensOut: 100,
    cost: 0.25,
    wallMs: 1000,
    state: "completed",
    ...over,
  };
}

async function ledger(entries: LedgerEntry[]): Promise<string> {
  const dir = tempDir("od-daily-");
  for (const e of entries) await appendFile(join(dir, "ledger.jsonl"), JSON.stringify(e) + "\n");
  return dir;
}

async function refusal(run: Promise<void>): Promise<string> {
  try {
    await run;
  } catch (e) {
    assert.ok(isJobError(e));
    return jobProblemText(e.problem);
  }
  throw new Error("not refused");
}

Deno.test("a backend past its daily budget refuses new jobs until the UTC day ends", async () => {
  const dir = await ledger([
    entry({ at: NOW - 86_400_000 }), // yesterday: not counted
    entry({}),
    entry({ cost: null }),
    entry({ backend: "vllm", tokensIn: 10_000 }),
  ]);
  const budgets = { usd: { ollama: 0.5 }, tokens: { ollama: 1000, vllm: 20_000 } };
  // Today on ollama: 2 jobs, 1000 tokens, $0.25 known + 1 unpriced.
  assert.equal(
    await refusal(checkDailyBudget(dir, budgets, undefined, NOW)),
    'Cannot start job: backend "ollama" has used 1000 tokens of its daily budget 1000 ' +
      "(dailyBudgetTokens) today (UTC); the day resets at 2025-06-02 00:00 UTC, in 3 h 12 min. " +
      "Wait until then, use another backend, or do the work yourself; only the user can raise " +
      "the budget, from a terminal",
  );
  await checkDailyBudget(dir, budgets, "vllm", NOW);
  await checkDailyBudget(dir, { usd: { ollama: 0.5 }, tokens: {} }, "ollama", NOW);
  assert.match(
    await refusal(checkDailyBudget(dir, { usd: { ollama: 0.25 }, tokens: {} }, "ollama", NOW)),
    /has used \$0\.2500 of its daily budget \$0\.2500 \(dailyBudgetUsd\), not counting 1 unpriced job today/,
  );
  // The next day starts again.
  await checkDailyBudget(dir, budgets, undefined, utcDayBounds(NOW).next + 1);
  assert.deepEqual(await dailyBudgetLines(dir, budgets, NOW), [
    "Daily budgets (UTC day; they reset at 00:00 UTC, in 3 h 12 min):",
    "  ollama: $0.2500 of $0.5000 (+ 1 unpriced job); 1000 of 1000 tokens  <- reached: new jobs are refused",
    "  vllm: 10100 of 20000 tokens",
  ]);
  assert.equal(untilText(NOW + 5 * 60_000, NOW), "5 min");
});

Deno.test("a ledger line with a backend's negative usage, written before usage was counted, is no credit", async () => {
  // As a server before issue 28's item 8 wrote it: prompt_eval_count -1000000000.
  const dir = await ledger([
    entry({ tokensIn: -1_000_000_000, tokensOut: 0, cost: -999.99 }),
    entry({ tokensIn: 400, tokensOut: 100, cost: 0.25 }),
  ]);
  const budgets = { usd: { ollama: 0.25 }, tokens: { ollama: 500 } };
  assert.match(
    await refusal(checkDailyBudget(dir, budgets, undefined, NOW)),
    /has used 500 tokens of its daily budget 500 \(dailyBudgetTokens\)/,
  );
  assert.match(
    await refusal(checkDailyBudget(dir, { usd: budgets.usd, tokens: {} }, undefined, NOW)),
    /has used \$0\.2500 of its daily budget \$0\.2500 \(dailyBudgetUsd\)/,
  );
  assert.deepEqual((await dailyBudgetLines(dir, budgets, NOW)).slice(1), [
    "  ollama: $0.2500 of $0.2500; 500 of 500 tokens  <- reached: new jobs are refused",
  ]);
});
