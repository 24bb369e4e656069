/**
 * What delegate_start, delegate_followup, delegate_status, delegate_result and delegate_run
 * share: starting a job from a call's arguments, waiting as asked (with progress), and the
 * reply for a job that ended or still runs.
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { JobView } from "../jobs/manager.ts";
import { join } from "node:path";
import { isTerminal, type JobChecks, mayHoldReview } from "../jobs/record.ts";
import { repoIdOf } from "../jobs/repo_id.ts";
import { AUTO, autoRoute } from "./auto_model.ts";
import { DelegateError } from "../errors.ts";
import { failedOutput } from "../jobs/verify_words.ts";
import { escapeBlock, escapeLine, quoteBlock } from "../platform/plain_text.ts";
import { readReview, reviewSection } from "../review/review_file.ts";
import { callAgent, withAgent } from "./agent_args.ts";
import { projectFallback } from "../agents/project_limits.ts";
import { residentFallbacks } from "../jobs/residency.ts";
import { allowedDir, allowedDirs, existingFiles, readPrompt } from "./inputs.ts";
import { markRead } from "../jobs/unread.ts";
import { worktreeRequest } from "./isolation_args.ts";
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
 * carries the job's end is its result read (delivered).
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
  await delivered(deps, view);
  return reply;
}

/**
 * The orchestrator has a job's end (a reply that carries it, a task result collected, a cancel
 * it asked for): it is no longer unread (jobs/unread.ts), nor are the members of its panel
 * that ended. Never fails a reply: a mark that cannot be removed only leaves a notice.
 */
