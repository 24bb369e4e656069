/**
 * What delegation saved in words and as a chart, as `ollama-delegate stats` and
 * `delegate_usage` print it (savings.ts computes the figures).
 */
import { escapeLine } from "../../platform/plain_text.ts";
import { formatCost } from "../spend/cost.ts";
import type { SavingsReport, SavingsRow } from "./savings.ts";
import { compactTokens, verifiedText } from "./stats_report.ts";

/** Cells of the widest bar of the chart. */
const CHART_CELLS = 30;

/** `$0.0123`, `$0.0123 + unknown`, or `unknown` when no job of the row had a price. */
function delegatedText(r: SavingsRow): string {
  if (r.unpricedJobs === 0) return formatCost(r.delegatedCost);
  return r.unpricedJobs === r.jobs ? "unknown" : `${formatCost(r.delegatedCost)} + unknown`;
}

/** What was saved: exact when every job was priced, else at most that (`≤$0.64`). */
function savedText(r: SavingsRow): string {
  return `${r.unpricedJobs > 0 ? "≤" : ""}${formatCost(r.saved)}`;
}

/**
 * The sentence that says what the figures are: an estimate, at which price, an upper bound;
 * `where` names the jobs counted when the report does not say it elsewhere.
 */
export function savingsLead(report: SavingsReport, where = ""): string {
  const o = report.orchestrator;
  return `What delegation saved${where ? ` ${where}` : ""} (an estimate): the delegated ` +
    `tokens at the orchestrator's price, ` +
    `${o.label}, $${o.inputPerMillion}/$${o.outputPerMillion} per million tokens in/out, ` +
    "against what they cost by your pricing table. Every prompt token is priced as fresh " +
    "input (Claude's prompt cache would make part of it cheaper): read it as an upper bound.";
}

function rowLine(r: SavingsRow, width: number): string {
  const tokens = `${compactTokens(r.tokensIn)} / ${compactTokens(r.tokensOut)}`;
  return `  ${escapeLine(r.key).padEnd(width)}  ${String(r.jobs).padStart(4)}  ` +
    `${tokens.padEnd(15)}  ${delegatedText(r).padEnd(18)}  ` +
    `${formatCost(r.orchestratorCost).padEnd(9)}  ${savedText(r).padEnd(10)}  ${verifiedText(r)}`;
}

/** The table by day and by model, the total, and a chart of the days: `stats`. */
export function savingsLines(report: SavingsReport, maxDays = 14): string[] {
  if (report.total.jobs === 0) return [];
  const days = report.byDay.slice(0, maxDays);
  const width = Math.max(10, ...report.byModel.map((r) => escapeLine(r.key).length));
  const at = `at ${report.orchestrator.short}`;
  const head = (first: string) =>
    `  ${first.padEnd(width)}  jobs  ${"tokens in / out".padEnd(15)}  ${"delegated".padEnd(18)}  ${
      at.padEnd(9)
    }  ${"saved".padEnd(10)}  verified`;
  const out = [savingsLead(report), "", head("day"), ...days.map((r) => rowLine(r, width))];
  if (report.byDay.length > days.length) {
    out.push(`  (${report.byDay.length - days.length} earlier days in --json)`);
  }
  out.push("", head("model"), ...report.byModel.map((r) => rowLine(r, width)));
  out.push("", rowLine(report.total, width));
  out.push("", ...savingsChart(report, days));
  if (report.total.unpricedJobs > 0) {
    out.push(
      "",
      `${report.total.unpricedJobs} job(s) ran on models without a price: what they cost is ` +
        "unknown and what they saved is at most the figure shown (≤). A local model's price " +
        "is yours to set: ollama-delegate config --price <model>=<in>/<out>.",
    );
  }
  return out;
}

/**
 * One bar per day, as long as the day's tokens would have cost at the orchestrator's price
 * (the longest day fills the width): `▓` what delegation cost, `░` what it saved.
 */
export function savingsChart(report: SavingsReport, days = report.byDay): string[] {
  const max = Math.max(0, ...days.map((r) => Math.max(r.orchestratorCost, r.delegatedCost)));
  if (max <= 0) return [];
  const lines = [
    `  Each bar: the day's tokens at ${report.orchestrator.short}; ▓ what they cost delegated, ` +
    "░ what delegation saved",
  ];
  for (const r of [...days].reverse()) {
    const whole = Math.round((r.orchestratorCost / max) * CHART_CELLS);
    const spent = Math.min(CHART_CELLS, Math.round((r.delegatedCost / max) * CHART_CELLS));
    const bar = "▓".repeat(spent) + "░".repeat(Math.max(0, whole - spent));
    const note = r.delegatedCost > r.orchestratorCost
      ? "  (cost more than at the orchestrator)"
      : "";
    lines.push(
      `  ${r.key}  ${bar.padEnd(CHART_CELLS)}  ${formatCost(r.orchestratorCost)} at ` +
        `${report.orchestrator.short}, ${delegatedText(r)} delegated${note}`,
    );
  }
  return lines;
}

/** The short form for `delegate_usage`: the total, each model, and the newest days. */
export function savingsShort(report: SavingsReport, where = "", maxDays = 7): string[] {
  if (report.total.jobs === 0) return [];
  const line = (r: SavingsRow) =>
    `  ${escapeLine(r.key)}: ${r.jobs} job${r.jobs === 1 ? "" : "s"}, ` +
    `${delegatedText(r)} delegated vs ${formatCost(r.orchestratorCost)} at ` +
    `${report.orchestrator.short}, saved ${savedText(r)}, verified ${verifiedText(r)}`;
  return [
    savingsLead(report, where),
    line(report.total),
    "By model:",
    ...report.byModel.map(line),
    "By day:",
    ...report.byDay.slice(0, maxDays).map(line),
  ];
}
