/**
 * A job's budgets (`budget_tokens`, `budget_usd`): what it has spent against them, whether it has
 * passed one, and the words for both. Cost comes from the pricing table only (cost.ts); a model
 * without a price cannot be held to a dollar budget, and the job says so from the start.
 */
import { canonicalModelName } from "../../settings/model_names.ts";
import type { Price } from "../../settings/types.ts";
import { formatCost, priceOf } from "./cost.ts";
import type { JobChecks } from "../record.ts";

/** Token counts, as engines report them. */
export interface Spent {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheCreationTokens: number;
}

const promptOf = (s: Spent) => s.inputTokens + s.cacheReadTokens + s.cacheCreationTokens;

/** Prompt plus output tokens. */
export function tokensOf(s: Spent): number {
  return promptOf(s) + s.outputTokens;
}

/** What `s` cost by `price`, every prompt token at the input price (as cost.ts charges). */
export function costAt(s: Spent, price: Price): number {
  return (promptOf(s) * price.inputPerMillion + s.outputTokens * price.outputPerMillion) /
    1_000_000;
}

export function addSpent(a: Spent | undefined, b: Spent | undefined): Spent {
  const zero = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheCreationTokens: 0 };
  const x = a ?? zero;
  const y = b ?? zero;
  return {
    inputTokens: x.inputTokens + y.inputTokens,
    outputTokens: x.outputTokens + y.outputTokens,
    cacheReadTokens: x.cacheReadTokens + y.cacheReadTokens,
    cacheCreationTokens: x.cacheCreationTokens + y.cacheCreationTokens,
  };
}

/**
 * The job's error when `spent` passes one of its budgets (`budget_exhausted: ...`), else
 * undefined. A dollar budget without a price for the model is never passed: it cannot be checked.
 */
export function budgetExceeded(
  checks: JobChecks | undefined,
  model: string,
  spent: Spent,
  pricing: Readonly<Record<string, Price>>,
): string | undefined {
  const tokens = tokensOf(spent);
  if (checks?.budgetTokens !== undefined && tokens > checks.budgetTokens) {
    return `budget_exhausted: the job used ${tokens} tokens, past its budget_tokens ` +
      `${checks.budgetTokens}; it was stopped at the next safe point. What it did so far is ` +
      "below; follow up to continue with a new budget";
  }
  const price = priceOf(model, pricing);
  if (checks?.budgetUsd !== undefined && price) {
    const cost = costAt(spent, price);
    if (cost > checks.budgetUsd) {
      return `budget_exhausted: the job cost ${formatCost(cost)} (${tokens} tokens at the ` +
        `pricing setting's rates), past its budget_usd ${formatCost(checks.budgetUsd)}; it was ` +
        "stopped at the next safe point. What it did so far is below; follow up to continue " +
        "with a new budget";
    }
  }
  return undefined;
}

/** The `warning:` of a job whose dollar budget cannot be checked, else undefined. */
export function uncheckedBudget(
  checks: JobChecks | undefined,
  model: string,
  pricing: Readonly<Record<string, Price>>,
): string | undefined {
  if (checks?.budgetUsd === undefined || priceOf(model, pricing)) return undefined;
  const tokens = checks.budgetTokens !== undefined
    ? ` Only budget_tokens (${checks.budgetTokens}) can stop it.`
    : " Nothing stops it but the job timeout; give budget_tokens too.";
  return `budget_usd ${formatCost(checks.budgetUsd)} cannot be checked: the pricing setting ` +
    `has no price for "${canonicalModelName(model)}".${tokens} The user can add one with ` +
    "`ollama-delegate config --price <model>=<in>/<out>`";
}

/** `1234 of 5000 tokens; $0.0012 of $0.50` for the summary's `budget:` line. */
export function budgetText(
  checks: JobChecks | undefined,
  model: string,
  spent: Spent | undefined,
  pricing: Readonly<Record<string, Price>>,
): string | undefined {
  if (checks?.budgetTokens === undefined && checks?.budgetUsd === undefined) return undefined;
  const parts: string[] = [];
  const used = spent ?? addSpent(undefined, undefined);
  if (checks.budgetTokens !== undefined) {
    parts.push(`${tokensOf(used)} of ${checks.budgetTokens} tokens`);
  }
  if (checks.budgetUsd !== undefined) {
    const price = priceOf(model, pricing);
    parts.push(
      price
        ? `${formatCost(costAt(used, price))} of ${formatCost(checks.budgetUsd)}`
        : `${formatCost(checks.budgetUsd)} not checked (no price for the model)`,
    );
  }
  return parts.join("; ");
}
