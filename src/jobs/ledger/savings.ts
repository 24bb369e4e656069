/**
 * What delegation saved, from the quality ledger (issue 31, item 5): per UTC day and per model,
 * what the delegated tokens cost by the user's pricing table, what the same tokens would have
 * cost at the orchestrator's price, and the verified pass rate of those jobs, so that a user
 * sees whether delegation pays. The ledger outlives `jobs prune`, so pruned jobs count.
 *
 * It is an estimate, and the reports say so: the same tokens at the orchestrator's price is
 * not what Claude would have spent on the same work (it may need fewer or more tokens), and
 * every prompt token is priced as fresh input, as the pricing table prices delegates' prompts
 * (cost.ts `promptTokens`): with Anthropic's prompt caching Claude would pay less for the
 * repeated part of a conversation, so the figure is an upper bound.
 */
import type { OrchestratorPrice } from "../../settings/orchestrator_price.ts";
import { utcDay } from "../spend/cost.ts";
import type { LedgerEntry } from "./ledger.ts";

/** The figures of one day, one model, or all. */
export interface SavingsRow {
  /** The UTC day (YYYY-MM-DD), the model's canonical name, or "total". */
  key: string;
  jobs: number;
  tokensIn: number;
  tokensOut: number;
  /** What the priced jobs cost by the pricing table. */
  delegatedCost: number;
  /** Jobs whose model has no price: their cost is unknown, not 0. */
  unpricedJobs: number;
  /** The same tokens at the orchestrator's price. */
  orchestratorCost: number;
  /** orchestratorCost - delegatedCost; a lower bound of it when some jobs are unpriced. */
  saved: number;
  /** Jobs that had a check, and those whose check passed (a changed check's pass is not). */
  checked: number;
  passed: number;
  /** passed / checked; null without a check. */
  passRate: number | null;
}

export interface SavingsReport {
  orchestrator: OrchestratorPrice;
  /** Newest day first. */
  byDay: SavingsRow[];
  /** Highest orchestrator cost first. */
  byModel: SavingsRow[];
  total: SavingsRow;
}

function emptyRow(key: string): SavingsRow {
  return {
    key,
    jobs: 0,
    tokensIn: 0,
    tokensOut: 0,
    delegatedCost: 0,
    unpricedJobs: 0,
    orchestratorCost: 0,
    saved: 0,
    checked: 0,
    passed: 0,
    passRate: null,
  };
}

function add(row: SavingsRow, e: LedgerEntry, price: OrchestratorPrice): void {
  row.jobs++;
  row.tokensIn += e.tokensIn;
  row.tokensOut += e.tokensOut;
  if (e.cost === null) row.unpricedJobs++;
  else row.delegatedCost += e.cost;
  row.orchestratorCost += (e.tokensIn * price.inputPerMillion +
    e.tokensOut * price.outputPerMillion) / 1_000_000;
  if (e.verified !== null) {
    row.checked++;
    if (e.verified) row.passed++;
  }
}

function finish(row: SavingsRow): SavingsRow {
  row.saved = row.orchestratorCost - row.delegatedCost;
  row.passRate = row.checked === 0 ? null : row.passed / row.checked;
  return row;
}

/** The savings per day (of each job's end) and per model over `entries`. */
export function savingsReport(
  entries: readonly LedgerEntry[],
  orchestrator: OrchestratorPrice,
): SavingsReport {
  const byDay = new Map<string, SavingsRow>();
  const byModel = new Map<string, SavingsRow>();
  const total = emptyRow("total");
  for (const e of entries) {
    const day = utcDay(e.at);
    if (!byDay.has(day)) byDay.set(day, emptyRow(day));
    if (!byModel.has(e.model)) byModel.set(e.model, emptyRow(e.model));
    add(byDay.get(day)!, e, orchestrator);
    add(byModel.get(e.model)!, e, orchestrator);
    add(total, e, orchestrator);
  }
  return {
    orchestrator,
    byDay: [...byDay.values()].map(finish).sort((a, b) => b.key.localeCompare(a.key)),
    byModel: [...byModel.values()].map(finish).sort((a, b) =>
      b.orchestratorCost - a.orchestratorCost || a.key.localeCompare(b.key)
    ),
    total: finish(total),
  };
}
