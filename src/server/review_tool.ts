/**
 * delegate_review: the server computes the diff (uncommitted changes, or base...HEAD), fits it
 * to the reviewers' context, and starts a read-only job as the `reviewer` agent (built in, or
 * the user's or project's file of that name) that must answer in findings JSON; with `models`
 * or `agents`, a panel of 2-5 such jobs on the same diff (src/review/start.ts). The reply of the
 * finished review (here or from delegate_result) lists the findings that point into the diff,
 * merged across a panel.
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { z } from "zod";
import { type ReviewHost, startReview } from "../review/start.ts";
import { allowedDir } from "../intake/inputs.ts";
import { intakeOf } from "./intake_host.ts";
import { markDelivered, replyAfterWait } from "./job_replies.ts";
import { panelReply, waitForPanel } from "./panel_reply.ts";
import type { shapes } from "./shapes.ts";
import type { ToolDeps, ToolExtra } from "./tool_deps.ts";

export type ReviewArgs = z.infer<z.ZodObject<typeof shapes.review>>;

/** What a review needs of this server: the intake's host and its directory policy. */
export function reviewHost(deps: ToolDeps): ReviewHost {
  return {
    ...intakeOf(deps),
    allowedDir: (path, what) => allowedDir(path, deps.serverCwd, what, deps.workdirs),
  };
}

export function reviewHandler(deps: ToolDeps) {
  return async (args: ReviewArgs, extra: ToolExtra): Promise<CallToolResult> => {
    const cwd = await allowedDir(
      args.cwd ?? deps.serverCwd,
      deps.serverCwd,
      args.cwd === undefined ? "cwd (the server's own, used when a call names none)" : "cwd",
      deps.workdirs,
    );
    const started = await startReview(reviewHost(deps), {
      cwd,
      base: args.base,
      focus: args.focus,
      model: args.model,
      engine: args.engine,
      agent: args.agent,
      models: args.models,
      agents: args.agents,
      minAgreement: args.min_agreement,
    });
    if (started.views.length === 1) {
      return await replyAfterWait(
        deps,
        started.views[0]!,
        args.wait_seconds,
        extra,
        "Review started.\n",
      );
    }
    const views = await waitForPanel(deps, started.views, args.wait_seconds, extra);
    const reply = await panelReply(deps, started.record, views, "Review panel started.\n");
    for (const view of views) await markDelivered(deps, view);
    return reply;
  };
}