export async function delivered(deps: ToolDeps, view: JobView): Promise<void> {
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

/** Everything delegate_start and delegate_run do before the job exists, then the start. */
export async function startJob(deps: ToolDeps, call: RunArgs): Promise<JobView> {
  const s = deps.resolved.settings;
  const prompt = await readPrompt(call, deps.serverCwd);
  const agent = call.agent === undefined ? undefined : await callAgent(deps, call.agent);
  const { args, notes } = agent ? await withAgent(deps, agent, call) : { args: call, notes: [] };
  const cwd = await allowedDir(
    args.cwd ?? deps.serverCwd,
    deps.serverCwd,
    args.cwd === undefined ? "cwd (the server's own, used when a call names none)" : "cwd",
    deps.workdirs,
  );
  const addDirs = await allowedDirs(args.add_dirs ?? [], cwd, deps.workdirs);
  const engine = args.engine ?? s.defaultEngine;
  const { manager, models, catalog } = await deps.runtime();
  const repo = await repoIdOf(cwd);
  const route = args.model?.trim() === AUTO
    ? await autoRoute(
      s,
      manager.store.stateDir,
      { repo, agent: agent?.name, engine },
      (model, backend) => models.staysLocal(model, backend),
    )
    : undefined;
  const target = await models.choose({
    engine,
    model: route ? route.model : args.model,
    backend: args.backend ??
      (route?.backend !== undefined && models.runsOn(engine, route.backend)
        ? route.backend
        : undefined),
    files: args.files,
    allowedTools: args.allowed_tools,
  });
  const named = args.model !== undefined || route !== undefined;
  if (!named) notes.push(...projectDefaultNotes(deps, target.model));
  // An agent's fallback models pass the allowed list like any model; the others are left out.
  // A project's agent may also move work only among the models the user chose.
  const own = agent
    ? projectFallback(agent, target.model, deps.resolved.userModels)
    : { kept: [] as string[] };
  if (own.note) notes.push(own.note);
  const allowed = own.kept.filter((m) => catalog.isAllowed(m));
  const dropped = own.kept.filter((m) => !catalog.isAllowed(m));
  if (dropped.length > 0) {
    notes.push(
      `agent "${agent!.name}"'s fallback model${dropped.length === 1 ? "" : "s"} ` +
        `${dropped.map((m) => `"${m}"`).join(", ")} ${dropped.length === 1 ? "is" : "are"} not ` +
        "in the allowed list and left out",
    );
  }
  // Fallbacks run on the job's backend, already judged: only their own place is left to judge.
  const placed = await Promise.all(
    allowed.map(async (name) => ({ name, cloud: await models.runsOnCloud(name, target.backend) })),
  );
  const resident = residentFallbacks(s.residency, placed, agent?.name);
  if (resident.note) notes.push(resident.note);
  const fallback = resident.kept;
  const cloudModels = [
    ...(target.cloud ? [target.model] : []),
    ...placed.filter((m) => m.cloud && fallback.includes(m.name)).map((m) => m.name),
  ];
  const files = args.files ? await existingFiles(args.files, cwd) : undefined;
  const isolation = await worktreeRequest(
    args.isolation ?? s.defaultIsolation,
    args.include_uncommitted,
    cwd,
    manager.store.stateDir,
  );
  return await manager.start({
    prompt,
    engine,
    ...(target.backend !== undefined ? { backend: target.backend } : {}),
    model: target.model,
    cwd,
    // What the worktree may carry and commit follows the same secret-file policy as reads.
    ...(isolation ? { isolation: { ...isolation, allowSecretFiles: s.allowSecretFiles } } : {}),
    options: {
      permissionMode: args.permission_mode ?? s.defaultPermissionMode,
      ...(args.allowed_tools ? { allowedTools: args.allowed_tools } : {}),
      ...(args.disallowed_tools ? { disallowedTools: args.disallowed_tools } : {}),
      ...(args.append_system_prompt !== undefined
        ? { appendSystemPrompt: args.append_system_prompt }
        : {}),
      ...(args.max_turns !== undefined ? { maxTurns: args.max_turns } : {}),
      ...(args.effort !== undefined ? { effort: args.effort } : {}),
      addDirs,
      ...(files ? { files } : {}),
    },
    ...(agent ? { agent: agent.name } : {}),
    ...(notes.length > 0 ? { warnings: notes } : {}),
    checks: callChecks(call, agent),
    repo,
    // This session's project: the result is unread there until it reaches the orchestrator.
    project: deps.serverCwd,
    ...(route ? { modelChoice: route.reason } : {}),
    ...(fallback.length > 0 ? { fallback } : {}),
    ...(cloudModels.length > 0 ? { cloudModels } : {}),
  });
}

/**
 * The `warning:` of a job that runs on the default model while the project file asked for
 * another that it may not choose (settings/load.ts); empty otherwise.
 */
function projectDefaultNotes(deps: ToolDeps, model: string): string[] {
  return deps.resolved.problems
    .filter((p) => p.layer === "project" && p.key === "defaultModel")
    .map((p) =>
      `the project file ${p.where} sets defaultModel ${p.reason}; this job runs on "${model}"`
    );
}

/** What the server checks after the turn, and the job's budgets: the call's, else the agent's. */
export function callChecks(
  call: Pick<RunArgs, "verify" | "verify_rounds" | "budget_tokens" | "budget_usd">,
  agent?: { verify?: string[]; verifyRounds?: number },
  inherited?: JobChecks,
): JobChecks {
  const verify = call.verify === undefined
    ? agent?.verify
    : typeof call.verify === "string"
    ? [call.verify]
    : call.verify;
  if (call.verify_rounds !== undefined && !verify?.length && !inherited?.verify?.length) {
    throw new DelegateError(
      "Cannot use verify_rounds without verify: give the command(s) the server should run " +
        'after the turn, e.g. verify: "npm test"',
    );
  }
  const rounds = call.verify_rounds ??
    (call.verify === undefined ? agent?.verifyRounds : undefined);
  return {
    ...(verify?.length ? { verify } : {}),
    ...(rounds !== undefined ? { verifyRounds: rounds } : {}),
    ...(call.budget_tokens !== undefined ? { budgetTokens: call.budget_tokens } : {}),
    ...(call.budget_usd !== undefined ? { budgetUsd: call.budget_usd } : {}),
  };
}
