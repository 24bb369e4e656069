/**
 * One named handler per tool: each takes the call's arguments and gives the tool's reply.
 * tools.ts registers them with their names, descriptions and input shapes.
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { z } from "zod";
import type { JobManager } from "../jobs/manager.ts";
import { isErrorState, isTerminal } from "../jobs/record.ts";
import { usageHistory } from "../jobs/ledger/usage_ledger.ts";
import { renderUsage, savingsSection, verifiedSection } from "../jobs/ledger/usage_report.ts";
import { dailyBudgetLines } from "../jobs/spend/daily_budget.ts";
import { startFollowup } from "../intake/followup.ts";
import { readPrompt } from "../intake/inputs.ts";
import { intakeOf } from "./intake_host.ts";
import { jobReply, markDelivered, replyAfterWait, startJob, waitFor } from "./job_replies.ts";
import { followupRequest } from "./turn_args.ts";
import { LIST_LIMIT, renderList } from "./list.ts";
import { allUnread } from "../jobs/unread.ts";
import { renderModels } from "./models_report.ts";
import { queuePlaces } from "./queue_lines.ts";
import { activityLines, pollHint, summary } from "./render.ts";
import type { shapes, transcriptShape } from "./shapes.ts";
import { statusMany } from "./status_many.ts";
import { textResult, type ToolDeps, type ToolExtra } from "./tool_deps.ts";

type ArgsOf<K extends keyof typeof shapes> = z.infer<z.ZodObject<(typeof shapes)[K]>>;
type Handler<A> = (args: A, extra: ToolExtra) => Promise<CallToolResult>;

/** ollama_models: the endpoint, policy, models, delegate environment and settings. */
export function modelsHandler(deps: ToolDeps): Handler<Record<string, never>> {
  return async () => {
    const report = await renderModels(deps);
    return textResult(report.text, report.isError);
  };
}

/** delegate_start: a new session's first turn. */
export function startHandler(deps: ToolDeps): Handler<ArgsOf<"start">> {
  return async (args, extra) => {
    const view = await startJob(deps, args);
    return await replyAfterWait(deps, view, args.wait_seconds, extra, "Delegated task started.\n");
  };
}

/** delegate_followup: the next turn of a session, with its restrictions unless overridden. */
export function followupHandler(deps: ToolDeps): Handler<ArgsOf<"followup">> {
  return async (args, extra) => {
    if ((args.job_id === undefined) === (args.session_id === undefined)) {
      return textResult("Cannot follow up: pass exactly one of job_id and session_id", true);
    }
    const prompt = await readPrompt(args, deps.serverCwd);
    const view = await startFollowup(intakeOf(deps), prompt, followupRequest(args));
    return await replyAfterWait(deps, view, args.wait_seconds, extra, "Follow-up started.\n");
  };
}

/** delegate_status: state and recent activity, after an optional wait. */
export function statusHandler(deps: ToolDeps): Handler<ArgsOf<"status">> {
  return async (args, extra) => {
    if (args.job_id === undefined || args.job_ids !== undefined || args.wait !== undefined) {
      return await statusMany(deps, args, extra);
    }
    let view = await (await deps.runtime()).manager.get(args.job_id);
    view = await waitFor(deps, view, args.wait_seconds, extra);
    const lines = activityLines(view.activities, args.progress_limit ?? 15);
    const footer = isTerminal(view.record.state)
      ? `Finished (${view.record.state}). Collect the output with delegate_result({ job_id: "${view.record.id}" }).`
      : pollHint(view.record.id);
    return textResult(
      `${summary(view, Date.now(), deps.resolved.settings.pricing)}\nrecent activity:\n${
        lines.length > 0 ? lines.join("\n") : "  (no activity recorded yet)"
      }\n${footer}`,
      isErrorState(view.record.state),
    );
  };
}

/** delegate_result: the output of a job that ended, after an optional wait. */
export function resultHandler(deps: ToolDeps): Handler<ArgsOf<"result">> {
  return async (args, extra) => {
    const started = await (await deps.runtime()).manager.get(args.job_id);
    const view = await waitFor(deps, started, args.wait_seconds, extra, { wholePanel: true });
    const reply = await jobReply(deps, view);
    await markDelivered(deps, view);
    return reply;
  };
}

/** delegate_cancel: stops a job and every process it started. */
export function cancelHandler(deps: ToolDeps): Handler<ArgsOf<"cancel">> {
  return async (args) => {
    const { view, wasRunning } = await (await deps.runtime()).manager.cancel(args.job_id);
    // The orchestrator stopped it: its end is no news.
    if (wasRunning) await markDelivered(deps, view);
    if (!wasRunning) {
      return textResult(
        `Job ${view.record.id} was already ${view.record.state}; nothing to cancel.`,
      );
    }
    return textResult(
      `Cancelled job ${view.record.id} and every process it started.\n${
        summary(view, Date.now(), deps.resolved.settings.pricing)
      }`,
    );
  };
}

/** delegate_list: jobs newest first, grouped by session. */
export function listHandler(deps: ToolDeps): Handler<ArgsOf<"list">> {
  return async (args) => {
    const { manager } = await deps.runtime();
    const page = await manager.page({ state: args.state, limit: args.limit ?? LIST_LIMIT });
    return textResult(
      renderList(
        manager.store.stateDir,
        page,
        args.state,
        deps.resolved.settings.pricing,
        await queuePlaces(manager, page.records),
        await allUnread(manager.store.stateDir),
      ),
    );
  };
}

/** delegate_transcript: one page of what a job did; the pager loads at the first call. */
export function transcriptHandler(
  jobs: () => Promise<JobManager>,
): Handler<z.infer<z.ZodObject<typeof transcriptShape>>> {
  return async (args) => {
    const { transcriptReply } = await import("./transcript_page.ts");
    return textResult(await transcriptReply(await jobs(), args));
  };
}

/** delegate_usage: tokens and cost per model and per day. */
export function usageHandler(deps: ToolDeps): Handler<ArgsOf<"usage">> {
  return async (args) => {
    const { manager } = await deps.runtime();
    const { records } = await manager.list();
    // Pruned jobs count too: their usage outlives their folders (jobs/ledger/usage_ledger.ts).
    const { entries } = await usageHistory(manager.store, records);
    const usage = renderUsage(entries, deps.resolved.settings.pricing, { days: args.days ?? 30 });
    const s = deps.resolved.settings;
    const verified = await verifiedSection(manager.store.stateDir, deps.serverCwd, args.days ?? 30);
    const saved = await savingsSection(manager.store.stateDir, s, args.days ?? 30);
    const daily = await dailyBudgetLines(manager.store.stateDir, {
      usd: s.dailyBudgetUsd,
      tokens: s.dailyBudgetTokens,
    });
    const parts = [
      usage,
      ...(saved ? [saved] : []),
      ...(verified ? [verified] : []),
      ...(daily.length ? [daily.join("\n")] : []),
    ];
    return textResult(parts.join("\n\n"));
  };
}
