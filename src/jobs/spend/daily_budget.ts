/**
 * Daily budgets per backend (`dailyBudgetUsd`, `dailyBudgetTokens`, user settings only): what
 * the jobs that ended on the current UTC day spent on a backend, from the quality ledger, and
 * the refusal of a new job once that reaches a budget. "ollama" names the Ollama at baseUrl,
 * which every claude job and a native job without a backend use.
 */
import { formatCost } from "./cost.ts";
import { JobError } from "../errors.ts";
import { type LedgerEntry, readQualityLedger } from "../ledger/ledger.ts";
import { DEFAULT_BACKEND } from "../../settings/backends.ts";
import { untilText } from "./daily_budget_text.ts";

const DAY_MS = 86_400_000;
/** How much of the ledger's end is read first for today's entries; more only when needed. */
const WINDOWS = [1024 * 1024, 8 * 1024 * 1024, 32 * 1024 * 1024];

export interface DailyBudgets {
  usd: Readonly<Record<string, number>>;
  tokens: Readonly<Record<string, number>>;
}

/** What one backend spent today. */
export interface DaySpend {
  backend: string;
  jobs: number;
  tokens: number;
  /** Sum over the jobs with a price. */
  cost: number;
  /** Jobs without a price: their cost is unknown and not in `cost`. */
  unpriced: number;
}

/** The start of the UTC day of `now`, and of the next one (when budgets reset). */
export function utcDayBounds(now: number): { start: number; next: number } {
  const start = Math.floor(now / DAY_MS) * DAY_MS;
  return { start, next: start + DAY_MS };
}

/** The ledger's entries that ended since `since`, reading no more of its end than needed. */
export async function ledgerSince(stateDir: string, since: number): Promise<LedgerEntry[]> {
  for (const window of WINDOWS) {
    const read = await readQualityLedger(stateDir, window);
    const oldest = read.entries[0];
    if (!read.truncated || window === WINDOWS.at(-1) || (oldest && oldest.at < since)) {
      return read.entries.filter((e) => e.at >= since);
    }
  }
  return [];
}

/** Today's spend per backend. */
export function spendByBackend(entries: readonly LedgerEntry[]): Map<string, DaySpend> {
  const out = new Map<string, DaySpend>();
  for (const e of entries) {
    const s = out.get(e.backend) ??
      { backend: e.backend, jobs: 0, tokens: 0, cost: 0, unpriced: 0 };
    s.jobs++;
    s.tokens += e.tokensIn + e.tokensOut;
    if (e.cost === null) s.unpriced++;
    else s.cost += e.cost;
    out.set(e.backend, s);
  }
  return out;
}

/**
 * Refuses a new job on `backend` (undefined: the default Ollama) once today's spend there has
 * reached one of its daily budgets; a JobError that names the spend and the reset.
 */
export async function checkDailyBudget(
  stateDir: string,
  budgets: DailyBudgets,
  backend: string | undefined,
  now = Date.now(),
): Promise<void> {
  const name = backend ?? DEFAULT_BACKEND;
  const usd = budgets.usd[name];
  const tokens = budgets.tokens[name];
  if (usd === undefined && tokens === undefined) return;
  const { start, next } = utcDayBounds(now);
  const spend = spendByBackend(await ledgerSince(stateDir, start)).get(name);
  if (!spend) return;
  const refuse = (what: "usd" | "tokens", spent: number, budget: number) => {
    throw new JobError({
      kind: "daily-budget",
      backend: name,
      what,
      spent,
      budget,
      resetsAt: next,
      now,
      unpriced: spend.unpriced,
    });
  };
  if (tokens !== undefined && spend.tokens >= tokens) refuse("tokens", spend.tokens, tokens);
  if (usd !== undefined && spend.cost >= usd) refuse("usd", spend.cost, usd);
}

/** The spend against each daily budget, for `delegate_usage`; empty without budgets. */
export async function dailyBudgetLines(
  stateDir: string,
  budgets: DailyBudgets,
  now = Date.now(),
): Promise<string[]> {
  const names = [...new Set([...Object.keys(budgets.usd), ...Object.keys(budgets.tokens)])].sort();
  if (names.length === 0) return [];
  const { start, next } = utcDayBounds(now);
  const spend = spendByBackend(await ledgerSince(stateDir, start));
  const out = [
    `Daily budgets (UTC day; they reset at 00:00 UTC, in ${untilText(next, now)}):`,
  ];
  for (const name of names) {
    const s = spend.get(name) ?? { backend: name, jobs: 0, tokens: 0, cost: 0, unpriced: 0 };
    const parts: string[] = [];
    const usd = budgets.usd[name];
    const tokens = budgets.tokens[name];
    if (usd !== undefined) {
      parts.push(
        `${formatCost(s.cost)} of ${formatCost(usd)}` +
          (s.unpriced > 0 ? ` (+ ${s.unpriced} unpriced job${s.unpriced === 1 ? "" : "s"})` : ""),
      );
    }
    if (tokens !== undefined) parts.push(`${s.tokens} of ${tokens} tokens`);
    const reached = (usd !== undefined && s.cost >= usd) ||
      (tokens !== undefined && s.tokens >= tokens);
    out.push(
      `  ${name}: ${parts.join("; ")}${reached ? "  <- reached: new jobs are refused" : ""}`,
    );
  }
  return out;
}
