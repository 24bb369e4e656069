import { canonicalModelName, sameModel } from "../../settings/model_names.ts";
import type { Price } from "../../settings/types.ts";
import { isTerminal, type JobRecord } from "../record.ts";

/**
 * What a job cost, from the user's `pricing` table only. Claude Code's own
 * `total_cost_usd` prices every model with Anthropic's table, which means nothing for an
 * Ollama or OpenRouter model, so it is never used; a model without a price has
 * an unknown cost, never 0.
 */
export type JobCost =
  | { kind: "known"; amount: number; price: Price }
  /** Tokens were counted but the pricing table has no entry for the model. */
  | { kind: "unpriced" }
  /** No usage was recorded: the job is live, or ended before its engine reported usage. */
  | { kind: "no-usage" };

/** The pricing entry for `model`: an exact key first, else one naming the same model. */
export function priceOf(
  model: string,
  pricing: Readonly<Record<string, Price>>,
): Price | undefined {
  const exact = pricing[model];
  if (exact) return exact;
  for (const [key, price] of Object.entries(pricing)) {
    if (sameModel(key, model)) return price;
  }
  return undefined;
}

/**
 * Every prompt token (fresh, cache read, cache creation) is charged at the input price: the
 * table has no cache rates, and an upper bound is more honest than a guess.
 */
export function promptTokens(usage: NonNullable<JobRecord["usage"]>): number {
  return usage.inputTokens + usage.cacheReadTokens + usage.cacheCreationTokens;
}

/** What cost and usage totals read of a job: a record, or a pruned job's ledger line. */
export type UsageFacts = Pick<JobRecord, "model" | "createdAt" | "usage">;

export function costOf(record: UsageFacts, pricing: Readonly<Record<string, Price>>): JobCost {
  if (!record.usage) return { kind: "no-usage" };
  const price = priceOf(record.model, pricing);
  if (!price) return { kind: "unpriced" };
  const amount = (promptTokens(record.usage) * price.inputPerMillion +
    record.usage.outputTokens * price.outputPerMillion) / 1_000_000;
  return { kind: "known", amount, price };
}

/**
 * An amount in the pricing table's own unit, "$0.0123" style: four decimals below 1, two
 * above. The "$" is a label; the unit is whatever the table was written in.
 */
export function formatCost(amount: number): string {
  return `$${amount.toFixed(Math.abs(amount) >= 1 ? 2 : 4)}`;
}

/** One job's cost for a line of text: an amount, "unknown", or "-" while nothing is counted yet. */
export function jobCostText(record: JobRecord, pricing: Readonly<Record<string, Price>>): string {
  const cost = costOf(record, pricing);
  switch (cost.kind) {
    case "known":
      return formatCost(cost.amount);
    case "unpriced":
      return "unknown";
    case "no-usage":
      return isTerminal(record.state) ? "unknown" : "-";
  }
}

/** Token counts and cost summed over a group of jobs. */
export interface UsageTotals {
  /** The model (canonical name), the UTC day (YYYY-MM-DD) or "total". */
  key: string;
  jobs: number;
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheCreationTokens: number;
  numTurns: number;
  durationMs: number;
  /** Sum over the jobs whose model has a price. */
  cost: number;
  pricedJobs: number;
  /** Jobs with counted tokens but no price: their cost is unknown, not 0. */
  unpricedJobs: number;
  /** Prompt plus output tokens of the unpriced jobs. */
  unpricedTokens: number;
  /** Jobs that recorded no usage at all (live, or ended before usage was reported). */
  noUsageJobs: number;
}

export interface UsageReport {
  byModel: UsageTotals[];
  byDay: UsageTotals[];
  total: UsageTotals;
}

function emptyTotals(key: string): UsageTotals {
  return {
    key,
    jobs: 0,
    inputTokens: 0,
    outputTokens: 0,
    cacheReadTokens: 0,
    cacheCreationTokens: 0,
    numTurns: 0,
    durationMs: 0,
    cost: 0,
    pricedJobs: 0,
    unpricedJobs: 0,
    unpricedTokens: 0,
    noUsageJobs: 0,
  };
}

function add(totals: UsageTotals, record: UsageFacts, cost: JobCost): void {
  totals.jobs++;
  const u = record.usage;
  if (u) {
    totals.inputTokens += u.inputTokens;
    totals.outputTokens += u.outputTokens;
    totals.cacheReadTokens += u.cacheReadTokens;
    totals.cacheCreationTokens += u.cacheCreationTokens;
    totals.numTurns += u.numTurns;
    totals.durationMs += u.durationMs;
  }
  switch (cost.kind) {
    case "known":
      totals.cost += cost.amount;
      totals.pricedJobs++;
      break;
    case "unpriced":
      totals.unpricedJobs++;
      totals.unpricedTokens += u ? promptTokens(u) + u.outputTokens : 0;
      break;
    case "no-usage":
      totals.noUsageJobs++;
  }
}

/** The UTC calendar day of a timestamp, YYYY-MM-DD. */
export function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/**
 * Totals per model (canonical name, so `llama3` and `llama3:latest` are one) and per UTC day
 * of `createdAt`. Models are ordered by cost then tokens, days newest first.
 */
export function usageTotals(
  records: readonly UsageFacts[],
  pricing: Readonly<Record<string, Price>>,
): UsageReport {
  const byModel = new Map<string, UsageTotals>();
  const byDay = new Map<string, UsageTotals>();
  const total = emptyTotals("total");
  for (const record of records) {
    const cost = costOf(record, pricing);
    const model = canonicalModelName(record.model);
    const day = utcDay(record.createdAt);
    if (!byModel.has(model)) byModel.set(model, emptyTotals(model));
    if (!byDay.has(day)) byDay.set(day, emptyTotals(day));
    add(byModel.get(model)!, record, cost);
    add(byDay.get(day)!, record, cost);
    add(total, record, cost);
  }
  const tokens = (t: UsageTotals) =>
    t.inputTokens + t.cacheReadTokens + t.cacheCreationTokens + t.outputTokens;
  return {
    byModel: [...byModel.values()].sort((a, b) =>
      b.cost - a.cost || tokens(b) - tokens(a) || a.key.localeCompare(b.key)
    ),
    byDay: [...byDay.values()].sort((a, b) => b.key.localeCompare(a.key)),
    total,
  };
}

/**
 * The cost of a group for a line of text: "$0.0123" when every job with usage is priced,
 * "unknown" when none is, and "$0.0123 + unknown (1234 tokens unpriced)" in between.
 */
export function totalsCostText(t: UsageTotals): string {
  if (t.unpricedJobs === 0) {
    return t.pricedJobs === 0 ? (t.noUsageJobs > 0 ? "unknown" : "-") : formatCost(t.cost);
  }
  const unknown = `unknown (${t.unpricedTokens} tokens unpriced)`;
  return t.pricedJobs === 0 ? unknown : `${formatCost(t.cost)} + ${unknown}`;
}
