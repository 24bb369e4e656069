import { recordPlaceText } from "../../jobs/residency.ts";
import { askedText } from "../../jobs/permission_asks.ts";
import { stat } from "node:fs/promises";
import { readFileHead } from "../../platform/file_ends.ts";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { folderReader } from "../../engines/registry.ts";
import { costOf, formatCost, priceOf } from "../../jobs/cost.ts";
import { JOB_FILES } from "../../jobs/job_folder.ts";
import { type JobRecord, mayHoldReview } from "../../jobs/record.ts";
import { elapsedMs, jobTokensText, turnsText } from "../../jobs/job_figures.ts";
import { commandsText } from "../../jobs/evidence_words.ts";
import { stateWithVerdict, verifyLines } from "../../jobs/verify_words.ts";
import { worktreeText } from "../../jobs/worktree/text.ts";
import { escapeBlock, escapeLine, quotePath } from "../../platform/plain_text.ts";
import type { Price } from "../../settings/types.ts";
import {
  type CliIo,
  humanDuration,
  type JobsContext,
  noMoreArguments,
  resolveJobId,
  styleFor,
} from "./common.ts";

const HEAD_CHARS = 2000;

const when = (ms: number | undefined) => (ms === undefined ? "-" : new Date(ms).toISOString());

/** The cost line of one job, saying why when it is unknown. */
export function costLine(record: JobRecord, pricing: Readonly<Record<string, Price>>): string {
  const cost = costOf(record, pricing);
  switch (cost.kind) {
    case "known":
      return `${formatCost(cost.amount)}  (pricing: ${cost.price.inputPerMillion} in / ` +
        `${cost.price.outputPerMillion} out per million tokens)`;
    case "unpriced":
      return `unknown  (no price for "${record.model}" in the pricing setting)`;
    case "no-usage":
      return priceOf(record.model, pricing)
        ? "unknown  (no token usage recorded)"
        : `unknown  (no token usage recorded, and no price for "${record.model}")`;
  }
}

/** A row when there is a value for it. */
function optionalRow(label: string, value: string | undefined): Array<[string, string]> {
  return value === undefined ? [] : [[label, value]];
}

/**
 * The record's fields as `label  value` lines. Values hold a delegate's file names, a
 * backend's errors, model names: each is escaped onto its line, so none can add lines or send
 * the terminal a control sequence.
 */
export function recordLines(
  record: JobRecord,
  pricing: Readonly<Record<string, Price>>,
  now = Date.now(),
): string[] {
  const r = record;
  const rows: Array<[string, string]> = [
    ["job", r.id],
    ["session", `${r.sessionId}   (turn ${r.turn})`],
    ["state", stateWithVerdict(r, r.state)],
    ["engine", r.engine + (r.backend ? `  (backend ${r.backend})` : "")],
    ...(r.endpoint ? [["endpoint", endpointText(r.endpoint)] as [string, string]] : []),
    ["model", r.modelChoice ? `${r.model}  (${r.modelChoice})` : r.model],
    ...optionalRow("where", recordPlaceText(r)),
    ...(r.agent !== undefined ? [["agent", r.agent] as [string, string]] : []),
    ["cwd", quotePath(r.cwd)],
    ["permission", r.effectivePermissionMode ?? r.options.permissionMode],
    ...(askedText(r) ? [["asked", askedText(r)!] as [string, string]] : []),
    ["created", when(r.createdAt)],
    ["started", when(r.startedAt)],
    ["ended", when(r.endedAt)],
    ["elapsed", humanDuration(elapsedMs(r, now))],
  ];
  if (r.usage) {
    rows.push(["tokens", `${jobTokensText(r)}  (${turnsText(r.usage.numTurns)})`]);
  }
  rows.push(["cost", costLine(r, pricing)]);
  rows.push(["tool calls", String(r.toolCalls)]);
  if (r.commands && r.commands.length > 0) rows.push(["commands", commandsText(r.commands)]);
  for (const [label, value] of verifyLines(r)) rows.push([label.replace(/:$/, ""), value]);
  for (const c of r.claims ?? []) rows.push(["claim", `"${c.claim}": ${c.reason}`]);
  const changed = r.changedFiles ?? [];
  const total = changed.length + (r.changedFilesMore ?? 0);
  if (total > 0 || r.changedFilesPartial) {
    rows.push([
      "changed",
      (total === 0 ? "none seen" : changed.slice(0, 10).map(quotePath).join(", ") +
        (total > 10 ? `, +${total - 10} more` : "")) +
      (r.changedFilesPartial ? `; incomplete: ${r.changedFilesPartial}` : ""),
    ]);
  } else if (r.changesTracked) rows.push(["changed", "none"]);
  if (r.owner && (r.state === "running" || r.state === "queued")) {
    rows.push(["server pid", String(r.owner.pid)]);
  }
  if (r.errorText && r.state !== "completed") rows.push(["error", r.errorText]);
  return [
    ...rows.map(([label, value]) => `${label.padEnd(12)}${escapeLine(value)}`),
    ...worktreeText(r, 12),
  ];
}

