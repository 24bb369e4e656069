/**
 * What delegate_start, delegate_followup, delegate_status, delegate_result and delegate_run
 * share: starting a job from a call's arguments, waiting as asked (with progress), and the
 * reply for a job that ended or still runs.
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { JobView } from "../jobs/manager.ts";
import { join } from "node:path";
import { isTerminal, mayHoldReview } from "../jobs/record.ts";
import { failedOutput } from "../jobs/checks/verify_words.ts";
import { escapeBlock, escapeLine, quoteBlock } from "../platform/plain_text.ts";
import { readReview, reviewSection } from "../review/review_file.ts";
import { readPrompt } from "../intake/inputs.ts";
import { newTurn } from "../intake/new_turn.ts";
import { markRead } from "../jobs/unread.ts";
import { intakeOf } from "./intake_host.ts";
import { turnRequest } from "./turn_args.ts";
import { panelReply, panelViews, waitForPanel } from "./panel_reply.ts";
import { activityLines, followupHint, outputBody, pollHint, summary } from "./render.ts";
import type { RunArgs } from "./run_tool.ts";
import { progressOf } from "./progress.ts";
import { progressEvery, textResult, type ToolDeps, type ToolExtra } from "./tool_deps.ts";

/** Waits up to `seconds` (the setting's default when absent), with progress when asked for. */
export async function waitFor(
  deps: ToolDeps,
  view: JobView,
  seconds: number | undefined,
  extra: ToolExtra,
  options: { wholePanel?: boolean } = {},
): Promise<JobView> {
  const wait = seconds ?? deps.resolved.settings.defaultWaitSeconds;
  // A review panel's result is all its reviewers' merged: delegate_result waits for them all.
  const panel = options.wholePanel ? await panelOf(deps, view) : undefined;
  if (panel) {
    const views = await waitForPanel(deps, await panelViews(deps, panel), wait, extra);
    return views.find((v) => v.record.id === view.record.id) ?? view;
  }
  if (wait <= 0 || isTerminal(view.record.state)) return view;
  const report = progressOf(extra, wait);
  const { manager } = await deps.runtime();
  return await manager.wait(view.record.id, wait, {
    signal: extra.signal,
    tickMs: progressEvery(deps),
    tick: report && ((v) => {
      const last = v.activities.at(-1);
      const doing = last ? activityLines([last], 1)[0]!.trim() : v.record.state;
      report((s) => `job ${v.record.id} ${v.record.state}, ${s}s: ${doing}`);
    }),
  });
}

/**
 * A job's reply: its output when it ended, else its summary and recent activity; `header`
 * introduces a job that is still running.
 */
export async function jobReply(
  deps: ToolDeps,
  view: JobView,
  header = "",
): Promise<CallToolResult> {
  const panel = await panelOf(deps, view);
  if (panel) return await panelReply(deps, panel, await panelViews(deps, panel), header);
  const r = view.record;
  if (!isTerminal(r.state)) {
    const tail = activityLines(view.activities, 5);
    return textResult(
      `${header}${summary(view, Date.now(), deps.resolved.settings.pricing)}\n` +
        (tail.length > 0 ? `recent activity:\n${tail.join("\n")}\n` : "") +
        pollHint(r.id),
    );
  }
  const max = deps.resolved.settings.maxInlineChars;
  const { store } = await deps.runtime();
  const { text: out, length } = await store.readResultText(r.id, max);
  const body = outputBody(out, length, max, store.resultPath(r.id), r.id);
  const review = r.state === "completed" && mayHoldReview(r)
    ? await reviewSection(store.dirOf(r.id), store.resultPath(r.id), max)
    : undefined;
  if (review) {
    return textResult(
      `${
        summary(view, Date.now(), deps.resolved.settings.pricing)
      }\n--- review ---\n${review.text}\n\n${followupHint(r.id)}`,
      review.isError,
    );
  }
  if (r.state === "completed") {
    return textResult(
      `${summary(view, Date.now(), deps.resolved.settings.pricing)}\n--- output ---\n${body}\n\n${
        followupHint(r.id)
      }`,
    );
  }
  const failed = failedOutput(r);
  const evidence = failed
    ? `\n--- verify output (${escapeLine(failed.head)}; run by the server) ---\n` +
      `${failed.quoted ? quoteBlock(failed.text) : escapeBlock(failed.text)}\n[whole output: ${
        join(store.dirOf(r.id), `verify-${r.verification!.rounds.length}.log`)
      }]`
    : "";
  return textResult(
    `${
      summary(view, Date.now(), deps.resolved.settings.pricing)
    }${evidence}\n--- partial output ---\n${body}`,
    true,
  );
}

/** The review record of a job that is a member of a review panel; undefined for others. */
async function panelOf(deps: ToolDeps, view: JobView) {
  if (!mayHoldReview(view.record)) return undefined;
  const { store } = await deps.runtime();
  const record = await readReview(store.dirOf(view.record.id));
  return record?.panel ? record : undefined;
}

/**
 * Waits as asked, then replies; `header` introduces a job that is still running. A reply that
 * carries the job's end is its result read (markDelivered).
 */
export async function replyAfterWait(
  deps: ToolDeps,
  started: JobView,
  seconds: number | undefined,
  extra: ToolExtra,
  header: string,
): Promise<CallToolResult> {
  const view = await waitFor(deps, started, seconds, extra);
  const reply = await jobReply(deps, view, isTerminal(view.record.state) ? "" : header);
  await markDelivered(deps, view);
  return reply;
}

/**
 * The orchestrator has a job's end (a reply that carries it, a task result collected, a cancel
 * it asked for): it is no longer unread (jobs/unread.ts), nor are the members of its panel
 * that ended. Never fails a reply: a mark that cannot be removed only leaves a notice.
 */
export async function markDelivered(deps: ToolDeps, view: JobView): Promise<void> {
  const { store } = await deps.runtime();
  const panel = await panelOf(deps, view).catch(() => undefined);
  const records = panel
    ? (await panelViews(deps, panel).catch(() => [view])).map((v) => v.record)
    : [view.record];
  for (const r of records) {
    if (!isTerminal(r.state) || r.project === undefined) continue;
    await markRead(store.stateDir, r.project, r.id).catch(() => {});
  }
}

/** delegate_start and delegate_run: the prompt read, the turn decided (src/intake/), started. */
export async function startJob(deps: ToolDeps, call: RunArgs): Promise<JobView> {
  const prompt = await readPrompt(call, deps.serverCwd);
  const turn = await newTurn(intakeOf(deps), prompt, turnRequest(call));
  return await (await deps.runtime()).manager.start(turn);
}
