import { cutTo } from "../platform/text_cut.ts";
import type { Activity } from "../engines/types.ts";
import type { JobView } from "../jobs/manager.ts";
import { summaryLines, summaryRows } from "../jobs/summary_rows.ts";
import type { Price } from "../settings/types.ts";
import { escapeBlock, escapeLine, flattenLine } from "../platform/plain_text.ts";

/**
 * The summary block shared by every job reply: the job's rows (jobs/summary_rows.ts) as
 * `label: value` lines. Orchestrators, hooks and scripts read them, so a line keeps its label
 * and its place, and new facts come as rows of their own.
 */
export function summary(
  view: JobView,
  now = Date.now(),
  /** The pricing table, for the spend against a `budget_usd`. */
  pricing: Readonly<Record<string, Price>> = {},
): string {
  return summaryLines(summaryRows(view, now, pricing), "reply").join("\n");
}

/** A command or a path, escaped on one line (its line breaks shown), then cut to `max`. */
function cut(text: string, max: number): string {
  return cutTo(escapeLine(text.trim()), max);
}

/** Prose (the model's words, an error), flattened to one line, then cut to `max`. */
function cutProse(text: string, max: number): string {
  return cutTo(flattenLine(text), max);
}

/** `  [tool] Bash: ls` lines: one activity a line, its kind in brackets first, to scan or grep. */
export function activityLines(activities: readonly Activity[], limit: number): string[] {
  return activities.slice(-limit).map((a) => {
    switch (a.kind) {
      case "tool":
        return `  [tool] ${cut(a.name, 80)}${a.detail ? `: ${cutProse(a.detail, 160)}` : ""}`;
      case "text":
        return `  [text] ${cutProse(a.text, 400)}`;
      case "error":
        return `  [error] ${cutProse(a.text, 400)}`;
    }
  });
}

/**
 * The output body: the text, cut at `max` with the path of the whole. Given the job's id, the
 * cut note also points at delegate_transcript, where the orchestrator can check the tool
 * calls behind the text without reading the whole file into its context. The model's lines
 * stay lines (it comes after the block's `--- output ---` line, so it cannot extend the
 * block); terminal controls, lone CRs and line separators in it are escaped.
 */
export function outputBody(
  text: string,
  fullLength: number,
  max: number,
  resultPath: string,
  jobId?: string,
): string {
  if (fullLength === 0 || text.trim() === "") return "(delegated session produced no text output)";
  if (fullLength <= max) return escapeBlock(text);
  const shown = escapeBlock(text.slice(0, max));
  if (jobId === undefined) {
    return `${shown}\n\n... [truncated at ${max} chars; full output: ${resultPath}]`;
  }
  return `${shown}\n\n... [truncated at ${max} of ${fullLength} chars; full output: ` +
    `${resultPath}. To check the tool calls and results behind it, page through ` +
    `delegate_transcript({ job_id: "${jobId}" })]`;
}

/** What to do about a job still running: wait on it, not poll in a tight loop. */
export function pollHint(id: string): string {
  return `Still running. Wait for it with delegate_status({ job_id: "${id}", wait_seconds: 60 }) ` +
    "(up to 600) rather than polling in a loop.";
}

export function followupHint(id: string): string {
  return `Continue this conversation with delegate_followup({ job_id: "${id}", prompt: "..." }).`;
}
