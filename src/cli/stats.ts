/**
 * `ollama-delegate stats`: what the quality ledger says per model and agent, for the repository
 * of the current directory or for all: jobs, verified pass rate (with a bar), median repair
 * rounds, tokens and cost per verified success, wall time.
 */
import { parseArgs } from "node:util";
import { readQualityLedger } from "../jobs/ledger/ledger.ts";
import { filterEntries, groupStats } from "../jobs/ledger/stats.ts";
import { repoIdOf } from "../jobs/repo_id.ts";
import { statsTable } from "../jobs/ledger/stats_report.ts";
import { savingsReport } from "../jobs/ledger/savings.ts";
import { savingsLines } from "../jobs/ledger/savings_report.ts";
import { orchestratorPriceOf } from "../settings/orchestrator_price.ts";
import { formatProblems, loadSettings } from "../settings/load.ts";
import { type CliIo, JobsUsageError, parseCount, processIo } from "./jobs/common.ts";

export const STATS_HELP = `Usage: ollama-delegate stats [options]

Which model earns trust for which agent: every ended job leaves a line in the quality ledger
(<stateDir>/ledger.jsonl, kept by jobs prune), and this sums it up per model and agent.

Options:
  --all           every repository (default: the one of the current directory)
  --days <n>      only jobs that ended in the last n days (default: all)
  --json          the figures as JSON

verified = jobs whose check (verify) passed, of those that had one; rounds = median repair
rounds; tokens/ok and cost/ok = all the group's tokens and cost per verified success.

Then what delegation saved, per day and per model, with a chart: what the delegated tokens
cost by your pricing table, and an estimate of what the same tokens would have cost at the
orchestrator's price (setting orchestratorPrice: opus, sonnet, haiku, fable or <in>/<out>).`;

const DAY_MS = 86_400_000;

export async function statsMain(argv: string[], io: CliIo = processIo()): Promise<number> {
  try {
    const { values, positionals } = parseArgs({
      args: argv,
      options: {
        all: { type: "boolean" },
        days: { type: "string" },
        json: { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
      strict: true,
      allowPositionals: true,
    });
    if (values.help) {
      io.out(STATS_HELP);
      return 0;
    }
    if (positionals.length > 0) {
      throw new JobsUsageError(`stats takes no arguments ("${positionals[0]}")`);
    }
    const days = parseCount("days", values.days);
    const resolved = loadSettings({ env: io.env, cwd: io.cwd, home: io.home });
    for (const line of formatProblems(resolved.problems)) io.err(`ollama-delegate: ${line}`);
    const stateDir = resolved.settings.stateDir;
    const ledger = await readQualityLedger(stateDir);
    const repo = values.all ? undefined : await repoIdOf(io.cwd);
    const entries = filterEntries(ledger.entries, {
      ...(repo !== undefined ? { repo } : {}),
      ...(days !== undefined ? { since: Date.now() - days * DAY_MS } : {}),
    });
    const groups = groupStats(entries);
    const savings = savingsReport(entries, orchestratorPriceOf(resolved.settings));
    if (values.json) {
      io.out(
        JSON.stringify(
          {
            repo: repo ?? null,
            days: days ?? null,
            jobs: entries.length,
            groups,
            savings: { estimate: true, ...savings },
          },
          null,
          2,
        ),
      );
      return 0;
    }
    const where = repo === undefined ? "all repositories" : `this repository (${repo})`;
    const span = days === undefined ? "" : `, the last ${days} day${days === 1 ? "" : "s"}`;
    const out = [
      `Verified work in ${where}${span}: ${entries.length} job${entries.length === 1 ? "" : "s"}`,
      "",
    ];
    out.push(...statsTable(groups));
    const saved = savingsLines(savings);
    if (saved.length > 0) out.push("", ...saved);
    if (ledger.truncated) out.push("", "Only the newest 32 MiB of the ledger were read.");
    if (ledger.skipped > 0) out.push("", `${ledger.skipped} unreadable ledger line(s) skipped.`);
    if (repo !== undefined && entries.length < ledger.entries.length) {
      out.push("", "Other repositories: ollama-delegate stats --all");
    }
    io.out(out.join("\n"));
    return 0;
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    io.err(`ollama-delegate stats: ${message}`);
    return e instanceof JobsUsageError ? e.exitCode : 1;
  }
}
