/**
 * Token totals and cost per model and per UTC day, in words: `delegate_usage` and
 * `jobs usage` print the same report.
 */
import { totalsCostText, type UsageTotals, usageTotals } from "../spend/cost.ts";
import type { UsageEntry } from "./usage_ledger.ts";
import type { Price } from "../../settings/types.ts";
import { escapeLine } from "../../platform/plain_text.ts";
import { readQualityLedger } from "./ledger.ts";
import { filterEntries, groupStats } from "./stats.ts";
import { repoIdOf } from "../repo_id.ts";
import { statsShort } from "./stats_report.ts";
import { savingsReport } from "./savings.ts";
import { savingsShort } from "./savings_report.ts";
import { orchestratorPriceOf } from "../../settings/orchestrator_price.ts";

const DAY_MS = 86_400_000;

export interface UsageOptions {
  /** Whole UTC days to include, today counted; 0 = every job on disk. */
  days: number;
  now?: number;
}

/** The records created in the last `days` UTC days (today included); 0 keeps all. */
export function recordsInDays<T extends { createdAt: number }>(
  records: readonly T[],
  days: number,
  now = Date.now(),
): T[] {
  if (!(days > 0)) return [...records];
  const startOfToday = Math.floor(now / DAY_MS) * DAY_MS;
  const from = startOfToday - (days - 1) * DAY_MS;
  return records.filter((r) => r.createdAt >= from);
}

function totalsLine(t: UsageTotals, width: number): string {
  const prompt = t.inputTokens + t.cacheReadTokens + t.cacheCreationTokens;
  const noUsage = t.noUsageJobs > 0 ? `  (${t.noUsageJobs} without usage)` : "";
  const key = escapeLine(t.key).padEnd(width);
  return `  ${key}  ${String(t.jobs).padStart(4)} job${t.jobs === 1 ? " " : "s"}` +
    `  in ${String(prompt).padStart(9)}  out ${String(t.outputTokens).padStart(8)}` +
    `  turns ${String(t.numTurns).padStart(4)}  cost ${totalsCostText(t)}${noUsage}`;
}

/**
 * `delegate_usage` and `jobs usage`: token totals and cost per model and per UTC day. Cost
 * comes from the pricing table only; a model without an entry shows "unknown", never 0.
 */
export function renderUsage(
  records: readonly UsageEntry[],
  pricing: Readonly<Record<string, Price>>,
  options: UsageOptions,
): string {
  const now = options.now ?? Date.now();
  const picked = recordsInDays(records, options.days, now);
  const span = options.days > 0
    ? `the last ${options.days} day${options.days === 1 ? "" : "s"} (UTC, today included)`
    : "all recorded jobs";
  const pruned = picked.filter((e) => e.pruned).length;
  const out = [
    `Usage over ${span}: ${picked.length} job${picked.length === 1 ? "" : "s"}` +
    (pruned > 0 ? ` (${pruned} of them pruned: their folders are gone, their usage is kept)` : ""),
  ];
  if (picked.length === 0) return out.join("\n");
  const report = usageTotals(picked, pricing);
  const width = Math.max(10, ...report.byModel.map((t) => escapeLine(t.key).length));
  out.push("", "By model:");
  for (const t of report.byModel) out.push(totalsLine(t, width));
  out.push("", "By day:");
  for (const t of report.byDay) out.push(totalsLine(t, width));
  out.push("", "Total:", totalsLine(report.total, width));
  const unpriced = report.byModel.filter((t) => t.unpricedJobs > 0).map((t) => escapeLine(t.key));
  out.push(
    "",
    "in = prompt tokens (fresh + cache), all charged at the input price. Cost uses the " +
      "pricing setting's unit.",
  );
  if (unpriced.length > 0) {
    out.push(
      `No price for: ${unpriced.join(", ")}. Their cost is unknown; add one with ` +
        "`ollama-delegate config --price <model>=<in>/<out>` (per million tokens).",
    );
  }
  return out.join("\n");
}

/**
 * The ledger's figures in short for `delegate_usage`: per model and agent in the repository of
 * `cwd`, over the last `days` (0 = all). Undefined when the ledger holds no job of it.
 */
export async function verifiedSection(
  stateDir: string,
  cwd: string,
  days: number,
  now = Date.now(),
): Promise<string | undefined> {
  const repo = await repoIdOf(cwd);
  const since = days > 0 ? now - days * DAY_MS : undefined;
  const entries = filterEntries((await readQualityLedger(stateDir)).entries, {
    repo,
    ...(since !== undefined ? { since } : {}),
  });
  if (entries.length === 0) return undefined;
  return ["Verified work in this repository (ollama-delegate stats for more):"]
    .concat(statsShort(groupStats(entries))).join("\n");
}

/**
 * What delegation saved, in short, for `delegate_usage`: every repository's jobs that ended in
 * the last `days` (0 = all), from the ledger. Undefined when it holds none.
 */
export async function savingsSection(
  stateDir: string,
  settings: { orchestratorPrice: string },
  days: number,
  now = Date.now(),
): Promise<string | undefined> {
  const since = days > 0 ? now - days * DAY_MS : undefined;
  const entries = filterEntries(
    (await readQualityLedger(stateDir)).entries,
    since !== undefined ? { since } : {},
  );
  const where = `in every repository, ${
    days > 0 ? `the last ${days} day${days === 1 ? "" : "s"}` : "all recorded jobs"
  }`;
  const lines = savingsShort(savingsReport(entries, orchestratorPriceOf(settings)), where);
  return lines.length > 0 ? lines.join("\n") : undefined;
}