const exists = (path: string) => stat(path).then(() => true, () => false);

/** `jobs show ID`. */
export async function jobsShow(ctx: JobsContext, argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    options: { json: { type: "boolean" } },
    strict: true,
    allowPositionals: true,
  });
  const id = await resolveJobId(ctx.store, positionals[0], "jobs show <id>");
  noMoreArguments("jobs show", positionals.slice(1));
  const { record } = await ctx.manager.get(id);
  const dir = ctx.store.dirOf(id);
  const review = join(dir, JOB_FILES.review);
  const files = {
    folder: dir,
    record: ctx.store.recordPath(id),
    prompt: ctx.store.promptPath(id),
    result: ctx.store.resultPath(id),
    activity: join(dir, (await folderReader(record.engine)).activityFile),
    // A review's file is its own, listed even when missing; a record older than `kind` may
    // be a review, and then shows one only when its folder holds it.
    ...(record.kind === "review" || (mayHoldReview(record) && await exists(review))
      ? { review }
      : {}),
  };
  const prompt = readFileHead(files.prompt, HEAD_CHARS * 4);
  const result = await ctx.store.readResultText(id, HEAD_CHARS);
  if (values.json) {
    io.out(JSON.stringify(
      {
        record,
        cost: costOf(record, ctx.settings.pricing),
        prompt: prompt?.text.slice(0, HEAD_CHARS) ?? null,
        resultHead: result.text,
        resultLength: result.length,
        files,
      },
      null,
      2,
    ));
    return 0;
  }
  const style = styleFor(io);
  const out = recordLines(record, ctx.settings.pricing);
  out[2] = `${"state".padEnd(12)}${
    style.state(record.state, stateWithVerdict(record, record.state))
  }`;
  const promptText = prompt?.text ?? "";
  out.push("", style.bold(`--- prompt (${prompt?.size ?? 0} bytes) ---`));
  out.push(
    escapeBlock(
      promptText.length > HEAD_CHARS ? `${promptText.slice(0, HEAD_CHARS)}…` : promptText,
    ),
  );
  const shown = result.length > HEAD_CHARS
    ? `first ${HEAD_CHARS} of ${result.length} chars`
    : `${result.length} chars`;
  out.push("", style.bold(`--- result (${shown}) ---`));
  // The delegate's answer keeps its lines; what would drive the terminal is escaped.
  out.push(result.length === 0 ? "(no result text yet)" : escapeBlock(result.text));
  out.push("", style.bold("--- files ---"));
  for (const [label, path] of Object.entries(files)) {
    out.push(`${label.padEnd(12)}${path}${await exists(path) ? "" : "  (not there)"}`);
  }
  io.out(out.join("\n"));
  return 0;
}

/** The endpoint that served the job, and every move it made (from the session's or mid-turn). */
function endpointText(e: NonNullable<JobRecord["endpoint"]>): string {
  const of = e.poolSize > 1 ? `  (1 of a pool of ${e.poolSize})` : "";
  const moves = (e.moves ?? []).map((m) => `; moved from ${m.from} to ${m.to}: ${m.reason}`);
  return `${e.url}${of}${moves.join("")}`;
}
