/**
 * The ledger's figures in words, as `ollama-delegate stats` and `delegate_usage` print them: one
 * line per model and agent, with a bar of its verified pass rate.
 */
import { escapeLine } from "../../platform/plain_text.ts";
import { formatCost } from "../spend/cost.ts";
import type { GroupStats } from "./stats.ts";

const BAR_CELLS = 20;

/** `█████████████████░░░` for a rate; blank for none. */
export function bar(rate: number | null, cells = BAR_CELLS): string {
  if (rate === null) return " ".repeat(cells);
  const full = Math.round(rate * cells);
  return "█".repeat(full) + "░".repeat(cells - full);
}

/** 12345 -> "12.3k", 1234567 -> "1.2M". */
export function compactTokens(n: number): string {
  if (n >= 1_000_000) return `${(n / 1_000_000).toFixed(1)}M`;
  if (n >= 1_000) return `${(n / 1_000).toFixed(1)}k`;
  return String(Math.round(n));
}

/** 41200 -> "41s", 123000 -> "2m03s". */
export function shortDuration(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${String(s % 60).padStart(2, "0")}s`;
  return `${Math.floor(m / 60)}h${String(m % 60).padStart(2, "0")}m`;
}

/** `9 of 10 (90%)`, or `no checks`. */
export function verifiedText(g: Pick<GroupStats, "passed" | "checked">): string {
  if (g.checked === 0) return "no checks";
  return `${g.passed} of ${g.checked} (${Math.round((g.passed / g.checked) * 100)}%)`;
}

/** The full table: `stats`. */
export function statsTable(groups: readonly GroupStats[]): string[] {
  if (groups.length === 0) return ["  (no ended jobs recorded)"];
  const model = Math.max(5, ...groups.map((g) => escapeLine(g.model).length));
  const agent = Math.max(5, ...groups.map((g) => escapeLine(g.agent).length));
  const head = `  ${"model".padEnd(model)}  ${"agent".padEnd(agent)}  jobs  ` +
    `${"verified".padEnd(BAR_CELLS + 16)}  rounds  tokens/ok  cost/ok    wall p50 / p95`;
  const lines = [head];
  for (const g of groups) {
    const verified = `${bar(g.passRate)} ${verifiedText(g)}`.padEnd(BAR_CELLS + 16);
    const rounds = g.medianRounds === null ? "-" : String(g.medianRounds);
    const tokens = g.tokensPerSuccess === null ? "-" : compactTokens(g.tokensPerSuccess);
    const cost = g.passed === 0
      ? "-"
      : g.costPerSuccess === null
      ? "unknown"
      : formatCost(g.costPerSuccess);
    lines.push(
      `  ${escapeLine(g.model).padEnd(model)}  ${escapeLine(g.agent).padEnd(agent)}  ` +
        `${String(g.jobs).padStart(4)}  ${verified}  ${rounds.padStart(6)}  ` +
        `${tokens.padStart(9)}  ${cost.padEnd(9)}  ` +
        `${shortDuration(g.p50WallMs)} / ${shortDuration(g.p95WallMs)}`,
    );
  }
  const changed = groups.filter((g) => g.changedPasses > 0);
  if (changed.length > 0) {
    lines.push("", "  Not counted as verified: passes of a check the delegate changed");
    for (const g of changed) {
      lines.push(`  ${escapeLine(g.model)} as ${escapeLine(g.agent)}: ${changedPasses(g)}`);
    }
  }
  return lines;
}

/** `3 passes of a check its delegate changed`. */
function changedPasses(g: Pick<GroupStats, "changedPasses">): string {
  return `${g.changedPasses} pass${g.changedPasses === 1 ? "" : "es"} of a check its ` +
    "delegate changed";
}

/** The short form for `delegate_usage`: one line per model and agent. */
export function statsShort(groups: readonly GroupStats[], limit = 10): string[] {
  return groups.slice(0, limit).map((g) => {
    const rounds = g.medianRounds === null ? "" : `, median ${g.medianRounds} repair rounds`;
    const cost = g.passed === 0
      ? ""
      : `, ${
        g.costPerSuccess === null ? "cost unknown" : formatCost(g.costPerSuccess)
      } per verified success`;
    const changed = g.changedPasses > 0 ? `, ${changedPasses(g)} (not counted)` : "";
    return `  ${escapeLine(g.model)} as ${escapeLine(g.agent)}: ${g.jobs} job${
      g.jobs === 1 ? "" : "s"
    }, ` +
      `verified ${verifiedText(g)}${rounds}${cost}${changed}`;
  });
}
