/**
 * A refusal for a daily budget in words both front ends use: the spend, the budget, the reset.
 * Apart from daily_budget.ts, which reads the ledger: every `jobs` command words its errors
 * with this, and the listing must not load the ledger's modules to start (issue 34, item 4).
 */
import { formatCost } from "./cost.ts";
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

/** `3 h 12 min`, `12 min`: how long until `at`. */
export function untilText(at: number, now: number): string {
  const minutes = Math.max(1, Math.ceil((at - now) / 60_000));
  const h = Math.floor(minutes / 60);
  const m = minutes % 60;
  return h > 0 ? `${h} h${m > 0 ? ` ${m} min` : ""}` : `${m} min`;
}
