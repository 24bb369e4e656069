import { parseArgs } from "node:util";
import { usageTotals } from "../../jobs/spend/cost.ts";
import { pruneJobs } from "../../jobs/retention.ts";
import { listRecords } from "../../jobs/job_reads.ts";
import { ledgerPath, usageHistory } from "../../jobs/ledger/usage_ledger.ts";
import { recordsInDays, renderUsage } from "../../jobs/ledger/usage_report.ts";
import { escapeLine, quotePath } from "../../platform/plain_text.ts";
import {
  type CliIo,
  humanAge,
  type JobsContext,
  JobsUsageError,
  parseAge,
  parseCount,
} from "./common.ts";

const DAY_MS = 86_400_000;

/** `jobs prune [--older-than 7d] [--dry-run]`. */
export async function jobsPrune(ctx: JobsContext, argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    options: {
      "older-than": { type: "string" },
      "dry-run": { type: "boolean" },
      json: { type: "boolean" },
    },
    strict: true,
    allowPositionals: true,
  });
  if (positionals.length > 0) {
    throw new JobsUsageError(`jobs prune takes no arguments ("${positionals[0]}")`);
  }
  let olderThanMs: number;
  if (values["older-than"] !== undefined) olderThanMs = parseAge(values["older-than"]);
  else if (ctx.settings.retainDays > 0) olderThanMs = ctx.settings.retainDays * DAY_MS;
  else {
    throw new JobsUsageError(
      "retainDays is 0 (keep forever), so there is no default age: pass --older-than, e.g. 30d",
    );
  }
  const report = await pruneJobs(ctx.store, {
    olderThanMs,
    dryRun: values["dry-run"] === true,
    settings: ctx.settings,
  });
  if (values.json) {
    io.out(JSON.stringify(report, null, 2));
    return report.failed.length > 0 ? 1 : 0;
  }
  const verb = report.dryRun ? "Would remove" : "Removed";
  const out = [
    `${verb} ${report.removed.length} finished job${report.removed.length === 1 ? "" : "s"} ` +
    `that ended before ${new Date(report.cutoff).toISOString()} ` +
    `(older than ${humanAge(olderThanMs)}) from ${ctx.store.stateDir}`,
  ];
  for (const r of report.removed) {
    out.push(
      `  ${r.id}  ${r.state.padEnd(11)} ${new Date(r.endedAt).toISOString()}  ` +
        escapeLine(r.model),
    );
  }
  if (report.sessionsRemoved.length > 0) {
    out.push(
      `${report.dryRun ? "Would remove" : "Removed"} ${report.sessionsRemoved.length} ` +
        `conversation index file(s).`,
    );
  }
  const files = report.engineFiles.flatMap((f) => f.paths);
  if (files.length > 0) {
    // What Claude Code kept of these conversations: their transcripts, outside the job folders.
    out.push(
      `${verb} ${files.length} file(s) their engines kept of these conversations outside the ` +
        `job folders, e.g. ${quotePath(files[0]!)}.`,
    );
  }
  if (report.removed.length > 0) {
    out.push(
      `Their tokens and cost ${report.dryRun ? "would stay" : "stay"} counted by ` +
        `ollama-delegate jobs usage and delegate_usage (kept in ${
          ledgerPath(ctx.store.stateDir)
        }).`,
    );
  }
  for (const w of report.worktrees) out.push(`  ${escapeLine(w.note)}`);
  const counts = new Map<string, number>();
  for (const k of report.kept) counts.set(k.reason, (counts.get(k.reason) ?? 0) + 1);
  if (counts.size > 0) {
    out.push(`Kept: ${[...counts].map(([reason, n]) => `${n} ${reason}`).join(", ")}.`);
  }
  if (report.corrupt.length > 0) {
    out.push("Unreadable job records (skipped, not removed):");
    for (const c of report.corrupt) out.push(`  ${c.id}: ${escapeLine(c.reason)}`);
  }
  if (report.failed.length > 0) {
    out.push("Could not remove:");
    for (const f of report.failed) out.push(`  ${f.id}: ${escapeLine(f.reason)}`);
  }
  io.out(out.join("\n"));
  return report.failed.length > 0 ? 1 : 0;
}

/** `jobs usage [--days N]`: totals per model and per day. */
export async function jobsUsage(ctx: JobsContext, argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    options: { days: { type: "string" }, json: { type: "boolean" } },
    strict: true,
    allowPositionals: true,
  });
  if (positionals.length > 0) {
    throw new JobsUsageError(`jobs usage takes no arguments ("${positionals[0]}")`);
  }
  const days = parseCount("days", values.days, 0) ?? 30;
  const { records, corrupt } = await listRecords(ctx.recovery);
  // Pruned jobs count too: their usage outlives their folders (jobs/ledger/usage_ledger.ts).
  const { entries, unreadable } = await usageHistory(ctx.store, records);
  const now = Date.now();
  if (values.json) {
    const picked = recordsInDays(entries, days, now);
    io.out(
      JSON.stringify(
        { days, jobs: picked.length, ...usageTotals(picked, ctx.settings.pricing) },
        null,
        2,
      ),
    );
    return 0;
  }
  let text = renderUsage(entries, ctx.settings.pricing, { days, now });
  if (corrupt.length > 0) text += `\n${corrupt.length} unreadable job record(s) not counted.`;
  if (unreadable > 0) {
    text += `\n${unreadable} unreadable line(s) of ${ledgerPath(ctx.store.stateDir)} not counted.`;
  }
  io.out(text);
  return 0;
}
