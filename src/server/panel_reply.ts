/**
 * The replies about a review panel (delegate_review with models or agents): while its
 * reviewers run, where each stands and how to wait for all; once all have ended, the merged
 * findings. Any member's job id names the panel in delegate_result.
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { JobView } from "../jobs/manager.ts";
import { isTerminal } from "../jobs/record.ts";
import { escapeLine } from "../platform/plain_text.ts";
import { reviewOutcome } from "../review/outcome.ts";
import { renderPanel, reviewerLabel } from "../review/panel_render.ts";
import type { ReviewRecord } from "../review/review_file.ts";
import { progressOf } from "./progress.ts";
import { progressEvery, textResult, type ToolDeps, type ToolExtra } from "./tool_deps.ts";

/** The members' views now, in the panel's order. */
export async function panelViews(deps: ToolDeps, record: ReviewRecord): Promise<JobView[]> {
  const { manager } = await deps.runtime();
  return await Promise.all((record.panel?.members ?? []).map((m) => manager.get(m.id)));
}

/**
 * Waits up to `seconds` (the setting's default when absent) for every member to end; the
 * first one still running reports progress when the caller asked for it.
 */
export async function waitForPanel(
  deps: ToolDeps,
  views: readonly JobView[],
  seconds: number | undefined,
  extra: ToolExtra,
): Promise<JobView[]> {
  const wait = seconds ?? deps.resolved.settings.defaultWaitSeconds;
  if (wait <= 0 || views.every((v) => isTerminal(v.record.state))) return [...views];
  const { manager } = await deps.runtime();
  const report = progressOf(extra, wait);
  return await Promise.all(
    views.map((v) =>
      isTerminal(v.record.state) ? v : manager.wait(v.record.id, wait, {
        signal: extra.signal,
        tickMs: progressEvery(deps),
        tick: report &&
          ((now) => report((s) => `review panel: job ${now.record.id} ${now.record.state}, ${s}s`)),
      })
    ),
  );
}

/** The reply about a panel: its merged findings once every reviewer has ended. */
export async function panelReply(
  deps: ToolDeps,
  record: ReviewRecord,
  views: readonly JobView[],
  header = "",
): Promise<CallToolResult> {
  const ids = views.map((v) => v.record.id);
  const lead = ids[0]!;
  if (!views.every((v) => isTerminal(v.record.state))) {
    const rows = views.map((v, i) =>
      `  ${i + 1}. ${
        reviewerLabel({
          id: v.record.id,
          model: v.record.model,
          agent: v.record.agent ?? "reviewer",
        })
      }  job ${v.record.id}  ${escapeLine(v.record.state)}`
    );
    const running = views.filter((v) => !isTerminal(v.record.state)).length;
    return textResult(
      `${header}review panel: ${views.length} reviewers on the same diff, each blind to the ` +
        `others; ${running} still running.\n${rows.join("\n")}\n` +
        `Wait for all with delegate_status({ job_ids: ${JSON.stringify(ids)}, wait: "all", ` +
        `wait_seconds: 300 }), then get the merged findings with delegate_result({ job_id: ` +
        `"${lead}" }).`,
    );
  }
  const runtime = await deps.runtime();
  const outcome = await reviewOutcome(
    { get: (id) => runtime.manager.get(id), store: runtime.store },
    record,
    views,
  );
  const section = renderPanel(outcome, deps.resolved.settings.maxInlineChars);
  const answered = outcome.answers.find((a) => a.ok);
  const followup = answered
    ? `\n\nAsk one reviewer more with delegate_followup({ job_id: "${answered.reviewer.id}", ` +
      'prompt: "..." }).'
    : "";
  return textResult(
    `job_id:     ${lead}\nreview:     a panel of ${ids.length} reviewers, each blind to the ` +
      `others; findings merged\n--- review ---\n${section.text}${followup}`,
    section.isError,
  );
}
