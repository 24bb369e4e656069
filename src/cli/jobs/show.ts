import { stat } from "node:fs/promises";
import { readFileHead } from "../../platform/file_ends.ts";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { folderReader } from "../../engines/registry.ts";
import { costOf } from "../../jobs/spend/cost.ts";
import { JOB_FILES } from "../../jobs/job_folder.ts";
import { mayHoldReview } from "../../jobs/record.ts";
import { summaryLines, summaryRows } from "../../jobs/summary_rows.ts";
import { escapeBlock } from "../../platform/plain_text.ts";
import { type CliIo, type JobsContext, noMoreArguments, resolveJobId, styleFor } from "./common.ts";

const HEAD_CHARS = 2000;

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
  const view = await (await ctx.manager()).get(id);
  const { record } = view;
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
  // The job's rows as the replies have them (jobs/summary_rows.ts), its state in colour.
  const out = summaryLines(
    summaryRows(view, Date.now(), ctx.settings.pricing),
    "terminal",
    (row, text) => row.label === "state" ? style.state(record.state, text) : text,
  );
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
