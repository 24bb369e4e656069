/** A refusal for a daily budget in words both front ends use: the spend, the budget, the reset. */
import { formatCost } from "./cost.ts";
import { untilText } from "./daily_budget.ts";
import type { JobProblem } from "../errors.ts";

export function dailyBudgetText(p: Extract<JobProblem, { kind: "daily-budget" }>): string {
  const spent = p.what === "usd"
    ? `${formatCost(p.spent)} of its daily budget ${formatCost(p.budget)} (dailyBudgetUsd)` +
      (p.unpriced > 0
        ? `, not counting ${p.unpriced} unpriced job${p.unpriced === 1 ? "" : "s"}`
        : "")
    : `${p.spent} tokens of its daily budget ${p.budget} (dailyBudgetTokens)`;
  return `backend "${p.backend}" has used ${spent} today (UTC); the day resets at ` +
    `${new Date(p.resetsAt).toISOString().slice(0, 16).replace("T", " ")} UTC, in ` +
    untilText(p.resetsAt, p.now);
}
