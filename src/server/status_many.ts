/**
 * delegate_status for several jobs at once (`job_ids`): an orchestrator that fanned work out
 * waits for the first (`wait: "any"`) or every one (`"all"`) to end in one call, instead of
 * one blocking call per job. Jobs of other servers sharing the state dir are waited on too:
 * the manager reads their records from disk.
 *
 * An id that names no job gets its own block with the error, so that one typo does not hide
 * the others; only a list in which no id names a job is an error.
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { JobView } from "../jobs/manager.ts";
import { isTerminal } from "../jobs/record.ts";
import { escapeLine } from "../platform/plain_text.ts";
import { activityLines, summary } from "./render.ts";
import { progressOf } from "./progress.ts";
import {
  progressEvery,
  textResult,
  type ToolDeps,
  toolErrorText,
  type ToolExtra,
} from "./tool_deps.ts";

export interface StatusArgs {
  job_id?: string | undefined;
  job_ids?: string[] | undefined;
  wait?: "any" | "all" | undefined;
  wait_seconds?: number | undefined;
  progress_limit?: number | undefined;
}

/** Activity lines per running job when a call names none: the list stays readable. */
const DEFAULT_ACTIVITY = 3;

type Entry = { id: string; view: JobView } | { id: string; error: string };

/** delegate_status with job_ids, and the calls that mix up job_id, job_ids and wait. */
export async function statusMany(
  deps: ToolDeps,
  args: StatusArgs,
  extra: ToolExtra,
): Promise<CallToolResult> {
  if ((args.job_id === undefined) === (args.job_ids === undefined)) {
    return textResult(
      "Cannot show status: pass exactly one of job_id (one job) and job_ids (a list of 1-20)",
      true,
    );
  }
  if (args.job_ids === undefined) {
    return textResult(
      `Cannot show status: wait ("${args.wait}") goes with job_ids; for one job, ` +
        "wait_seconds alone waits until it ends",
      true,
    );
  }
  const ids = [...new Map(args.job_ids.map((id) => [id.toLowerCase(), id])).values()];
  if (ids.length === 0) {
    return textResult("Cannot show status: job_ids is empty; list 1 to 20 job ids", true);
  }
  const { manager } = await deps.runtime();
  const resolved: Entry[] = await Promise.all(ids.map((id) =>
    manager.get(id).then(
      (view) => ({ id, view }),
      (e) => ({ id, error: toolErrorText(e) }),
    )
  ));
  // A prefix and the whole id of one job are one job: one block.
  const seen = new Set<string>();
  const entries = resolved.filter((e) =>
    !("view" in e) || (!seen.has(e.view.record.id) && !!seen.add(e.view.record.id))
  );
  const known = entries.filter((e): e is { id: string; view: JobView } => "view" in e);
  if (known.length === 0) {
    return textResult(entries.map((e) => "error" in e ? e.error : "").join("\n"), true);
  }
  const mode = args.wait ?? "any";
  const seconds = Math.min(args.wait_seconds ?? deps.resolved.settings.defaultWaitSeconds, 600);
  const running = known.filter((e) => !isTerminal(e.view.record.state));
  const waits = seconds > 0 && running.length > 0 &&
    (mode === "all" || running.length === known.length);
  const started = Date.now();
  if (waits) await waitForJobs(deps, known, running, mode, seconds, extra);
  const finished = known.filter((e) => isTerminal(e.view.record.state));
  const first = waits && finished.length === 0
    ? `waited ${Math.round((Date.now() - started) / 1000)} s: none finished`
    : `${finished.length} of ${known.length} finished` +
      (finished.length > 0 ? `: ${finished.map((e) => e.view.record.id).join(", ")}` : "");
  const unknown = entries.length - known.length;
  const blocks = entries.map((e) => block(e, args.progress_limit ?? DEFAULT_ACTIVITY));
  return textResult(
    [
      first + (unknown > 0 ? ` (${unknown} id${unknown === 1 ? "" : "s"} unknown, below)` : ""),
      ...blocks,
      footer(known),
    ].join("\n\n"),
  );
}

/**
 * Waits on every running job at once, until one ends ("any") or all do ("all"), the time is
 * up or the call is cancelled; the views in `known` are replaced as the waits return.
 */
async function waitForJobs(
  deps: ToolDeps,
  known: Array<{ id: string; view: JobView }>,
  running: Array<{ id: string; view: JobView }>,
  mode: "any" | "all",
  seconds: number,
  extra: ToolExtra,
): Promise<void> {
  const { manager } = await deps.runtime();
  const enough = new AbortController();
  const signal = AbortSignal.any([extra.signal, enough.signal]);
  const report = progressOf(extra, seconds);
  const progress = report && setInterval(() => {
    const done = known.filter((e) => isTerminal(e.view.record.state)).length;
    report((s) => `${done} of ${known.length} jobs finished, ${s}s`);
  }, progressEvery(deps));
  try {
    await Promise.all(running.map(async (entry) => {
      entry.view = await manager.wait(entry.view.record.id, seconds, { signal });
      if (mode === "any" && isTerminal(entry.view.record.state)) enough.abort();
    }));
  } finally {
    clearInterval(progress);
  }
}

/** One job's summary; a running one adds its latest activity. */
function block(entry: Entry, activity: number): string {
  if ("error" in entry) {
    const id = escapeLine(entry.id.slice(0, 80));
    return `job_id:     ${id}\nerror:      ${escapeLine(entry.error)}`;
  }
  const { view } = entry;
  if (isTerminal(view.record.state)) return summary(view);
  const lines = activityLines(view.activities, activity);
  return lines.length > 0
    ? `${summary(view)}\nrecent activity:\n${lines.join("\n")}`
    : summary(view);
}

function footer(known: Array<{ id: string; view: JobView }>): string {
  const running = known.filter((e) => !isTerminal(e.view.record.state));
  const parts: string[] = [];
  if (running.length < known.length) {
    parts.push('Collect a finished job\'s output with delegate_result({ job_id: "..." }).');
  }
  if (running.length > 0) {
    const ids = running.map((e) => `"${e.view.record.id}"`).join(", ");
    parts.push(
      `Wait for the rest with delegate_status({ job_ids: [${ids}], wait_seconds: 60 }) ` +
        "(up to 600) rather than polling in a loop.",
    );
  }
  return parts.join(" ");
}
