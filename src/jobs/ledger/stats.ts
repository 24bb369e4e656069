/**
 * What the ledger says per model and agent: how often each one's work passed its check, in how
 * many rounds, at what price per verified success and how fast. `stats`, `delegate_usage` and
 * `model: "auto"` read these figures.
 */
import type { LedgerEntry } from "./ledger.ts";

export interface GroupStats {
  model: string;
  agent: string;
  /** The backend of the group's newest job. */
  backend: string;
  jobs: number;
  /** Jobs that had a check (verified true or false). */
  checked: number;
  /** Of those, the ones that passed it. */
  passed: number;
  /**
   * Of the checked, those that passed a check their delegate changed: counted as not passed
   * (ledger.ts `checkChanged`), and shown apart.
   */
  changedPasses: number;
  /** passed / checked; null without a check. */
  passRate: number | null;
  /** Median repair rounds over the checked jobs; null without a check. */
  medianRounds: number | null;
  /** All the group's tokens per verified success; null without one. */
  tokensPerSuccess: number | null;
  /** All the group's cost per verified success; null without one or with an unpriced job. */
  costPerSuccess: number | null;
  /** Cost per job; null when a job of the group had no price. */
  costPerJob: number | null;
  p50WallMs: number;
  p95WallMs: number;
}

/** Which entries count: one repository (its id) or all, from a time on. */
export interface StatsFilter {
  repo?: string;
  since?: number;
  engine?: string;
}

export function filterEntries(entries: readonly LedgerEntry[], f: StatsFilter): LedgerEntry[] {
  return entries.filter((e) =>
    (f.repo === undefined || e.repo === f.repo) && (f.since === undefined || e.at >= f.since) &&
    (f.engine === undefined || e.engine === f.engine)
  );
}

/** The value at quantile `q` (0-1) of `values`, nearest rank; 0 for none. */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank]!;
}

function median(values: readonly number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Figures per model and agent, the most verified successes first. */
export function groupStats(entries: readonly LedgerEntry[]): GroupStats[] {
  const groups = new Map<string, LedgerEntry[]>();
  for (const e of entries) {
    const key = `${e.model}\0${e.agent}`;
    const list = groups.get(key) ?? [];
    list.push(e);
    groups.set(key, list);
  }
  const out: GroupStats[] = [];
  for (const list of groups.values()) {
    const checked = list.filter((e) => e.verified !== null);
    const passed = checked.filter((e) => e.verified === true).length;
    const tokens = list.reduce((n, e) => n + e.tokensIn + e.tokensOut, 0);
    const priced = list.every((e) => e.cost !== null);
    const cost = list.reduce((n, e) => n + (e.cost ?? 0), 0);
    const walls = list.map((e) => e.wallMs);
    const newest = list.reduce((a, b) => (b.at > a.at ? b : a));
    out.push({
      model: newest.model,
      agent: newest.agent,
      backend: newest.backend,
      jobs: list.length,
      checked: checked.length,
      passed,
      changedPasses: list.filter((e) => e.checkChanged === "passed").length,
      passRate: checked.length > 0 ? passed / checked.length : null,
      medianRounds: median(checked.map((e) => e.rounds)),
      tokensPerSuccess: passed > 0 ? tokens / passed : null,
      costPerSuccess: passed > 0 && priced ? cost / passed : null,
      costPerJob: priced ? cost / list.length : null,
      p50WallMs: quantile(walls, 0.5),
      p95WallMs: quantile(walls, 0.95),
    });
  }
  return out.sort((a, b) =>
    b.passed - a.passed || (b.passRate ?? -1) - (a.passRate ?? -1) || b.jobs - a.jobs ||
    a.model.localeCompare(b.model) || a.agent.localeCompare(b.agent)
  );
}
