/**
 * A new session's first turn decided (issue 33, item 1): a TurnRequest in, a NewTurn out, the
 * same whichever front end asks. Here the settings' defaults fill what the request leaves out,
 * a named agent's preset is applied (the request may only narrow it), `model: "auto"` is
 * routed, the model is chosen under the user's policy, the agent's fallback models are kept
 * to the allowed list and the residency, the checks and budgets are set and the worktree is
 * planned. The front end only turns its arguments into the request and words the reply.
 */
import type { Agent } from "../agents/agent.ts";
import { applyAgent } from "../agents/apply.ts";
import { projectFallback } from "../agents/project_limits.ts";
import type { NewTurn } from "../jobs/manager.ts";
import { repoIdOf } from "../jobs/repo_id.ts";
import { residentFallbacks } from "../jobs/residency.ts";
import { problemReason } from "../settings/load.ts";
import { AUTO, autoRoute } from "./auto_model.ts";
import { requestChecks } from "./checks.ts";
import { allowedDir, allowedDirs, existingFiles } from "./inputs.ts";
import { worktreeRequest } from "./isolation.ts";
import type { IntakeHost, TurnRequest } from "./turn_request.ts";

/**
 * `req` with `agent` applied, and what of a project's agent was not used (for the job's
 * `warning:` lines); throws a DelegateError when the request would widen the agent.
 */
export async function withAgent<R extends Omit<TurnRequest, "agent">>(
  host: IntakeHost,
  agent: Agent,
  req: R,
): Promise<{ req: R; notes: string[] }> {
  const applied = applyAgent(agent, req, await host.agentPolicy());
  return {
    req: {
      ...req,
      engine: applied.engine,
      model: applied.model,
      allowedTools: applied.allowedTools,
      disallowedTools: applied.disallowedTools,
      permissionMode: applied.permissionMode,
      effort: applied.effort,
      appendSystemPrompt: applied.appendSystemPrompt,
    },
    notes: applied.notes,
  };
}

/** Everything decided before a job exists; throws a DelegateError when it cannot start. */
export async function newTurn(
  host: IntakeHost,
  prompt: string,
  request: TurnRequest,
): Promise<NewTurn> {
  const s = host.resolved.settings;
  const agent = request.agent === undefined ? undefined : await host.agent(request.agent);
  const { req, notes } = agent
    ? await withAgent(host, agent, request)
    : { req: request, notes: [] as string[] };
  const cwd = await allowedDir(
    req.cwd ?? host.baseDir,
    host.baseDir,
    req.cwd === undefined ? "cwd (the server's own, used when a call names none)" : "cwd",
    host.workdirs,
  );
  const addDirs = await allowedDirs(req.addDirs ?? [], cwd, host.workdirs);
  const engine = req.engine ?? s.defaultEngine;
  const { manager, models, catalog } = await host.runtime();
  const repo = await repoIdOf(cwd);
  const route = req.model?.trim() === AUTO
    ? await autoRoute(
      s,
      manager.store.stateDir,
      { repo, agent: agent?.name, engine },
      (model, backend) => models.staysLocal(model, backend),
    )
    : undefined;
  const target = await models.choose({
    engine,
    model: route ? route.model : req.model,
    backend: req.backend ??
      (route?.backend !== undefined && models.runsOn(engine, route.backend)
        ? route.backend
        : undefined),
    files: req.files,
    allowedTools: req.allowedTools,
  });
  const named = req.model !== undefined || route !== undefined;
  if (!named) notes.push(...projectDefaultNotes(host, target.model));
  // An agent's fallback models pass the allowed list like any model; the others are left out.
  // A project's agent may also move work only among the models the user chose.
  const own = agent
    ? projectFallback(agent, target.model, host.resolved.userModels)
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
  const files = req.files ? await existingFiles(req.files, cwd) : undefined;
  const isolation = await worktreeRequest(
    req.isolation ?? s.defaultIsolation,
    req.includeUncommitted,
    cwd,
    manager.store.stateDir,
  );
  return {
    prompt,
    engine,
    ...(target.backend !== undefined ? { backend: target.backend } : {}),
    model: target.model,
    cwd,
    // What the worktree may carry and commit follows the same secret-file policy as reads.
    ...(isolation ? { isolation: { ...isolation, allowSecretFiles: s.allowSecretFiles } } : {}),
    options: {
      permissionMode: req.permissionMode ?? s.defaultPermissionMode,
      ...(req.allowedTools ? { allowedTools: [...req.allowedTools] } : {}),
      ...(req.disallowedTools ? { disallowedTools: [...req.disallowedTools] } : {}),
      ...(req.appendSystemPrompt !== undefined
        ? { appendSystemPrompt: req.appendSystemPrompt }
        : {}),
      ...(req.maxTurns !== undefined ? { maxTurns: req.maxTurns } : {}),
      ...(req.effort !== undefined ? { effort: req.effort } : {}),
      addDirs,
      ...(files ? { files } : {}),
    },
    ...(agent ? { agent: agent.name } : {}),
    ...(notes.length > 0 ? { warnings: notes } : {}),
    checks: requestChecks(request, agent),
    repo,
    // The asking session's project: the result is unread there until it reaches it.
    ...(host.project !== undefined ? { project: host.project } : {}),
    ...(route ? { modelChoice: route.reason } : {}),
    ...(fallback.length > 0 ? { fallback } : {}),
    ...(cloudModels.length > 0 ? { cloudModels } : {}),
  };
}

/**
 * The `warning:` of a job that runs on the default model while the project file asked for
 * another that it may not choose (settings/load.ts); empty otherwise.
 */
function projectDefaultNotes(host: IntakeHost, model: string): string[] {
  return host.resolved.problems
    .filter((p) => p.layer === "project" && p.key === "defaultModel")
    .map((p) =>
      `the project file ${p.where} sets defaultModel ${
        problemReason(p)
      }; this job runs on "${model}"`
    );
}
