/**
 * What the orchestrator's own model charges per million tokens, for the estimate of what
 * delegated work would have cost had Claude done it (`stats`, `delegate_usage`; issue 31, item
 * 5). The setting `orchestratorPrice` names one of Claude Code's model aliases, priced by the
 * table below, or gives `<input>/<output>` per million tokens itself.
 *
 * The table holds Anthropic's list prices (USD per million tokens, standard rate, no batch or
 * cache discount) of the model each alias of Claude Code 2.1.332 names, as published in
 * December 2026 (Claude Fable 5.1, Opus 5.5, Sonnet 5.5, Haiku 4.5). Prices change: the setting
 * is there for the user's own figures, and every report says which price it used.
 */
import type { Price } from "./types.ts";

export const CLAUDE_LIST_PRICES: Readonly<Record<string, Price & { model: string }>> = {
  fable: { model: "Claude Fable 5.1", inputPerMillion: 10, outputPerMillion: 50 },
  opus: { model: "Claude Opus 5.5", inputPerMillion: 4, outputPerMillion: 20 },
  sonnet: { model: "Claude Sonnet 5.5", inputPerMillion: 2, outputPerMillion: 10 },
  haiku: { model: "Claude Haiku 4.5", inputPerMillion: 1, outputPerMillion: 5 },
};

/** The default: Claude Code's default model for its subscribers is Opus. */
export const DEFAULT_ORCHESTRATOR_PRICE = "opus";

/** The orchestrator's price in force: which it is (for the reports' label) and its rates. */
export interface OrchestratorPrice extends Price {
  /** `opus (Claude Opus 5.5, list price)` or `your price`. */
  label: string;
  /** For a column: `opus`, or `your price`. */
  short: string;
}

/** Why `text` is not an orchestrator price, or undefined. */
export function orchestratorPriceProblem(text: string): string | undefined {
  return parseOrchestratorPrice(text) === undefined
    ? `is ${Object.keys(CLAUDE_LIST_PRICES).join(", ")} or <input>/<output> per million tokens ` +
      "(e.g. 3/15)"
    : undefined;
}

/** The price `text` names: an alias of the table, or `in/out`; undefined when it is neither. */
export function parseOrchestratorPrice(text: string): OrchestratorPrice | undefined {
  const t = text.trim().toLowerCase();
  const listed = CLAUDE_LIST_PRICES[t];
  if (listed) {
    return {
      label: `${t} (${listed.model}, list price)`,
      short: t,
      inputPerMillion: listed.inputPerMillion,
      outputPerMillion: listed.outputPerMillion,
    };
  }
  const m = /^(\d+(?:\.\d+)?)\s*\/\s*(\d+(?:\.\d+)?)$/.exec(t);
  if (!m) return undefined;
  const input = Number(m[1]);
  const output = Number(m[2]);
  if (!(input <= 1e6 && output <= 1e6)) return undefined;
  return {
    label: "your price",
    short: "your price",
    inputPerMillion: input,
    outputPerMillion: output,
  };
}

/** The price of the `orchestratorPrice` setting in force (validated when loaded). */
export function orchestratorPriceOf(settings: { orchestratorPrice: string }): OrchestratorPrice {
  return parseOrchestratorPrice(settings.orchestratorPrice) ??
    parseOrchestratorPrice(DEFAULT_ORCHESTRATOR_PRICE)!;
}
