import assert from "node:assert/strict";
import { budgetExceeded, budgetText, uncheckedBudget } from "../../../src/jobs/spend/budget.ts";

const spent = (input: number, output = 0) => ({
  inputTokens: input,
  outputTokens: output,
  cacheReadTokens: 0,
  cacheCreationTokens: 0,
});
const PRICING = { "qwen3:latest": { inputPerMillion: 1, outputPerMillion: 2 } };

Deno.test("budgetExceeded: tokens count prompt and output; a priced model is held to dollars", () => {
  assert.equal(budgetExceeded({ budgetTokens: 100 }, "x", spent(60, 40), {}), undefined);
  assert.match(budgetExceeded({ budgetTokens: 100 }, "x", spent(60, 41), {})!, /used 101 tokens/);
  // 1,000,000 prompt tokens at $1 and 500,000 output at $2: $2.00.
  const cost = budgetExceeded({ budgetUsd: 1.5 }, "qwen3", spent(1_000_000, 500_000), PRICING);
  assert.match(cost!, /^budget_exhausted: the job cost \$2\.00 .*budget_usd \$1\.50/);
  assert.equal(budgetExceeded({ budgetUsd: 1.5 }, "other", spent(9e9), PRICING), undefined);
});

Deno.test("uncheckedBudget and budgetText say when a dollar budget cannot be checked", () => {
  assert.equal(uncheckedBudget({ budgetUsd: 1 }, "qwen3:latest", PRICING), undefined);
  assert.match(
    uncheckedBudget({ budgetUsd: 1 }, "llama3", PRICING)!,
    /no price for "llama3:latest"/,
  );
  assert.equal(budgetText({}, "x", spent(5), PRICING), undefined);
  assert.equal(
    budgetText({ budgetTokens: 10, budgetUsd: 1 }, "qwen3", spent(4), PRICING),
    "4 of 10 tokens; $0.0000 of $1.00",
  );
  assert.equal(
    budgetText({ budgetUsd: 1 }, "llama3", spent(4), PRICING),
    "$1.00 not checked (no price for the model)",
  );
});
